package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/console"
	"github.com/supersessiond/supersessiond/internal/earned"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/proctest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const token = "s3cret-token-for-tests-0123456789"

// site is a console on a test database holding proposals from a shadow
// sweep: a→ home, theme, diet, work of agent a; b-home of agent b.
type site struct {
	srv   *httptest.Server
	c     *console.Console
	db    *pgtest.DB
	s     *memtest.Seeder
	ids   map[string]string // proposal id by old attribute id
	cfg   *config.Config
	logs  proctest.Buffer // the daemon's log while the test reads it
	opts  console.Options
	named []console.Credential // named tokens beside the admin token
	live  atomic.Pointer[console.Console]
}

func newSite(t *testing.T, tok string, mut ...func(*config.Config)) *site {
	t.Helper()
	db := pgtest.New(t)
	st := &site{db: db, s: memtest.New(t, db.DB), ids: map[string]string{}, cfg: config.Default()}
	for _, p := range []struct{ agent, aspect, old, new string }{
		{"a", "home", "Lives in Toronto", "Lives in Vancouver"},
		{"a", "theme", "Prefers dark mode in every app", "Prefers light mode in every app"},
		{"a", "diet", "Is vegetarian", "Is no longer vegetarian"},
		{"a", "work", "Works at Acme", "Works at Globex"},
		{"b", "home", "Lives in Paris", "Lives in Berlin"},
	} {
		asp := st.s.Aspect(p.agent, "E", p.aspect)
		st.s.Add(memtest.Attr{ID: p.agent + "-" + p.aspect + "-1", Agent: p.agent, Aspect: asp, Content: p.old},
			memtest.Attr{ID: p.agent + "-" + p.aspect + "-2", Agent: p.agent, Aspect: asp, Content: p.new})
	}
	log := slog.New(slog.NewTextHandler(&st.logs, nil))
	engine := supersession.New(jobs.Deps{DB: db.DB, Logger: log})
	shadow := config.Default()
	shadow.Memory.PipelineV2.ShadowMode = true
	if _, err := sweep.New(jobs.Deps{DB: db.DB, Logger: log}, engine).Once(context.Background(), daemon.SettingsOf(shadow).Sweep, sweep.Options{}); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT metadata->>'old_attribute_id', id FROM memory_history WHERE event = 'supersession_proposal'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var o, id string
		_ = rows.Scan(&o, &id)
		st.ids[o] = id
	}
	rows.Close()
	for _, f := range mut {
		f(st.cfg)
	}
	st.srv = httptest.NewUnstartedServer(nil)
	st.opts = console.Options{Ops: audit.New(db.DB, nil, engine), Settings: func() console.Settings { return daemon.SettingsOf(st.cfg).Console },
		Credentials: func() []console.Credential {
			creds := append([]console.Credential(nil), st.named...)
			if tok != "" {
				creds = append(creds, console.Credential{Name: "admin", Token: tok})
			}
			return creds
		},
		Listen: st.srv.Listener.Addr().String(), Logger: log}
	st.start(t)
	return st
}

// start serves the console as st.opts says (again, after a test changed
// them).
func (st *site) start(t *testing.T) {
	t.Helper()
	st.opts.Registry = prometheus.NewRegistry()
	c, err := console.New(st.opts)
	if err != nil {
		t.Fatal(err)
	}
	st.c = c
	st.live.Store(c)
	if st.srv.URL == "" {
		st.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { st.live.Load().ServeHTTP(w, r) })
		st.srv.Start()
		t.Cleanup(st.srv.Close)
	}
}

type resp struct {
	code   int
	body   string
	header http.Header
}

