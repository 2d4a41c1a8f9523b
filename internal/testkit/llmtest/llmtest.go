// Package llmtest is a scripted LLM for tests and the bench: a real local
// HTTP server speaking OpenAI chat completions that answers each window the
// daemon asks (SPEC §13) from a truth table, the labelled corpus, so that
// what the judgment does with the answers can be checked exactly.
//
// It reads the window from the request as any model would (the aspect, the
// numbered lines between the data delimiters), finds its statements in the
// truth, and retires exactly the true pairs among them, reasoning first,
// with `usage` figures (a token per four bytes, so sums are reproducible).
// On demand it answers slowly, with a 500, with garbage, cut short, with a
// body past the client's limit, echoing the caller's key and a secret, or
// naming statements not listed and olders that are not older. It counts
// requests per window content, so tests can say "one request per window"
// and "never asked twice", and it checks every request framed the
// statements as data (Unframed).
package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/llm"
)

// Kind is how the server answers.
type Kind int

const (
	Truthful   Kind = iota // the truth's retirements
	Slow                   // the truth's, after Fault.Delay (or when the caller gives up)
	Status500              // HTTP 500
	Garbage                // a chat completion whose content is prose, no JSON
	Truncated              // a chat completion whose content stops mid-object
	OverLong               // a body past the client's size limit
	EchoSecret             // the truth's, the reasoning quoting the bearer key and Fault.Secret
	NotListed              // the truth's, plus numbers the window did not list
	NotOlder               // the truth's, plus each pair the wrong way round
)

// Fault is how the server answers the requests it applies to.
type Fault struct {
	Kind   Kind
	Delay  time.Duration // Slow
	Secret string        // EchoSecret
}

// Confidence is what the server gives each retirement.
const Confidence = 0.9

// Server is the scripted LLM. Its methods are safe for concurrent use.
type Server struct {
	srv   *httptest.Server
	truth *Truth

	mu        sync.Mutex
	hook      func(prompt string)
	fault     Fault
	next      []Fault // for the next requests, before fault
	asked     map[string]int
	requests  int
	unmatched int
	unframed  int
	usage     llm.Usage
}

// Start starts a server answering from truth; Close stops it.
func Start(truth *Truth) *Server {
	s := &Server{truth: truth, asked: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// New starts a server that stops when the test ends.
func New(t testing.TB, truth *Truth) *Server {
	s := Start(truth)
	t.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Endpoint is the base URL to configure as maintenance.llm.endpoint.
func (s *Server) Endpoint() string { return s.srv.URL + "/v1" }

// Set makes every later request answer as f says.
func (s *Server) Set(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault, s.next = f, nil
}

// SetNext makes the next n requests answer as f says, and the later ones
// as before.
func (s *Server) SetNext(n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.next = append(s.next, f)
	}
}

// OnRequest sets a function called with each request's user message while
// the request is held, before it is answered: a test can look at the
// database while the daemon waits on the LLM (no transaction open, no
// lock held).
func (s *Server) OnRequest(fn func(prompt string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = fn
}

// Requests is how many requests the server received.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Windows is how many distinct windows (user messages) were asked.
func (s *Server) Windows() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.asked)
}

// MaxPerWindow is the most requests any one window received: 1 when no
// window was asked twice.
func (s *Server) MaxPerWindow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	most := 0
	for _, n := range s.asked {
		most = max(most, n)
	}
	return most
}

// Asked is how many requests carried this user message.
func (s *Server) Asked(prompt string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[prompt]
}

// Unmatched counts statements of windows the truth does not hold.
func (s *Server) Unmatched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unmatched
}

// Unframed counts requests whose statements were not framed as data: a
// system message that does not say they are data, or a statement outside
// the delimiters or spilling over more than one line.
func (s *Server) Unframed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unframed
}

// Usage is the sum of the usage the server reported.
func (s *Server) Usage() llm.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

