package llm

import (
	"net/http"
	"slices"
	"sync"
	"time"
)

// Config is maintenance.llm as the provider takes it: the API key is named
// by its environment variable and read at each call, and so are the
// secrets a reply is masked of.
type Config struct {
	Endpoint, Model string
	APIKeyEnv       string
	Timeout         time.Duration
	MaxConcurrency  int
	// Secrets are the configuration's credentials read through getenv
	// (the API key, the admin and operators' tokens, the database
	// passwords); nil: none besides the API key.
	Secrets func(getenv func(string) string) []string
}

// Configured reports whether an endpoint and a model are set.
func (c Config) Configured() bool { return c.Endpoint != "" && c.Model != "" }

// Provider hands out the client for the configuration in force, reusing it
// while the LLM settings are unchanged, so that maxConcurrency bounds the
// calls of every job in the daemon together, not of each job separately.
type Provider struct {
	getenv func(string) string
	http   *http.Client

	mu     sync.Mutex
	key    Settings
	client *Client
}

// NewProvider reads the API key through getenv at each settings change.
func NewProvider(getenv func(string) string, httpClient *http.Client) *Provider {
	return &Provider{getenv: getenv, http: httpClient}
}

// Client returns the client for c, or nil when no LLM is configured. Its
// replies are masked of every secret c names, the API key included.
func (p *Provider) Client(c Config) *Client {
	if !c.Configured() {
		return nil
	}
	s := Settings{Endpoint: c.Endpoint, Model: c.Model, Timeout: c.Timeout, MaxConcurrency: c.MaxConcurrency}
	if c.Secrets != nil {
		s.Secrets = c.Secrets(p.getenv)
	}
	if c.APIKeyEnv != "" {
		s.APIKey = p.getenv(c.APIKeyEnv)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == nil || !sameSettings(p.key, s) {
		p.key, p.client = s, New(s, p.http)
	}
	return p.client
}

func sameSettings(a, b Settings) bool {
	return a.Endpoint == b.Endpoint && a.Model == b.Model && a.APIKey == b.APIKey && a.Timeout == b.Timeout &&
		a.MaxConcurrency == b.MaxConcurrency && slices.Equal(a.Secrets, b.Secrets)
}