func (s *site) do(t *testing.T, client *http.Client, method, path string, body string, hdr map[string]string) resp {
	t.Helper()
	req, err := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		if strings.HasPrefix(body, "{") {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if client == nil {
		client = noRedirect(nil)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, string(b), res.Header}
}

func noRedirect(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var bearer = map[string]string{"Authorization": "Bearer " + token}

// Reads of the agent's memory need a token by default, from this host too:
// the API answers 403 with no content, a page sends to the login; the login
// page, the script and the styles are open.
func TestReadsNeedATokenByDefault(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	memory := []string{"/api/proposals?status=pending&agent=a", "/api/stats", "/api/proposals/counts", "/api/history?limit=3",
		"/api/proposals/" + s.ids["a-home-1"], "/ui/", "/ui/?signal=antonym", "/ui/stats", "/ui/proposals/" + s.ids["a-home-1"]}
	for _, path := range memory {
		r := s.do(t, nil, "GET", path, "", nil)
		if strings.HasPrefix(path, "/ui/") {
			if r.code != 303 || !strings.HasPrefix(r.header.Get("Location"), "/ui/login?next=") {
				t.Errorf("GET %s without a token: %d %s", path, r.code, r.header.Get("Location"))
			}
		} else if r.code != 403 || !strings.Contains(r.body, "needs a token") {
			t.Errorf("GET %s without a token: %d %s", path, r.code, r.body)
		}
		if strings.Contains(r.body, "Toronto") || strings.Contains(r.body, "a-home") {
			t.Errorf("GET %s without a token shows memory: %s", path, r.body)
		}
	}
	for _, path := range []string{"/ui/static/console.js", "/ui/static/console.css", "/ui/login"} {
		if r := s.do(t, nil, "GET", path, "", nil); r.code != 200 {
			t.Errorf("GET %s is open: %d", path, r.code)
		}
	}
	client, _, _ := login(t, s, token)
	for _, path := range memory {
		if r := s.do(t, nil, "GET", path, "", bearer); r.code != 200 {
			t.Errorf("GET %s with the token: %d %s", path, r.code, r.body)
		}
		if r := s.do(t, client, "GET", path, "", nil); r.code != 200 {
			t.Errorf("GET %s in a session: %d %s", path, r.code, r.body)
		}
	}
	r := s.do(t, nil, "GET", "/api/proposals?status=pending&agent=a", "", bearer)
	var ps []map[string]any
	if json.Unmarshal([]byte(r.body), &ps) != nil || len(ps) != 4 || ps[0]["id"] == nil || ps[0]["status"] != "pending" {
		t.Fatalf("GET /api/proposals: %d %s", r.code, r.body)
	}
	r = s.do(t, nil, "GET", "/api/proposals/"+s.ids["a-home-1"], "", bearer)
	if !strings.Contains(r.body, `"op": "-"`) || !strings.Contains(r.body, `"siblings"`) {
		t.Errorf("a proposal carries its diff and siblings: %s", r.body)
	}
	if r := s.do(t, nil, "GET", "/api/proposals/nope", "", bearer); r.code != 404 {
		t.Errorf("unknown proposal: %d", r.code)
	}
	if r := s.do(t, nil, "GET", "/api/proposals?status=maybe", "", bearer); r.code != 400 {
		t.Errorf("bad status: %d", r.code)
	}
	page := s.do(t, client, "GET", "/ui/proposals/"+s.ids["a-home-1"], "", nil)
	for _, w := range []string{"<del>Toronto</del>", "<ins>Vancouver</ins>", "value_conflict", "Log out"} {
		if !strings.Contains(page.body, w) {
			t.Errorf("proposal page lacks %q", w)
		}
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP: %q", csp)
	}
}

// get serves one request as if from remote with the Host header host.
func (s *site) get(path, remote, host string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	req.RemoteAddr, req.Host = remote, host
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.c.ServeHTTP(w, req)
	return w
}

// openReadsOnLoopback opens reads to this host, but only to requests whose
// Host names the listener: a page of another site that rebinds its name to
// 127.0.0.1 (DNS rebinding), a request through a proxy and one from
// elsewhere still need the token. Changes always do.
func TestOpenReadsOnLoopbackCheckTheHost(t *testing.T) {
	t.Parallel()
	s := newSite(t, token, func(c *config.Config) { c.Maintenance.HTTP.OpenReadsOnLoopback = true })
	_, port, _ := net.SplitHostPort(s.opts.Listen)
	path := "/api/proposals?agent=a"
	for _, c := range []struct {
		remote, host string
		hdr          map[string]string
		code         int
	}{
		{"127.0.0.1:5000", "127.0.0.1:" + port, nil, 200},
		{"127.0.0.1:5000", "localhost:" + port, nil, 200},
		{"127.0.0.1:5000", "LOCALHOST:" + port, nil, 200},
		{"[::1]:5000", "[::1]:" + port, nil, 200},
		{"127.0.0.1:5000", "attacker.example:" + port, nil, 403},
		{"127.0.0.1:5000", "attacker.example", nil, 403},
		{"127.0.0.1:5000", "127.0.0.1:1", nil, 403},
		{"127.0.0.1:5000", "", nil, 403},
		{"127.0.0.1:5000", "127.0.0.1:" + port, map[string]string{"X-Forwarded-For": "198.51.100.9"}, 403},
		{"127.0.0.1:5000", "127.0.0.1:" + port, map[string]string{"Forwarded": "for=198.51.100.9"}, 403},
		{"192.0.2.7:40000", "127.0.0.1:" + port, nil, 403},
		{"192.0.2.7:40000", "attacker.example", bearer, 200},
	} {
		w := s.get(path, c.remote, c.host, c.hdr)
		if w.Code != c.code {
			t.Errorf("from %s, Host %q, %v: %d, want %d", c.remote, c.host, c.hdr, w.Code, c.code)
		}
		if c.code == 403 && strings.Contains(w.Body.String(), "Toronto") {
			t.Errorf("a refused read shows memory: %s", w.Body.String())
		}
	}
	if w := s.get("/ui/", "127.0.0.1:5000", "attacker.example:"+port, nil); w.Code != 303 {
		t.Errorf("a rebinding page: %d", w.Code)
	}
	if w := s.get("/ui/", "127.0.0.1:5000", "localhost:"+port, nil); w.Code != 200 || !strings.Contains(w.Body.String(), "Log in to decide") {
		t.Errorf("an open read of the queue: %d", w.Code)
	}
	r := s.do(t, nil, "POST", "/api/proposals/"+s.ids["a-home-1"]+"/accept", "", nil)
	if r.code != 403 {
		t.Errorf("a change with reads open, without the token: %d %s", r.code, r.body)
	}
}

// login logs a client in through the form, as a browser does.
func login(t *testing.T, s *site, tok string) (*http.Client, string, resp) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := noRedirect(jar)
	page := s.do(t, client, "GET", "/ui/login", "", nil)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("login form has no CSRF token:\n%s", page.body)
	}
	r := s.do(t, client, "POST", "/ui/login", url.Values{"token": {tok}, "csrf": {m[1]}, "next": {"/ui/"}}.Encode(), nil)
	// The session's CSRF token is on every page after login.
	q := s.do(t, client, "GET", "/ui/", "", nil)
	cm := regexp.MustCompile(`data-csrf="([0-9a-f]*)"`).FindStringSubmatch(q.body)
	csrf := ""
	if cm != nil {
		csrf = cm[1]
	}
	return client, csrf, r
}

