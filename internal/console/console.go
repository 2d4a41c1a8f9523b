package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/audit"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options are what the console is built from.
type Options struct {
	Ops *audit.Ops
	// Config returns the configuration in force (the daemon's, reloaded
	// underneath): mutationsFrozen and shadowMode are read per request.
	Config func() *config.Config
	// Token returns the admin token now, "" when none is configured (the
	// console is then read-only).
	Token  func() string
	Logger *slog.Logger
	// Now is the clock (sessions' expiry); default time.Now.
	Now func() time.Time
	// ReviewGrace is how long the browser waits before it sends an accept
	// or reject, so that Undo can still take it back (default 5s).
	ReviewGrace time.Duration
}

// Console is the review console and its API: an http.Handler for /ui/ and
// /api/.
type Console struct {
	opts     Options
	mux      *http.ServeMux
	pages    *pages
	sessions *sessions
	logins   loginLimiter
}

// New builds the console.
func New(opts Options) (*Console, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Token == nil {
		opts.Token = func() string { return "" }
	}
	if opts.ReviewGrace == 0 {
		opts.ReviewGrace = 5 * time.Second
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	c := &Console{opts: opts, mux: http.NewServeMux(), pages: p, sessions: newSessions()}
	c.routes()
	return c, nil
}

func (c *Console) routes() {
	static, _ := fs.Sub(staticFS, "static")
	c.mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	c.mux.HandleFunc("GET /ui/{$}", c.queuePage)
	c.mux.HandleFunc("GET /ui/proposals/{id}", c.proposalPage)
	c.mux.HandleFunc("GET /ui/stats", c.statsPage)
	c.mux.HandleFunc("GET /ui/login", c.loginPage)
	c.mux.HandleFunc("POST /ui/login", c.login)
	c.mux.HandleFunc("POST /ui/logout", c.logout)
	c.mux.HandleFunc("POST /ui/act", c.formAction)

	c.mux.HandleFunc("GET /api/proposals", c.apiProposals)
	c.mux.HandleFunc("GET /api/proposals/counts", c.apiCounts)
	c.mux.HandleFunc("GET /api/proposals/{id}", c.apiProposal)
	c.mux.HandleFunc("GET /api/stats", c.apiStats)
	c.mux.HandleFunc("GET /api/history", c.apiHistory)
	c.mux.HandleFunc("POST /api/proposals/{id}/{action}", c.apiDecide)
	c.mux.HandleFunc("POST /api/history/{id}/undo", c.apiUndo)
	c.mux.HandleFunc("POST /api/bulk", c.apiBulk)
}

// ServeHTTP applies what holds for every request (no caching, the security
// headers, reads off loopback need the token) and routes it.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: with no-referrer a browser sends
	// "Origin: null" on its form posts, and the origin check needs it.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r) {
		c.deny(w, r, "cross-origin request refused")
		return
	}
	if !loopback(r) && !strings.HasPrefix(r.URL.Path, "/ui/static/") && r.URL.Path != "/ui/login" {
		if a := c.authorize(r); !a.admin {
			if strings.HasPrefix(r.URL.Path, "/ui/") && r.Method == http.MethodGet {
				http.Redirect(w, r, "/ui/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			c.deny(w, r, "from a host other than this one, reading needs the admin token too: "+a.why)
			return
		}
	}
	c.mux.ServeHTTP(w, r)
}

// deny answers 403 with the reason: JSON for the API, text otherwise.
func (c *Console) deny(w http.ResponseWriter, r *http.Request, why string) {
	if wantsJSON(r) {
		writeJSON(w, http.StatusForbidden, map[string]any{"error": why})
		return
	}
	http.Error(w, "403 forbidden: "+why, http.StatusForbidden)
}

// wantsJSON: the API, and the console's script (it asks for JSON).
func wantsJSON(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/api/") || strings.Contains(r.Header.Get("Accept"), "application/json")
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// fail answers an error from the operator commands: a refusal is 409 with
// its reason (the same words the CLI prints with exit 4), an unknown id
// 404, a bad request 400, anything else 500 (logged, never detailed).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	var bad *badRequest
	switch {
	case errors.As(err, &bad):
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": bad.msg})
	case errors.Is(err, audit.ErrNotFound):
		writeJSON(w, http.StatusNotFound, map[string]any{"error": err.Error()})
	case errors.Is(err, audit.ErrRefused):
		writeJSON(w, http.StatusConflict, map[string]any{"error": err.Error(), "refused": true})
	case errors.Is(err, context.Canceled):
		return
	default:
		c.opts.Logger.Error("console: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "internal error (see the daemon's log)"})
	}
}

type badRequest struct{ msg string }

func (b *badRequest) Error() string { return b.msg }

func badf(format string, args ...any) error { return &badRequest{msg: fmt.Sprintf(format, args...)} }

// filterOf reads the filters of `proposals` from query parameters, named as
// the command's flags (min-confidence; min_confidence is accepted too).
func filterOf(q url.Values) (audit.ProposalFilter, error) {
	f := audit.ProposalFilter{Agent: q.Get("agent"), Status: q.Get("status"), Signal: q.Get("signal"), Before: q.Get("before")}
	for _, c := range []struct {
		names []string
		dst   **float64
	}{{[]string{"min-confidence", "min_confidence", "min"}, &f.MinConfidence}, {[]string{"max-confidence", "max_confidence", "max"}, &f.MaxConfidence}} {
		for _, n := range c.names {
			if s := strings.TrimSpace(q.Get(n)); s != "" {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || v < 0 || v > 1 {
					return f, badf("%s=%q must be a number between 0 and 1", n, s)
				}
				*c.dst = &v
				break
			}
		}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			return f, badf("limit=%q must be between 1 and 1000", s)
		}
		f.Limit = n
	}
	if err := f.Validate(); err != nil {
		return f, badf("%s", strings.NewReplacer("--", "").Replace(err.Error()))
	}
	return f, nil
}
