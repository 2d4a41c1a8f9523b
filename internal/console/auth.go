package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/ident"
)

// sessionCookie holds a browser session's id, nothing else.
const sessionCookie = "supersessiond_session"

// sessionTTL bounds a browser session; a new login is needed after it.
const sessionTTL = 12 * time.Hour

// Credential is a token that may use the console, and the name the audit
// trail records for it: "admin" for maintenance.http.adminTokenEnv's, the
// operator's for a named one.
type Credential struct {
	Name  string
	Token string
}

// session is a browser that logged in with a token. It remembers which
// credential and the token's digest: when that token changes (a restart
// with another), the session ends with it.
type session struct {
	csrf       string
	credential string   // the credential's name
	token      [32]byte // its token's digest
	operator   string   // who the audit trail records
	source     string   // how that name is known (audit.SourceToken, SourceLogin)
	publicID   string   // what the audit trail records as the session: never the cookie's id
	expires    time.Time
}

// sessions is the server-side session map. Only the random id travels in
// the cookie; the CSRF token is handed to the page and checked against
// the one stored here.
type sessions struct {
	mu sync.Mutex
	m  map[string]*session
}

func newSessions() *sessions { return &sessions{m: map[string]*session{}} }

func (s *sessions) create(cred Credential, operator, source string, now time.Time) (id string, sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.m {
		if now.After(v.expires) {
			delete(s.m, k)
		}
	}
	id = randomHex(32)
	sess = &session{csrf: randomHex(32), credential: cred.Name, token: sha256.Sum256([]byte(cred.Token)),
		operator: operator, source: source, publicID: "s-" + randomHex(8), expires: now.Add(sessionTTL)}
	s.m[id] = sess
	return id, sess
}

// get returns the live session with this id whose credential still holds
// the token it logged in with.
func (s *sessions) get(id string, creds []Credential, now time.Time) *session {
	if id == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.m[id]
	if sess == nil {
		return nil
	}
	valid := false
	for _, c := range creds {
		cur := sha256.Sum256([]byte(c.Token))
		if c.Name == sess.credential && subtle.ConstantTimeCompare(sess.token[:], cur[:]) == 1 {
			valid = true
		}
	}
	if now.After(sess.expires) || !valid {
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

// match returns the credential whose token this is. Every credential is
// compared, so the time taken does not say which one came close.
func match(creds []Credential, token string) (Credential, bool) {
	var found Credential
	ok := false
	for _, c := range creds {
		if equalSecret(token, c.Token) {
			found, ok = c, true
		}
	}
	return found, ok
}

// access is what a request may do.
type access struct {
	reader   bool           // may read: a valid bearer token or session
	admin    bool           // may change data (bearer token, or session and CSRF for POSTs)
	session  *session       // the browser session, when there is one
	operator audit.Operator // who the rows its decisions write name
	retry    time.Duration  // > 0: the client is locked out for this long
	why      string         // why not admin, for the 403
}

// authorize decides what r may do. A Bearer token is checked first (API
// clients), unless the client is locked out for guessing; then the session
// cookie; a POST with a session also needs its CSRF token (X-CSRF-Token
// header, or the csrf form field).
func (c *Console) authorize(r *http.Request) access {
	creds := c.opts.Credentials()
	now := c.opts.Now()
	var a access
	if ck, err := r.Cookie(sessionCookie); err == nil {
		a.session = c.sessions.get(ck.Value, creds, now)
	}
	if h := r.Header.Get("Authorization"); h != "" {
		return c.bearerAccess(r, h, creds, a)
	}
	if a.session == nil {
		a.why = c.needToken(creds)
		return a
	}
	s := a.session
	a.reader = true
	a.operator = audit.Operator{Channel: audit.ChannelConsole, Name: s.operator, Source: s.source, SessionID: s.publicID, RequestID: requestID(r)}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		a.admin = true
		return a
	}
	csrf := r.Header.Get("X-CSRF-Token")
	if csrf == "" {
		csrf = r.PostFormValue("csrf")
	}
	if !equalSecret(csrf, s.csrf) {
		a.why = "missing or wrong CSRF token (reload the page and try again)"
		return a
	}
	a.admin = true
	return a
}

// bearerAccess checks an Authorization header. A client that guessed wrong
// too often is refused before its token is even compared.
func (c *Console) bearerAccess(r *http.Request, header string, creds []Credential, a access) access {
	client := c.client(r)
	if wait := c.guesses.locked(client, c.opts.Now()); wait > 0 {
		a.retry, a.why = wait, "too many wrong tokens from "+client+"; try again later"
		return a
	}
	if len(creds) == 0 {
		a.why = c.needToken(creds)
		return a
	}
	bearer, ok := strings.CutPrefix(header, "Bearer ")
	cred, found := match(creds, strings.TrimSpace(bearer))
	if !ok || !found {
		a.why = "wrong token in the Authorization header"
		if wait := c.guesses.fail(client, c.opts.Now()); wait > 0 {
			a.retry = wait
		}
		return a
	}
	c.guesses.succeed(client)
	a.reader, a.admin = true, true
	a.operator = audit.Operator{Channel: audit.ChannelAPI, Name: cred.Name, Source: audit.SourceToken, RequestID: requestID(r)}
	return a
}

// needToken says what a request without credentials lacks, and how to
// configure a token when there is none.
func (c *Console) needToken(creds []Credential) string {
	if len(creds) == 0 {
		return "no token is configured, so the console is closed: set the environment variable named by maintenance.http.adminTokenEnv (" +
			c.tokenEnv() + "), or maintenance.http.tokens, for the daemon and restart it" +
			" (maintenance.http.openReadsOnLoopback: true lets this host read without one)"
	}
	return "this needs a token: send Authorization: Bearer <token>, or log in at /ui/login"
}

// tokenEnv names the environment variable the admin token is read from.
func (c *Console) tokenEnv() string {
	if env := c.opts.Settings().AdminTokenEnv; env != "" {
		return env
	}
	return "SUPERSESSIOND_ADMIN_TOKEN"
}

// requestID is the request's id in the audit trail: the one the response
// carries in X-Request-Id (set by ServeHTTP).
func requestID(r *http.Request) string {
	if id, ok := r.Context().Value(requestKey{}).(string); ok {
		return id
	}
	return ""
}

type requestKey struct{}

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

// CredentialsOf are the credentials the settings name, with the tokens
// getenv finds; a credential whose variable is unset or empty is left out.
func CredentialsOf(h Settings, getenv func(string) string) []Credential {
	var out []Credential
	if t := getenv(h.AdminTokenEnv); t != "" {
		out = append(out, Credential{Name: ident.Admin, Token: t})
	}
	for _, n := range h.Tokens {
		if t := getenv(n.Env); t != "" {
			out = append(out, Credential{Name: n.Name, Token: t})
		}
	}
	return out
}