func TestLoginSetsAStrictHttpOnlyCookie(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	_, _, bad := login(t, s, "not-the-token")
	if bad.code != 403 || !strings.Contains(bad.body, "not a token this console knows") || bad.header.Get("Set-Cookie") != "" && strings.Contains(bad.header.Get("Set-Cookie"), "supersessiond_session") {
		t.Fatalf("wrong token: %d %v", bad.code, bad.header)
	}
	_, csrf, ok := login(t, s, token)
	if ok.code != 303 || csrf == "" {
		t.Fatalf("login: %d, csrf %q", ok.code, csrf)
	}
	var session *http.Cookie
	for _, c := range (&http.Response{Header: ok.header}).Cookies() {
		if c.Name == "supersessiond_session" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/" || len(session.Value) < 32 {
		t.Fatalf("session cookie: %+v", session)
	}
	if strings.Contains(session.Value, token) {
		t.Fatal("the cookie must not hold the token")
	}
	// The login form itself is CSRF-protected (double submit).
	r := s.do(t, nil, "POST", "/ui/login", url.Values{"token": {token}}.Encode(), nil)
	if r.code != 403 || !strings.Contains(r.body, "CSRF") {
		t.Fatalf("login without its CSRF token: %d", r.code)
	}
}

// Every change needs the admin token: each way of asking, through HTTP.
func TestChangesNeedTheToken(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	client, csrf, _ := login(t, s, token)
	cases := []struct {
		name   string
		client *http.Client
		hdr    map[string]string
		code   int
		why    string
	}{
		{"no credentials", nil, nil, 403, "needs a token"},
		{"wrong bearer", nil, map[string]string{"Authorization": "Bearer nope"}, 403, "wrong token"},
		{"basic auth", nil, map[string]string{"Authorization": "Basic " + token}, 403, "wrong token"},
		{"session without CSRF", client, nil, 403, "CSRF"},
		{"session with a wrong CSRF", client, map[string]string{"X-CSRF-Token": strings.Repeat("0", 64)}, 403, "CSRF"},
		{"session from another origin", client, map[string]string{"X-CSRF-Token": csrf, "Origin": "http://evil.example"}, 403, "cross-origin"},
		{"bearer", nil, bearer, 200, ""},
	}
	for _, c := range cases {
		r := s.do(t, c.client, "POST", "/api/proposals/"+s.ids["a-home-1"]+"/reject", `{"note":"x"}`, c.hdr)
		if r.code != c.code || !strings.Contains(r.body, c.why) {
			t.Errorf("%s: %d %s, want %d %q", c.name, r.code, r.body, c.code, c.why)
		}
	}
	r := s.do(t, client, "POST", "/api/proposals/"+s.ids["a-theme-1"]+"/accept", `{}`, map[string]string{"X-CSRF-Token": csrf})
	if r.code != 200 || !strings.Contains(r.body, `"status": "accepted"`) {
		t.Fatalf("session with CSRF: %d %s", r.code, r.body)
	}
	// The form path takes the same token as a form field.
	form := url.Values{"csrf": {csrf}, "action": {"reject"}, "id": {s.ids["a-diet-1"]}, "back": {"/ui/"}}
	if r := s.do(t, client, "POST", "/ui/act", form.Encode(), nil); r.code != 303 || !strings.Contains(r.header.Get("Location"), "flash=reject") {
		t.Fatalf("form action: %d %s", r.code, r.header.Get("Location"))
	}
	form.Set("csrf", "")
	if r := s.do(t, client, "POST", "/ui/act", form.Encode(), nil); r.code != 403 {
		t.Fatalf("form action without CSRF: %d", r.code)
	}
	if n := s.s.Count(`SELECT count(*) FROM memory_history WHERE event LIKE 'supersession_proposal_%'`); n != 3 {
		t.Fatalf("%d reviews recorded, want 3 (only the admitted requests)", n)
	}
}

