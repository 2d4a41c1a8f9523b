package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func httpGet(url string) (string, int) {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error(), 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode
}

// standInLLM is a local OpenAI-compatible endpoint for the demo, because no
// model is reachable from a fresh machine. It is not a model and does not
// pretend to be one: for a compaction prompt it returns the user's own
// statements from the trimmed range, verbatim, as the "facts"; every other
// prompt gets HTTP 501. Point maintenance.llm at Ollama, vLLM or OpenAI for
// real extraction.
type standInLLM struct {
	srv *http.Server
	url string
}

var userLine = regexp.MustCompile(`(?m)^\[\d+\] user: (.+)$`)

func startStandInLLM() (*standInLLM, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		prompt := req.Messages[len(req.Messages)-1].Content
		if !strings.HasPrefix(prompt, "Trimmed conversation:") && !strings.Contains(prompt, "\nTrimmed conversation:") {
			http.Error(w, "the demo's stand-in endpoint only serves compaction prompts", http.StatusNotImplemented)
			return
		}
		facts := []string{}
		for _, m := range userLine.FindAllStringSubmatch(prompt, -1) {
			if s := strings.TrimSpace(m[1]); strings.Contains(s, " ") && !strings.HasSuffix(s, "?") {
				facts = append(facts, s)
			}
		}
		content, _ := json.Marshal(map[string]any{"facts": facts})
		_ = json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": string(content)}}},
		})
	})
	s := &standInLLM{srv: &http.Server{Handler: mux}, url: fmt.Sprintf("http://%s/v1", ln.Addr())}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *standInLLM) URL() string { return s.url }
func (s *standInLLM) Close()      { _ = s.srv.Close() }
