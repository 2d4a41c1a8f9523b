package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/jobs/compaction"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options are what the console is built from.
type Options struct {
	// Ops are the operator commands the review pages act through; nil when
	// the supersession job is off (the console then serves the compaction
	// watch alone).
	Ops *audit.Ops
	// Compaction, when set, reads the compaction watch's list (where the
	// job cannot re-compact and only watches): the Compaction page.
	Compaction func(ctx context.Context) (*compaction.Watch, error)
	// Settings returns the settings in force (the daemon's, made again at
	// each reload): mutationsFrozen and shadowMode are read per request.
	// Nil: the defaults.
	Settings func() Settings
	// Credentials returns the tokens that may use the console now, each
	// with the name the audit trail records (CredentialsOf). None: every
	// page but the login answers with how to configure one.
	Credentials func() []Credential
	// Listen is the address the listener is bound to (host:port): with
	// maintenance.http.openReadsOnLoopback, a tokenless read's Host header
	// must name it.
	Listen string
	Logger *slog.Logger
	// Registry, when set, gets the console's metrics.
	Registry prometheus.Registerer
	// Now is the clock (sessions' expiry, lockouts); default time.Now.
	Now func() time.Time
	// ReviewGrace is how long the browser waits before it sends an accept
	// or reject, so that Undo can still take it back (default 5s).
	ReviewGrace time.Duration
	// MaxConcurrent bounds the requests served at once (default
	// maintenance.http.maxConcurrentRequests); QueueWait is how long one
	// more waits for a place before it gets 503 (default 2s).
	MaxConcurrent int
	QueueWait     time.Duration
	// Room, when set, says whether the console may open a connection now:
	// false while the server is nearly out of slots (store.Guard), the last
	// of which are the agent's. A request that would read or write then
	// gets 503 with Retry-After instead of a connection.
	Room func(ctx context.Context) bool
}

// Console is the review console and its API: an http.Handler for /ui/ and
// /api/.
type Console struct {
	opts     Options
	mux      *http.ServeMux
	pages    *pages
	sessions *sessions
	guesses  *guessLimiter
	gate     *gate
	proxies  []netip.Prefix // maintenance.http.trustedProxies, as at startup
	refused  *prometheus.CounterVec
}

// Settings are what the console takes of the configuration in force
// (maintenance.http, the mode): made by the daemon at each load.
type Settings struct {
	// Audit is what the operator commands act under.
	Audit audit.Settings
	// ShadowMode is memory.pipelineV2.shadowMode, shown on every page.
	ShadowMode bool
	// Listen is maintenance.http.listen.
	Listen string
	// AdminTokenEnv and Tokens name the environment variables of the
	// admin token and of the operators' named tokens.
	AdminTokenEnv string
	Tokens        []TokenEnv
	// OpenReadsOnLoopback, MaxConcurrentRequests and TrustedProxies are
	// maintenance.http's.
	OpenReadsOnLoopback   bool
	MaxConcurrentRequests int
	TrustedProxies        []netip.Prefix
}

// TokenEnv is an operator's token: the name the audit trail records and
// the environment variable holding the token.
type TokenEnv struct {
	Name string
	Env  string
}

// New builds the console.
func New(opts Options) (*Console, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Credentials == nil {
		opts.Credentials = func() []Credential { return nil }
	}
	if opts.ReviewGrace == 0 {
		opts.ReviewGrace = 5 * time.Second
	}
	if opts.Settings == nil {
		opts.Settings = func() Settings { return Settings{Audit: audit.Settings{Enforcement: audit.NewEnforcement("", 0)}} }
	}
	cfg := opts.Settings()
	if opts.MaxConcurrent == 0 {
		opts.MaxConcurrent = cfg.MaxConcurrentRequests
	}
	if opts.QueueWait == 0 {
		opts.QueueWait = 2 * time.Second
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	c := &Console{opts: opts, mux: http.NewServeMux(), pages: p, sessions: newSessions(), guesses: newGuessLimiter(),
		gate: newGate(max(opts.MaxConcurrent, 1), opts.QueueWait), proxies: cfg.TrustedProxies}
	c.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "supersessiond", Name: "console_requests_refused_total",
		Help: "Console and API requests refused: busy (no place free in time, 503), crowded (the database nearly out of connection slots, 503), locked_out (too many wrong tokens from the client, 429), unauthorized (no or a wrong token, 403).",
	}, []string{"reason"})
	for _, r := range []string{"busy", "crowded", "locked_out", "unauthorized"} {
		c.refused.WithLabelValues(r)
	}
	if opts.Registry != nil {
		if err := opts.Registry.Register(c.refused); err != nil {
			return nil, fmt.Errorf("console: register metrics: %w", err)
		}
	}
	c.routes()
	return c, nil
}

