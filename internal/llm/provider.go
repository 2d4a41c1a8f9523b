package llm

import (
	"net/http"
	"sync"

	"github.com/supersessiond/supersessiond/config"
)

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

// Client returns the client for c, or nil when no LLM is configured.
func (p *Provider) Client(c config.LLM) *Client {
	if c.Endpoint == "" || c.Model == "" {
		return nil
	}
	s := Settings{Endpoint: c.Endpoint, Model: c.Model, Timeout: c.Timeout, MaxConcurrency: c.MaxConcurrency}
	if c.APIKeyEnv != "" {
		s.APIKey = p.getenv(c.APIKeyEnv)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == nil || p.key != s {
		p.key, p.client = s, New(s, p.http)
	}
	return p.client
}