// With no token configured the console is closed, and says how to open
// it; openReadsOnLoopback lets this host read, never change.
func TestNoTokenConfiguredClosesTheConsole(t *testing.T) {
	t.Parallel()
	s := newSite(t, "")
	r := s.do(t, nil, "POST", "/api/proposals/"+s.ids["a-home-1"]+"/accept", "", bearer)
	if r.code != 403 || !strings.Contains(r.body, "no token is configured") || !strings.Contains(r.body, "SUPERSESSIOND_ADMIN_TOKEN") {
		t.Fatalf("%d %s", r.code, r.body)
	}
	if r := s.do(t, nil, "GET", "/api/proposals", "", nil); r.code != 403 || !strings.Contains(r.body, "openReadsOnLoopback") {
		t.Fatalf("reads are closed too, and say how to open them: %d %s", r.code, r.body)
	}
	_, _, l := login(t, s, "")
	if l.code != 403 || !strings.Contains(l.body, "closed") {
		t.Fatalf("login without a configured token: %d", l.code)
	}
	s.cfg.Maintenance.HTTP.OpenReadsOnLoopback = true
	if r := s.do(t, nil, "GET", "/api/proposals", "", nil); r.code != 200 {
		t.Fatalf("reads from this host, once opened: %d %s", r.code, r.body)
	}
	if r := s.do(t, nil, "POST", "/api/proposals/"+s.ids["a-home-1"]+"/accept", "", nil); r.code != 403 || !strings.Contains(r.body, "no token is configured") {
		t.Fatalf("changes stay closed: %d %s", r.code, r.body)
	}
}