func (c *Console) routes() {
	static, _ := fs.Sub(staticFS, "static")
	c.mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", noListing(http.FileServerFS(static))))
	c.mux.HandleFunc("GET /ui/login", c.loginPage)
	c.mux.HandleFunc("POST /ui/login", c.login)
	c.mux.HandleFunc("POST /ui/logout", c.logout)
	if c.opts.Compaction != nil {
		c.mux.HandleFunc("GET /ui/compaction", c.compactionPage)
		c.mux.HandleFunc("GET /api/compaction", c.apiCompaction)
	}
	review := func(pattern string, h http.HandlerFunc) {
		if c.opts.Ops == nil {
			h = c.noReview
		}
		c.mux.HandleFunc(pattern, h)
	}
	review("GET /ui/{$}", c.queuePage)
	review("GET /ui/proposals/{id}", c.proposalPage)
	review("GET /ui/stats", c.statsPage)
	review("POST /ui/act", c.formAction)

	review("GET /api/proposals", c.apiProposals)
	review("GET /api/proposals/counts", c.apiCounts)
	review("GET /api/proposals/{id}", c.apiProposal)
	review("GET /api/stats", c.apiStats)
	review("GET /api/history", c.apiHistory)
	review("POST /api/proposals/{id}/{action}", c.apiDecide)
	review("POST /api/history/{id}/undo", c.apiUndo)
	review("POST /api/bulk", c.apiBulk)
	if c.dependentsOn() {
		c.mux.HandleFunc("GET /ui/dependents", c.dependentsPage)
		c.mux.HandleFunc("GET /api/dependents", c.apiDependents)
	}
}

// dependentsOn: the store is Honcho's, whose documents cite others.
func (c *Console) dependentsOn() bool {
	return c.opts.Ops != nil && c.opts.Ops.Store() == schema.StoreHoncho
}

// Off answers every console and API request when the console cannot be
// served (the supersession job is off, as beside Honcho): 404, with a page
// (or, for the API, a JSON error) that says why and which setting turns it
// on. It holds no memory content, so it needs no token.
func Off(why string) http.Handler {
	page := template.Must(template.ParseFS(templateFS, "templates/off.html"))
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/ui/static/", noListing(http.FileServerFS(static)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if strings.HasPrefix(r.URL.Path, "/ui/static/") {
			files.ServeHTTP(w, r)
			return
		}
		if wantsJSON(r) {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": "the review console is off: " + why})
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_ = page.Execute(w, map[string]string{"Why": strings.ToUpper(why[:1]) + why[1:]})
	})
}

// noListing serves the embedded files and never a directory's listing.
func noListing(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// public are the paths anyone may fetch: the script and styles, and the
// login form (it has its own CSRF check and counts wrong tokens).
func public(path string) bool {
	return strings.HasPrefix(path, "/ui/static/") || path == "/ui/login"
}

// ServeHTTP applies what holds for every request (no caching, the security
// headers, a request id) and, for everything but the login and the static
// files, the gatekeeping: a client locked out for guessing gets 429; a read
// needs a token (or, with openReadsOnLoopback, a tokenless GET from this
// host naming this listener); then the request waits for a place among
// maxConcurrentRequests, or gets 503. Changes check the token's access in
// their handlers (admit).
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: with no-referrer a browser sends
	// "Origin: null" on its form posts, and the origin check needs it.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	id := "r-" + randomHex(8)
	h.Set("X-Request-Id", id)
	r = r.WithContext(context.WithValue(r.Context(), requestKey{}, id))
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r) {
		c.deny(w, r, "cross-origin request refused")
		return
	}
	if public(r.URL.Path) {
		c.mux.ServeHTTP(w, r)
		return
	}
	a := c.authorize(r)
	switch {
	case a.retry > 0:
		c.refused.WithLabelValues("locked_out").Inc()
		c.tooMany(w, r, a.retry, a.why)
		return
	case !a.reader && !c.openRead(r):
		c.refused.WithLabelValues("unauthorized").Inc()
		if strings.HasPrefix(r.URL.Path, "/ui/") && r.Method == http.MethodGet && !wantsJSON(r) {
			http.Redirect(w, r, "/ui/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		why := a.why
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			why = "reading needs a token too (the console shows the agent's memory): " + why
		}
		c.deny(w, r, why)
		return
	}
	if !c.gate.enter(r.Context()) {
		c.refused.WithLabelValues("busy").Inc()
		h.Set("Retry-After", "2")
		c.answer(w, r, http.StatusServiceUnavailable, fmt.Sprintf("busy: %d console requests are being served; try again in a moment", cap(c.gate.slots)))
		return
	}
	defer c.gate.leave()
	if c.opts.Room != nil && !c.opts.Room(r.Context()) {
		c.refused.WithLabelValues("crowded").Inc()
		h.Set("Retry-After", "5")
		c.answer(w, r, http.StatusServiceUnavailable, "the database is nearly out of connection slots, and the last ones are left to the agent; try again in a moment")
		return
	}
	c.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), accessKey{}, a)))
}

type accessKey struct{}

// accessOf is what ServeHTTP decided r may do (authorized once per
// request, so a wrong token is counted once).
func (c *Console) accessOf(r *http.Request) access {
	if a, ok := r.Context().Value(accessKey{}).(access); ok {
		return a
	}
	return c.authorize(r)
}

// tooMany answers 429 with when to try again.
func (c *Console) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, why string) {
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
	c.answer(w, r, http.StatusTooManyRequests, why)
}

// answer is an error answer: JSON for the API, text otherwise.
func (c *Console) answer(w http.ResponseWriter, r *http.Request, code int, why string) {
	if wantsJSON(r) {
		writeJSON(w, code, map[string]any{"error": why})
		return
	}
	http.Error(w, strconv.Itoa(code)+" "+strings.ToLower(http.StatusText(code))+": "+why, code)
}

// deny answers 403 with the reason: JSON for the API, text otherwise.
func (c *Console) deny(w http.ResponseWriter, r *http.Request, why string) {
	c.answer(w, r, http.StatusForbidden, why)
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
