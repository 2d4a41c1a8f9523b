package llm

import (
	"net/http"
	"slices"
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

// Client returns the client for cfg's maintenance.llm, or nil when no LLM
// is configured. Its replies are masked of every secret cfg names
// (config.Secrets), the API key included.
func (p *Provider) Client(cfg *config.Config) *Client {
	c := cfg.Maintenance.LLM
	if c.Endpoint == "" || c.Model == "" {
		return nil
	}
	s := Settings{Endpoint: c.Endpoint, Model: c.Model, Timeout: c.Timeout, MaxConcurrency: c.MaxConcurrency,
		Secrets: cfg.Secrets(p.getenv)}
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