// The operator commands' rules hold in the console: the brake, protected
// and changed rows, the agent scope, one review per proposal.
func TestConsoleKeepsTheCommandsRules(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	post := func(path, body string) resp { return s.do(t, nil, "POST", path, body, bearer) }
	id := s.ids

	s.cfg.Memory.PipelineV2.MutationsFrozen = true
	if r := post("/api/proposals/"+id["a-home-1"]+"/apply", ""); r.code != 409 || !strings.Contains(r.body, "mutationsFrozen") {
		t.Errorf("frozen apply: %d %s", r.code, r.body)
	}
	if r := post("/api/bulk", `{"action":"apply","all":true,"filter":{"status":"pending"}}`); r.code != 409 || !strings.Contains(r.body, "mutationsFrozen") {
		t.Errorf("frozen bulk apply: %d %s", r.code, r.body)
	}
	if r := post("/api/proposals/"+id["a-home-1"]+"/accept", ""); r.code != 200 {
		t.Errorf("frozen review is recorded: %d %s", r.code, r.body)
	}
	s.cfg.Memory.PipelineV2.MutationsFrozen = false

	r := post("/api/proposals/"+id["a-home-1"]+"/apply", "")
	var applied struct {
		HistoryID string `json:"history_id"`
	}
	if r.code != 200 || json.Unmarshal([]byte(r.body), &applied) != nil || applied.HistoryID == "" {
		t.Fatalf("apply: %d %s", r.code, r.body)
	}
	s.cfg.Memory.PipelineV2.MutationsFrozen = true
	if r := post("/api/history/"+applied.HistoryID+"/undo", ""); r.code != 409 || !strings.Contains(r.body, "mutationsFrozen") {
		t.Errorf("frozen undo: %d %s", r.code, r.body)
	}
	s.cfg.Memory.PipelineV2.MutationsFrozen = false
	if r := post("/api/history/"+applied.HistoryID+"/undo?agent=b", ""); r.code != 409 || !strings.Contains(r.body, "belongs to agent a") {
		t.Errorf("cross-agent undo: %d %s", r.code, r.body)
	}
	if r := post("/api/history/"+applied.HistoryID+"/undo", ""); r.code != 200 {
		t.Errorf("undo: %d %s", r.code, r.body)
	}
	if r := post("/api/history/"+applied.HistoryID+"/undo", ""); r.code != 409 || !strings.Contains(r.body, "already undone") {
		t.Errorf("second undo: %d %s", r.code, r.body)
	}

	s.s.Exec(`UPDATE entity_attributes SET protected = true WHERE id = 'a-theme-1'`)
	if r := post("/api/proposals/"+id["a-theme-1"]+"/apply", ""); r.code != 409 || !strings.Contains(r.body, "protected") {
		t.Errorf("protected: %d %s", r.code, r.body)
	}
	s.s.Exec(`UPDATE entity_attributes SET content = 'Works at Acme (remote)' WHERE id = 'a-work-1'`)
	if r := post("/api/proposals/"+id["a-work-1"]+"/apply", ""); r.code != 409 || !strings.Contains(r.body, "content changed") {
		t.Errorf("stale: %d %s", r.code, r.body)
	}
	if r := post("/api/proposals/"+id["b-home-1"]+"/reject?agent=a", ""); r.code != 409 || !strings.Contains(r.body, "belongs to agent b") {
		t.Errorf("cross-agent: %d %s", r.code, r.body)
	}
	if r := post("/api/proposals/"+id["a-home-1"]+"/reject", ""); r.code != 409 || !strings.Contains(r.body, "already reviewed") {
		t.Errorf("second review: %d %s", r.code, r.body)
	}
	if r := post("/api/proposals/nope/accept", ""); r.code != 404 {
		t.Errorf("unknown: %d %s", r.code, r.body)
	}
}

