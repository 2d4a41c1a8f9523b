package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	"github.com/supersessiond/supersessiond/internal/redact"
)

// Settings configure a Client.
type Settings struct {
	Endpoint       string // base URL, e.g. http://127.0.0.1:11434/v1
	Model          string
	APIKey         string // sent as a bearer token when non-empty
	Timeout        time.Duration
	MaxConcurrency int
	// Secrets are values besides APIKey that no reply may carry into what
	// the daemon stores or shows (the admin token, the database password):
	// a model that repeats one has it masked.
	Secrets []string
}

// Client is safe for concurrent use.
type Client struct {
	s    Settings
	http *http.Client
	sem  chan struct{}
	red  *redact.Redactor
}

// New returns a client. httpClient may be nil.
func New(s Settings, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	if s.MaxConcurrency < 1 {
		s.MaxConcurrency = 1
	}
	red := redact.New(append([]string{s.APIKey}, s.Secrets...)...)
	return &Client{s: s, http: httpClient, sem: make(chan struct{}, s.MaxConcurrency), red: red}
}

// Model is the model name, part of the semantic-verdict cache key.
func (c *Client) Model() string { return c.s.Model }

// Redact masks the secrets the client knows, and credentials by their
// shape, in text a model wrote: every reply is masked before it is returned,
// and so is what a caller read back from an earlier reply (a cached
// verdict stored before its secret was known).
func (c *Client) Redact(s string) string { return c.red.Prose(s) }

// Error kinds, for logs and metrics labels.
const (
	KindTimeout     = "timeout"     // the call exceeded its timeout
	KindUnavailable = "unavailable" // connection refused, DNS, reset...
	KindStatus      = "http_status" // a non-2xx answer
	KindGarbage     = "garbage"     // a 2xx answer we could not understand
	KindCanceled    = "canceled"    // the caller's context ended
)

// Kinds are every error kind, so that a metric labelled by kind can have
// its series at zero before the first failure.
var Kinds = []string{KindTimeout, KindUnavailable, KindStatus, KindGarbage, KindCanceled}

// Error is a failed call. Its message never contains the API key, nor
// credentials of the endpoint URL (user:password@host, ?api_key=...), nor a
// token a misbehaving server echoes back: it is masked by package redact.
type Error struct {
	Kind string
	Err  error
}

func (e *Error) Error() string { return "llm " + e.Kind + ": " + redact.Text(e.Err.Error()) }
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the error's kind, or "" for nil and foreign errors.
func KindOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// maxResponse caps what we read from the server: a misbehaving one must not
// be able to exhaust memory.
const maxResponse = 4 << 20

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	Stream      bool          `json:"stream"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// Usage is what one answered call cost, as the server's reply says
// (`usage`); zero when the server does not say.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{PromptTokens: u.PromptTokens + o.PromptTokens, CompletionTokens: u.CompletionTokens + o.CompletionTokens}
}

// Total is prompt and completion tokens together.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// Reply is one answered chat completion: the assistant's text (masked of
// the secrets the client knows), what it cost, and how long the server
// took, from sending the request to reading the whole answer (the wait for
// a free slot of maxConcurrency is not in it).
type Reply struct {
	Content string
	Usage   Usage
	Latency time.Duration
}

// Complete sends one system+user exchange and returns the assistant's text.
// timeout, when positive and shorter than the client's, bounds this call.
func (c *Client) Complete(ctx context.Context, system, user string, timeout time.Duration) (string, error) {
	r, err := c.Chat(ctx, system, user, timeout)
	return r.Content, err
}

// Chat is Complete with the reply's usage and latency.
func (c *Client) Chat(ctx context.Context, system, user string, timeout time.Duration) (Reply, error) {
	select {
	case c.sem <- struct{}{}:
		defer func() { <-c.sem }()
	case <-ctx.Done():
		return Reply{}, &Error{Kind: KindCanceled, Err: ctx.Err()}
	}
	if timeout <= 0 || (c.s.Timeout > 0 && c.s.Timeout < timeout) {
		timeout = c.s.Timeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	body, _ := json.Marshal(chatRequest{
		Model:    c.s.Model,
		Messages: []chatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}},
	})
	url := completionsURL(c.s.Endpoint)
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Reply{}, &Error{Kind: KindUnavailable, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.s.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.s.APIKey)
	}
	began := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return Reply{}, classify(ctx, cctx, err, timeout)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return Reply{}, classify(ctx, cctx, err, timeout)
	}
	if resp.StatusCode/100 != 2 {
		return Reply{}, &Error{Kind: KindStatus, Err: fmt.Errorf("%s answered %s: %s", redact.URL(url), resp.Status, c.red.Text(snippet(raw)))}
	}
	if len(raw) > maxResponse {
		return Reply{}, &Error{Kind: KindGarbage, Err: fmt.Errorf("response larger than %d bytes", maxResponse)}
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return Reply{}, &Error{Kind: KindGarbage, Err: fmt.Errorf("response is not a chat completion: %v: %s", err, c.red.Text(snippet(raw)))}
	}
	if len(cr.Choices) == 0 {
		return Reply{}, &Error{Kind: KindGarbage, Err: fmt.Errorf("chat completion without choices: %s", c.red.Text(snippet(raw)))}
	}
	out := Reply{Content: c.Redact(cr.Choices[0].Message.Content), Latency: time.Since(began)}
	if cr.Usage != nil {
		out.Usage = Usage{PromptTokens: max(cr.Usage.PromptTokens, 0), CompletionTokens: max(cr.Usage.CompletionTokens, 0)}
	}
	return out, nil
}

// completionsURL is the chat-completions URL under a base endpoint. The path
// goes before the query: an Azure-style endpoint carries its API version
// there (https://x.openai.azure.com/openai/deployments/d?api-version=...).
func completionsURL(endpoint string) string {
	u, err := neturl.Parse(endpoint)
	if err != nil {
		// Validation accepts only endpoints that parse; a client built
		// without it gets the plain join.
		return strings.TrimRight(endpoint, "/") + "/chat/completions"
	}
	return u.JoinPath("chat", "completions").String()
}

// classify names a failed call's kind; timeout is the call's bound.
func classify(ctx, cctx context.Context, err error, timeout time.Duration) error {
	switch {
	case ctx.Err() != nil:
		return &Error{Kind: KindCanceled, Err: ctx.Err()}
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Err: fmt.Errorf("no answer within %s", timeout)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: KindTimeout, Err: err}
	}
	return &Error{Kind: KindUnavailable, Err: err}
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
