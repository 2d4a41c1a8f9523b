package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/config"
)

// clock is a test's clock: now, moved on by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Wrong tokens are limited per client: after ten wrong bearer tokens or
// logins a client gets 429 with Retry-After, even with the right token,
// while another client is not affected; the lockout ends, and grows when
// the guessing goes on.
func TestWrongTokensAreLimitedPerClient(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	clk := &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	s.opts.Now = clk.Now
	s.start(t)
	const guesser, operator = "192.0.2.66:5000", "192.0.2.10:6000"
	wrong := map[string]string{"Authorization": "Bearer guess"}
	for i := range 9 {
		if w := s.get("/api/stats", guesser, "", wrong); w.Code != 403 {
			t.Fatalf("wrong token %d: %d", i+1, w.Code)
		}
	}
	w := s.get("/api/stats", guesser, "", wrong)
	if w.Code != 429 || w.Header().Get("Retry-After") != "60" {
		t.Fatalf("the tenth wrong token: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if w := s.get("/api/stats", guesser, "", bearer); w.Code != 429 || strings.Contains(w.Body.String(), "precision") {
		t.Fatalf("a locked-out client is refused even with the right token: %d", w.Code)
	}
	if w := s.get("/api/stats", operator, "", bearer); w.Code != 200 {
		t.Fatalf("another client is not affected: %d %s", w.Code, w.Body.String())
	}
	// Logins count against the same client, and are refused while locked.
	if r := loginFrom(t, s, guesser, token); r.Code != 429 || r.Header().Get("Retry-After") == "" {
		t.Fatalf("a login from the locked-out client: %d", r.Code)
	}
	if r := loginFrom(t, s, operator, token); r.Code != 303 {
		t.Fatalf("the operator logs in meanwhile: %d %s", r.Code, r.Body.String())
	}
	clk.add(61 * time.Second)
	if w := s.get("/api/stats", guesser, "", bearer); w.Code != 200 {
		t.Fatalf("after the lockout: %d", w.Code)
	}
	// The right token cleared the count; ten more wrong logins lock it
	// again, for twice as long.
	for i := range 9 {
		if r := loginFrom(t, s, guesser, "guess"); r.Code != 403 {
			t.Fatalf("wrong login %d: %d", i+1, r.Code)
		}
	}
	if r := loginFrom(t, s, guesser, "guess"); r.Code != 429 || r.Header().Get("Retry-After") != "60" {
		t.Fatalf("the tenth wrong login: %d %q", r.Code, r.Header().Get("Retry-After"))
	}
	clk.add(61 * time.Second)
	for range 10 {
		s.get("/api/stats", guesser, "", wrong)
	}
	if w := s.get("/api/stats", guesser, "", bearer); w.Code != 429 || w.Header().Get("Retry-After") != "120" {
		t.Fatalf("a second lockout is longer: %d %q", w.Code, w.Header().Get("Retry-After"))
	}
}

type httptestRecorder = httptest.ResponseRecorder

// post serves one form POST as if from remote.
func (s *site) post(path, remote, body string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.RemoteAddr = remote
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.c.ServeHTTP(w, req)
	return w
}

// loginFrom posts the login form as a browser at remote would.
func loginFrom(t *testing.T, s *site, remote, tok string) *httptestRecorder {
	t.Helper()
	page := s.get("/ui/login", remote, "", nil)
	csrf := ""
	for _, c := range page.Result().Cookies() {
		if c.Name == "supersessiond_login" {
			csrf = c.Value
		}
	}
	form := url.Values{"token": {tok}, "csrf": {csrf}, "next": {"/ui/"}}
	return s.post("/ui/login", remote, form.Encode(), map[string]string{"Cookie": "supersessiond_login=" + csrf})
}

// Behind a trusted proxy, its X-Forwarded-For names the client: one
// client's guessing does not lock out the proxy's other clients. From an
// untrusted peer the header is ignored.
func TestTrustedProxyNamesTheClient(t *testing.T) {
	t.Parallel()
	s := newSite(t, token, func(c *config.Config) { c.Maintenance.HTTP.TrustedProxies = "127.0.0.1" })
	proxy := "127.0.0.1:7000"
	for range 10 {
		s.get("/api/stats", proxy, "", map[string]string{"Authorization": "Bearer guess", "X-Forwarded-For": "203.0.113.5, 198.51.100.7"})
	}
	if w := s.get("/api/stats", proxy, "", map[string]string{"Authorization": "Bearer " + token, "X-Forwarded-For": "198.51.100.7"}); w.Code != 429 {
		t.Fatalf("the guessing client, through the proxy: %d", w.Code)
	}
	if w := s.get("/api/stats", proxy, "", map[string]string{"Authorization": "Bearer " + token, "X-Forwarded-For": "198.51.100.8"}); w.Code != 200 {
		t.Fatalf("another client through the proxy: %d", w.Code)
	}
	// An untrusted peer's header is its own claim: ignored.
	for range 10 {
		s.get("/api/stats", "192.0.2.1:1", "", map[string]string{"Authorization": "Bearer guess", "X-Forwarded-For": "203.0.113.77"})
	}
	if w := s.get("/api/stats", "192.0.2.1:2", "", map[string]string{"Authorization": "Bearer " + token, "X-Forwarded-For": "198.51.100.9"}); w.Code != 429 {
		t.Fatalf("a forged X-Forwarded-For from an untrusted peer: %d", w.Code)
	}
}

// Requests beyond maxConcurrentRequests wait a moment, then get 503 with
// Retry-After; what is already served finishes.
func TestConsoleConcurrencyIsBounded(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	s.opts.MaxConcurrent, s.opts.QueueWait = 1, 50*time.Millisecond
	s.start(t)
	// Hold the history table so that the first read waits inside the
	// console, holding its one place.
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`LOCK TABLE memory_history IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	first := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("GET", s.srv.URL+"/api/proposals", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- 0
			return
		}
		res.Body.Close()
		first <- res.StatusCode
	}()
	s.waitLockWaiter(t)
	// One more: turned away, not queued behind the lock (the client gives
	// up long after the console should have, so that a console that queues
	// it fails this test rather than hanging it).
	req, _ := http.NewRequest("GET", s.srv.URL+"/api/stats", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := (&http.Client{Timeout: time.Minute}).Do(req)
	_ = tx.Rollback()
	if err != nil {
		t.Fatalf("one request too many was never turned away: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("one request too many: %d %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if code := <-first; code != 200 {
		t.Fatalf("the request being served: %d", code)
	}
	if r := s.do(t, nil, "GET", "/api/stats", "", bearer); r.code != 200 {
		t.Fatalf("once it is done: %d", r.code)
	}
}

// waitLockWaiter waits until a session waits for a lock.
func (s *site) waitLockWaiter(t *testing.T) {
	t.Helper()
	for range 500 {
		var n int
		if err := s.db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`); err == nil && n > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no request waited on the lock")
}

// The static files are served, their directory is never listed.
func TestStaticFilesListNoDirectory(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	for path, code := range map[string]int{"/ui/static/": 404, "/ui/static/console.js": 200, "/ui/static/nope.js": 404} {
		r := s.do(t, nil, "GET", path, "", nil)
		if r.code != code || strings.Contains(r.body, `href="console.js"`) {
			t.Errorf("GET %s: %d, want %d\n%s", path, r.code, code, r.body)
		}
	}
}

// While the server is nearly out of connection slots (store.Guard), the
// console opens none: a request gets 503 with Retry-After, and is served
// again once there is room.
func TestConsoleLeavesACrowdedServerToTheAgent(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	var crowded atomic.Bool
	crowded.Store(true)
	s.opts.Room = func(context.Context) bool { return !crowded.Load() }
	s.start(t)
	req, _ := http.NewRequest("GET", s.srv.URL+"/api/stats", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("a crowded server: %d %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	crowded.Store(false)
	if r := s.do(t, nil, "GET", "/api/stats", "", bearer); r.code != 200 {
		t.Fatalf("with room again: %d", r.code)
	}
}