func TestBulkDecisions(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	post := func(body string) (resp, map[string]any) {
		r := s.do(t, nil, "POST", "/api/bulk", body, bearer)
		var m map[string]any
		_ = json.Unmarshal([]byte(r.body), &m)
		return r, m
	}
	if r, _ := post(`{"action":"reject"}`); r.code != 400 {
		t.Fatalf("no ids and no all: %d %s", r.code, r.body)
	}
	r, m := post(`{"action":"reject","all":true,"dry_run":true,"filter":{"signal":"value_conflict"}}`)
	if r.code != 200 || m["done"] != float64(0) || len(m["results"].([]any)) != 4 {
		t.Fatalf("dry run: %s", r.body)
	}
	r, m = post(`{"action":"reject","all":true,"note":"bulk","filter":{"signal":"value_conflict","agent":"a"}}`)
	if r.code != 200 || m["done"] != float64(3) {
		t.Fatalf("reject all: %s", r.body)
	}
	if _, m = post(`{"action":"reject","all":true,"filter":{"signal":"value_conflict","agent":"a"}}`); m["done"] != float64(0) {
		t.Fatalf("a second run decides nothing: %v", m)
	}
	body, _ := json.Marshal(map[string]any{"action": "apply", "ids": []string{s.ids["a-theme-1"], s.ids["b-home-1"]}, "filter": map[string]string{"agent": "a"}})
	r, m = post(string(body))
	if r.code != 200 || m["done"] != float64(1) || m["refused"] != float64(1) || !strings.Contains(r.body, "belongs to agent b") {
		t.Fatalf("apply by ids, scoped: %s", r.body)
	}
	body, _ = json.Marshal(map[string]any{"action": "undo", "ids": []string{s.ids["a-theme-1"]}})
	if r, m = post(string(body)); m["done"] != float64(1) {
		t.Fatalf("undo by ids: %s", r.body)
	}
	if st, _ := s.s.Status("a-theme-1"); st != "active" {
		t.Fatalf("undone: %s", st)
	}
}

// The token never reaches the log, whatever happens to it.
func TestTokenIsNeverLogged(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	login(t, s, token+"x")
	client, csrf, _ := login(t, s, token)
	s.do(t, nil, "POST", "/api/proposals/"+s.ids["a-home-1"]+"/accept", "", bearer)
	s.do(t, nil, "POST", "/api/proposals/"+s.ids["a-home-1"]+"/accept", "", bearer)
	s.do(t, client, "POST", "/api/bulk", `{"action":"reject","all":true}`, map[string]string{"X-CSRF-Token": csrf})
	logs := s.logs.String()
	if !strings.Contains(logs, "console: decision recorded") || !strings.Contains(logs, "failed login") {
		t.Fatalf("the console logs what it does:\n%s", logs)
	}
	if strings.Contains(logs, token) || strings.Contains(logs, csrf) {
		t.Fatalf("a secret reached the log:\n%s", logs)
	}
}