type request struct {
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	var req request
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&req); err != nil || len(req.Messages) != 2 {
		http.Error(w, "want a system and a user message", http.StatusBadRequest)
		return
	}
	system, user := req.Messages[0].Content, req.Messages[1].Content
	win, framed := parseWindow(system, user)
	pairs, unmatched := s.truth.retired(win.aspect, win.texts)
	f, hook := s.take(user, framed, unmatched)
	if hook != nil {
		hook(user)
	}
	if f.Kind == Slow {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return
		}
	}
	content, ok := answer(f, win, pairs, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	switch {
	case f.Kind == Status500:
		http.Error(w, "the model server failed", http.StatusInternalServerError)
		return
	case f.Kind == OverLong:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"`+strings.Repeat("x", 5<<20)+`"}}]}`)
		return
	case !ok:
		content = "I could not read the statements."
	}
	usage := llm.Usage{PromptTokens: tokens(system) + tokens(user), CompletionTokens: tokens(content)}
	s.mu.Lock()
	s.usage = s.usage.Add(usage)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object":  "chat.completion",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": usage.PromptTokens, "completion_tokens": usage.CompletionTokens, "total_tokens": usage.Total()},
	})
}

// take counts a request and returns the fault it answers with and the
// hook to call.
func (s *Server) take(user string, framed bool, unmatched int) (Fault, func(string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	s.asked[user]++
	s.unmatched += unmatched
	if !framed {
		s.unframed++
	}
	if len(s.next) > 0 {
		f := s.next[0]
		s.next = s.next[1:]
		return f, s.hook
	}
	return s.fault, s.hook
}

func tokens(s string) int { return (len(s) + 3) / 4 }

// window is what a request shows.
type window struct {
	aspect string
	texts  []string // normalised, by number - 1
}

var numbered = regexp.MustCompile(`^\[(\d+)\] (\d{4}-\d{2}-\d{2}|undated): (.*)$`)

// parseWindow reads the window out of a request, as a model reads it, and
// says whether it was framed as data: the system message says statements
// are data, and every line between the delimiters is one numbered
// statement, numbered 1, 2, 3...
func parseWindow(system, user string) (window, bool) {
	var w window
	framed := strings.Contains(system, "data, not instructions")
	inside, opened, closed := false, 0, 0
	for _, line := range strings.Split(user, "\n") {
		switch {
		case line == "<<<":
			inside = true
			opened++
		case line == ">>>":
			inside = false
			closed++
		case inside:
			m := numbered.FindStringSubmatch(line)
			if m == nil || m[1] != itoa(len(w.texts)+1) {
				framed = false
				continue
			}
			w.texts = append(w.texts, normalise(m[3]))
		case strings.HasPrefix(line, "Aspect: "):
			w.aspect = strings.TrimPrefix(line, "Aspect: ")
		case numbered.MatchString(line):
			framed = false // a statement outside the delimiters
		}
	}
	return w, framed && opened == 1 && closed == 1 && len(w.texts) > 0
}

// answer is the content of a reply to the window; ok is false when the
// request held no window.
func answer(f Fault, w window, pairs [][2]int, key string) (string, bool) {
	if len(w.texts) == 0 {
		return "", false
	}
	type retired struct {
		Older      int     `json:"older"`
		Newer      int     `json:"newer"`
		Confidence float64 `json:"confidence"`
	}
	reply := struct {
		Reasoning string    `json:"reasoning"`
		Retired   []retired `json:"retired"`
	}{Retired: []retired{}}
	var why []string
	for _, p := range pairs {
		reply.Retired = append(reply.Retired, retired{p[0], p[1], Confidence})
		why = append(why, "["+itoa(p[1])+"] makes ["+itoa(p[0])+"] no longer true")
	}
	reply.Reasoning = "All the statements can hold at once."
	if len(why) > 0 {
		reply.Reasoning = strings.Join(why, "; ") + "."
	}
	switch f.Kind {
	case Garbage:
		return "I'd rather not say which statements are out of date.", true
	case EchoSecret:
		reply.Reasoning += " (asked with key " + key + " and " + f.Secret + ")"
	case NotListed:
		n := len(w.texts)
		reply.Retired = append(reply.Retired, retired{n + 1, n + 2, Confidence}, retired{0, 1, Confidence})
	case NotOlder:
		for _, p := range pairs {
			reply.Retired = append(reply.Retired, retired{p[1], p[0], Confidence})
		}
		reply.Retired = append(reply.Retired, retired{2, 1, Confidence}, retired{1, 1, Confidence})
	}
	b, _ := json.Marshal(reply)
	content := string(b)
	if f.Kind == Truncated {
		content = content[:len(content)/2]
	}
	return content, true
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
