package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/testkit/llmtest"
)

// runCLI runs supersessiond in-process with buffers and an environment that
// points at no configuration file, so built-in defaults apply.
func runCLI(t *testing.T, stdin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{
		Stdin:   strings.NewReader(stdin),
		Stdout:  &out,
		Stderr:  &errb,
		Environ: func() []string { return env },
	}
	err := m.Run(context.Background(), args)
	return out.String(), errb.String(), ExitCode(err)
}

func TestDetectCommand(t *testing.T) {
	t.Parallel()
	in := `{"id":"p1","older":"Lives in Toronto","newer":"Lives in Vancouver","older_at":"2026-03-01T10:00:00Z","newer_at":"2026-03-04T09:00:00Z","older_kind":"attribute","newer_kind":"attribute","aspect":"location"}
{"id":"p2","older":"Plays tennis","newer":"Plays the piano"}
`
	out, _, code := runCLI(t, in, nil, "detect")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %q", len(lines), out)
	}
	var r struct {
		ID         string            `json:"id"`
		Supersede  bool              `json:"supersede"`
		Confidence float64           `json:"confidence"`
		Method     string            `json:"method"`
		Signals    []json.RawMessage `json:"signals"`
		Reason     string            `json:"reason"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != "p1" || !r.Supersede || r.Confidence < 0.7 || r.Method != "heuristic" || len(r.Signals) == 0 || r.Reason == "" {
		t.Fatalf("p1: %s", lines[0])
	}
	if !strings.Contains(lines[0], `"detail":"lives in: toronto → vancouver"`) {
		t.Fatalf("p1 detail: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"signals":[]`) || !strings.Contains(lines[1], `"supersede":false`) {
		t.Fatalf("p2: %s", lines[1])
	}
}

func TestDetectMalformedInput(t *testing.T) {
	t.Parallel()
	in := "{\"id\":\"ok\",\"older\":\"a\",\"newer\":\"b\"}\nnot json\n{\"id\":\"half\",\"older\":\"a\"}\n{\"id\":\"last\",\"older\":\"a\",\"newer\":\"b\"}\n"
	out, stderr, code := runCLI(t, in, nil, "detect")
	if code != exitFailure {
		t.Fatalf("exit %d, want %d", code, exitFailure)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("every line must be answered: %q", out)
	}
	if !strings.Contains(lines[1], `"error"`) || !strings.Contains(lines[2], `"id":"half"`) || !strings.Contains(lines[2], `"error"`) {
		t.Fatalf("error lines: %q", lines)
	}
	if !strings.Contains(lines[3], `"id":"last"`) {
		t.Fatalf("processing stopped: %q", lines[3])
	}
	if stderr != "" {
		t.Fatalf("stderr: %q", stderr)
	}
}

