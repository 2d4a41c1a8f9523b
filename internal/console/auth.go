package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// sessionCookie holds a browser session's id, nothing else.
const sessionCookie = "supersessiond_session"

// sessionTTL bounds a browser session; a new login is needed after it.
const sessionTTL = 12 * time.Hour

// session is a browser that logged in with the admin token. It remembers
// the token's digest: when the daemon's token changes (a restart with
// another), the session ends with it.
type session struct {
	csrf    string
	token   [32]byte
	expires time.Time
}

// sessions is the server-side session map. Only the random id travels in
// the cookie; the CSRF token is handed to the page and checked against
// the one stored here.
type sessions struct {
	mu sync.Mutex
	m  map[string]*session
}

func newSessions() *sessions { return &sessions{m: map[string]*session{}} }

func (s *sessions) create(token string, now time.Time) (id string, sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.m {
		if now.After(v.expires) {
			delete(s.m, k)
		}
	}
	id = randomHex(32)
	sess = &session{csrf: randomHex(32), token: sha256.Sum256([]byte(token)), expires: now.Add(sessionTTL)}
	s.m[id] = sess
	return id, sess
}

// get returns the live session with this id whose token is the current one.
func (s *sessions) get(id, token string, now time.Time) *session {
	if id == "" || token == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.m[id]
	if sess == nil {
		return nil
	}
	cur := sha256.Sum256([]byte(token))
	if now.After(sess.expires) || subtle.ConstantTimeCompare(sess.token[:], cur[:]) != 1 {
		delete(s.m, id)
		return nil
	}
	return sess
}

func (s *sessions) drop(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("console: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// equalSecret compares two secrets in constant time, lengths included (the
// digests have one length whatever the inputs).
func equalSecret(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1 && a != "" && b != ""
}

// access is what a request may do.
type access struct {
	admin   bool     // may change data (bearer token, or session and CSRF for POSTs)
	session *session // the browser session, when there is one
	why     string   // why not admin, for the 403
}

// authorize decides what r may do. A Bearer token is checked first (API
// clients); then the session cookie; a POST with a session also needs its
// CSRF token (X-CSRF-Token header, or the csrf form field).
func (c *Console) authorize(r *http.Request) access {
	token := c.opts.Token()
	var a access
	if ck, err := r.Cookie(sessionCookie); err == nil {
		a.session = c.sessions.get(ck.Value, token, c.opts.Now())
	}
	if token == "" {
		a.why = "read-only: no admin token is configured; set the environment variable named by maintenance.http.adminTokenEnv (" +
			c.tokenEnv() + ") for the daemon to allow changes"
		return a
	}
	if h := r.Header.Get("Authorization"); h != "" {
		bearer, ok := strings.CutPrefix(h, "Bearer ")
		if ok && equalSecret(strings.TrimSpace(bearer), token) {
			a.admin = true
			return a
		}
		a.why = "wrong admin token in the Authorization header"
		return a
	}
	if a.session == nil {
		a.why = "this needs the admin token: send Authorization: Bearer <token>, or log in at /ui/login"
		return a
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		a.admin = true
		return a
	}
	csrf := r.Header.Get("X-CSRF-Token")
	if csrf == "" {
		csrf = r.PostFormValue("csrf")
	}
	if !equalSecret(csrf, a.session.csrf) {
		a.why = "missing or wrong CSRF token (reload the page and try again)"
		return a
	}
	a.admin = true
	return a
}

// tokenEnv names the environment variable the token is read from.
func (c *Console) tokenEnv() string {
	if cfg := c.opts.Config(); cfg != nil && cfg.Maintenance.HTTP.AdminTokenEnv != "" {
		return cfg.Maintenance.HTTP.AdminTokenEnv
	}
	return "SUPERSESSIOND_ADMIN_TOKEN"
}

// loopback reports whether the request comes from this host. Reads need no
// credentials from here; from anywhere else (a listener bound beyond
// loopback) they need the token too, since the queue shows the agent's
// memory.
func loopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin refuses a cross-site POST: when the browser says where the
// request comes from, it must be this host. SameSite=Strict and the CSRF
// token already stop them; this is a third, cheap lock.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return origin == scheme+r.Host
}

// loginLimiter slows token guessing: after too many failed logins in a
// minute, logins are refused until the minute is over.
type loginLimiter struct {
	mu       sync.Mutex
	window   time.Time
	failures int
}

const maxLoginFailures = 20

func (l *loginLimiter) allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.window) > time.Minute {
		l.window, l.failures = now, 0
	}
	return l.failures < maxLoginFailures
}

func (l *loginLimiter) fail(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.window) > time.Minute {
		l.window, l.failures = now, 0
	}
	l.failures++
}