// The stats page and /api/stats show each rule's standing for earned
// auto-apply: its state, its bound and the reviews it still needs, against
// the enforcement in force.
func TestStatsShowEachRulesStanding(t *testing.T) {
	t.Parallel()
	s := newSite(t, token, func(c *config.Config) {
		c.Maintenance.Enforcement.Mode = "earned"
		c.Maintenance.Enforcement.TargetPrecision = 0.95
	})
	r := s.do(t, nil, "GET", "/api/stats", "", bearer)
	var st struct {
		Enforcement struct {
			Mode   string  `json:"mode"`
			Target float64 `json:"target_precision"`
		} `json:"enforcement"`
		Rules []struct {
			Rule          string  `json:"rule"`
			State         string  `json:"state"`
			Bound         float64 `json:"bound"`
			ReviewsNeeded int     `json:"reviews_needed"`
		} `json:"rules"`
	}
	if r.code != 200 || json.Unmarshal([]byte(r.body), &st) != nil || st.Enforcement.Mode != "earned" || st.Enforcement.Target != 0.95 {
		t.Fatalf("/api/stats: %d %s", r.code, r.body)
	}
	found := false
	for _, rule := range st.Rules {
		if rule.Rule == "value_conflict" {
			found = rule.State == "probation" && rule.Bound == 0 && rule.ReviewsNeeded == earned.ReviewsNeeded(0, 0, 0.95)
		}
	}
	if !found {
		t.Fatalf("value_conflict's standing: %+v", st.Rules)
	}
	page := s.do(t, nil, "GET", "/ui/stats", "", bearer)
	for _, want := range []string{"Earned auto-apply", "<strong>0.95</strong>", `<span class="state probation">probation</span>`,
		fmt.Sprintf(`<td class="num">%d</td>`, earned.ReviewsNeeded(0, 0, 0.95))} {
		if !strings.Contains(page.body, want) {
			t.Errorf("stats page lacks %q", want)
		}
	}
}

// The LLM's reasoning is shown beside its proposals, in the queue and on
// the proposal's page, as the history holds it (masked when it was
// written); a proposal in probation says so and names its rule.
func TestTheLLMsReasoningIsShownBesideItsProposals(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	s.s.Add(memtest.Attr{ID: "car-1", Agent: "a", Aspect: s.s.Aspect("a", "E", "car"), Content: "Drives a 2011 Corolla"},
		memtest.Attr{ID: "car-2", Agent: "a", Aspect: s.s.Aspect("a", "E", "car"), Content: "Bikes everywhere these days"})
	engine := supersession.New(jobs.Deps{DB: s.db.DB})
	reasoning := "[2] makes [1] no longer true: the Corolla gave way to <b>a bike</b>"
	done, err := engine.Propose(context.Background(), s.db.DB, supersession.Actor{ChangedBy: "supersessiond:sweep", Type: "system"},
		[]supersession.Proposal{{Meta: supersession.Metadata{AgentID: "a", OldAttributeID: "car-1", NewAttributeID: "car-2",
			AspectID: s.s.Aspect("a", "E", "car"), Method: supersession.MethodSemantic, Confidence: 0.9, Reasoning: reasoning,
			Signals: supersession.Signals{{Name: "semantic_contradiction", Confidence: 0.9, Detail: reasoning}},
			Mode:    supersession.ModeProbation, Model: "m1", Rule: "llm:m1"}, NewContent: "Bikes everywhere these days", Reason: reasoning}})
	if err != nil || len(done) != 1 {
		t.Fatalf("propose: %v %v", done, err)
	}
	var id string
	if err := s.db.Get(&id, `SELECT id FROM memory_history WHERE metadata->>'old_attribute_id' = 'car-1'`); err != nil {
		t.Fatal(err)
	}
	escaped := "the Corolla gave way to &lt;b&gt;a bike&lt;/b&gt;"
	queue := s.do(t, nil, "GET", "/ui/", "", bearer)
	for _, want := range []string{`<div class="reasoning" title="the LLM's reasoning (m1)">[2] makes [1] no longer true: ` + escaped,
		`<span class="badge probation" title="llm:m1 has not earned auto-apply`} {
		if !strings.Contains(queue.body, want) {
			t.Errorf("the queue lacks %q", want)
		}
	}
	page := s.do(t, nil, "GET", "/ui/proposals/"+id, "", bearer)
	for _, want := range []string{"The LLM's reasoning (m1):</strong> [2] makes [1] no longer true: " + escaped, "llm:m1 has not earned auto-apply"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the proposal's page lacks %q", want)
		}
	}
}