func TestDetectMinConfidence(t *testing.T) {
	t.Parallel()
	in := `{"id":"car","older":"Drives a Toyota Corolla","newer":"Drives a Tesla Model 3"}` + "\n"
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(cfg, []byte("memory:\n  pipelineV2:\n    structural:\n      supersessionMinConfidence: 0.55\n      supersessionReviewConfidence: 0.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  []string
		args []string
		want string
		code int
	}{
		{"defaults", nil, []string{"detect"}, `"supersede":false`, 0},
		{"flag", nil, []string{"detect", "--min-confidence", "0.5"}, `"supersede":true`, 0},
		{"config file", nil, []string{"detect", "--config", cfg}, `"supersede":true`, 0},
		{"config from env", []string{"SUPERSESSIOND_CONFIG=" + cfg}, []string{"detect"}, `"supersede":true`, 0},
		{"flag beats config", nil, []string{"detect", "--config", cfg, "--min-confidence=0.9"}, `"supersede":false`, 0},
		{"out of range", nil, []string{"detect", "--min-confidence", "1.5"}, "", exitUsage},
		{"not a number", nil, []string{"detect", "--min-confidence", "high"}, "", exitUsage},
		{"negative", nil, []string{"detect", "--min-confidence=-0.1"}, "", exitUsage},
		{"missing config", nil, []string{"detect", "--config", filepath.Join(dir, "nope.yaml")}, "", exitUsage},
		{"stray argument", nil, []string{"detect", "pairs.jsonl"}, "", exitUsage},
	}
	for _, tt := range tests {
		out, _, code := runCLI(t, in, tt.env, tt.args...)
		if code != tt.code || !strings.Contains(out, tt.want) {
			t.Errorf("%s: exit %d (want %d), output %q (want %q)", tt.name, code, tt.code, out, tt.want)
		}
	}
}

func TestEvalCommand(t *testing.T) {
	t.Parallel()
	corpus := filepath.Join("..", "..", "testdata", "pairs.jsonl")
	out, _, code := runCLI(t, "", nil, "eval", corpus)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"overall", "heuristic classes", "precision", "recall", "F1", "TP", "FP", "FN", "TN", "negation", "multi_valued",
		"review band [0.50, 0.70): "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	band, _, code := runCLI(t, "", nil, "eval", corpus, "--review-confidence", "0.6")
	if code != 0 || !strings.Contains(band, "review band [0.60, 0.70): ") {
		t.Errorf("--review-confidence 0.6: exit %d\n%s", code, band)
	}
	if strings.Contains(out, "misclassified:") {
		t.Errorf("misclassified pairs listed without --verbose")
	}
	verbose, _, code := runCLI(t, "", nil, "eval", "--verbose", corpus, "--min-confidence", "0.7")
	if code != 0 || !strings.Contains(verbose, "misclassified:") || !strings.Contains(verbose, "older: ") {
		t.Errorf("--verbose: exit %d\n%s", code, verbose)
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"older\":\"a\",\"newer\":\"b\",\"label\":true}\nnope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runCLI(t, "", nil, "eval", bad); code != exitFailure {
		t.Errorf("malformed eval file: exit %d", code)
	}
	if _, _, code := runCLI(t, "", nil, "eval"); code != exitUsage {
		t.Errorf("no FILE: exit %d", code)
	}
	if _, _, code := runCLI(t, "", nil, "eval", filepath.Join(dir, "missing.jsonl")); code != exitFailure {
		t.Errorf("missing FILE: exit %d", code)
	}
	if _, _, code := runCLI(t, "", nil, "eval", corpus, "--min-confidence", "2"); code != exitUsage {
		t.Errorf("bad --min-confidence: exit %d", code)
	}
	if _, _, code := runCLI(t, "", nil, "eval", corpus, "--review-confidence", "0.8"); code != exitUsage {
		t.Errorf("--review-confidence above the minimum: exit %d", code)
	}
}

func TestEvalAspectsCommand(t *testing.T) {
	t.Parallel()
	corpus := filepath.Join("..", "..", "testdata", "aspects_probe3.jsonl")
	out, _, code := runCLI(t, "", nil, "eval", "--aspects", corpus)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"whole aspects: a live sweep at min confidence 0.70", "ret. precision", "ret. recall", "pair precision", "overall"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "missed (should be retired") {
		t.Errorf("misses listed without --verbose")
	}
	verbose, _, code := runCLI(t, "", nil, "eval", "--aspects", corpus, "--verbose", "--scope")
	if code != 0 || !strings.Contains(verbose, "missed (should be retired") || !strings.Contains(verbose, "one scope per entity") {
		t.Errorf("--verbose --scope: exit %d\n%s", code, verbose)
	}
	if _, _, code := runCLI(t, "", nil, "eval", "--aspects", corpus, corpus); code != exitUsage {
		t.Errorf("--aspects FILE and a FILE: exit %d", code)
	}
	if _, _, code := runCLI(t, "", nil, "eval", "--scope", corpus); code != exitUsage {
		t.Errorf("--scope without --aspects: exit %d", code)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"aspect_id\":\"a\",\"statements\":[]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, code := runCLI(t, "", nil, "eval", "--aspects", bad); code != exitFailure || !strings.Contains(out, `no "statements"`) {
		t.Errorf("malformed aspects file: exit %d\n%s", code, out)
	}
}

// eval --llm asks the LLM of the configuration (here the scripted one,
// answering from the corpus's own labels) as the daemon would, and reports
// its requests, tokens and latency; without an LLM configured it says which
// keys to set.
func TestEvalLLMCommand(t *testing.T) {
	t.Parallel()
	aspects := filepath.Join("..", "..", "testdata", "aspects_w2.jsonl")
	pairs := filepath.Join("..", "..", "testdata", "pairs_holdout.jsonl")
	truth := func(read func(io.Reader) (*llmtest.Truth, error), file string) *llmtest.Truth {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tr, err := read(f)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	for _, tc := range []struct {
		args  []string
		truth *llmtest.Truth
		want  []string
	}{
		{[]string{"--aspects", aspects}, truth(llmtest.TruthFromAspects, aspects),
			[]string{"without the LLM:", "LLM judge: model scripted, gate aspect, at most 24 statements a window", "per 1,000 statements:"}},
		{[]string{pairs}, truth(llmtest.TruthFromPairs, pairs), []string{"LLM judge: model scripted", "per 1,000 pairs:", "pairs the LLM settled"}},
	} {
		srv := llmtest.New(t, tc.truth)
		env := []string{"SUPERSESSIOND_MAINTENANCE__LLM__ENDPOINT=" + srv.Endpoint(), "SUPERSESSIOND_MAINTENANCE__LLM__MODEL=scripted",
			"OPENAI_API_KEY=sk-test-key-0123456789"}
		out, errOut, code := runCLI(t, "", env, append([]string{"eval", "--llm"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s %s", tc.args, code, out, errOut)
		}
		for _, want := range tc.want {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, want, out)
			}
		}
		if srv.Requests() == 0 || srv.MaxPerWindow() != 1 {
			t.Errorf("%v: %d requests, at most %d per window", tc.args, srv.Requests(), srv.MaxPerWindow())
		}
	}
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Environ: func() []string { return nil }}
	err := m.Run(context.Background(), []string{"eval", "--llm", "--aspects", aspects})
	if ExitCode(err) != exitUsage || !strings.Contains(err.Error(), "maintenance.llm.endpoint") {
		t.Errorf("no LLM configured: exit %d, %v", ExitCode(err), err)
	}
}
