package console_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/console"
)

// loginAs logs in through the form with a token and a name.
func loginAs(t *testing.T, s *site, tok, name string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := noRedirect(jar)
	page := s.do(t, client, "GET", "/ui/login", "", nil)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("login form has no CSRF token:\n%s", page.body)
	}
	r := s.do(t, client, "POST", "/ui/login", url.Values{"token": {tok}, "csrf": {m[1]}, "name": {name}, "next": {"/ui/"}}.Encode(), nil)
	if r.code != 303 {
		t.Fatalf("login: %d %s", r.code, r.body)
	}
	q := s.do(t, client, "GET", "/ui/", "", nil)
	cm := regexp.MustCompile(`data-csrf="([0-9a-f]*)"`).FindStringSubmatch(q.body)
	if cm == nil || cm[1] == "" {
		t.Fatalf("no session CSRF token:\n%s", q.body)
	}
	return client, cm[1]
}

// A decision made in the console names its operator, channel, session and
// request in history; with a named token the token's name is recorded, with
// the shared admin token the name given at login; the proposal page and
// the queue say who decided.
func TestConsoleRecordsWhoDecided(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	s.named = []console.Credential{{Name: "alice", Token: "alice-token-0123456789abcdef"}, {Name: "bob", Token: "bob-token-0123456789abcdef"}}

	dana, danaCSRF := loginAs(t, s, token, "dana")
	bob, bobCSRF := loginAs(t, s, "bob-token-0123456789abcdef", "eve")
	r := s.do(t, dana, "POST", "/api/proposals/"+s.ids["a-home-1"]+"/accept", `{"note":"ok"}`, map[string]string{"X-CSRF-Token": danaCSRF})
	if r.code != 200 {
		t.Fatalf("accept: %d %s", r.code, r.body)
	}
	danaRequest := r.header.Get("X-Request-Id")
	if r := s.do(t, bob, "POST", "/api/proposals/"+s.ids["a-theme-1"]+"/reject", `{}`, map[string]string{"X-CSRF-Token": bobCSRF}); r.code != 200 {
		t.Fatalf("reject: %d %s", r.code, r.body)
	}
	alice := map[string]string{"Authorization": "Bearer alice-token-0123456789abcdef"}
	if r := s.do(t, nil, "POST", "/api/proposals/"+s.ids["a-home-1"]+"/apply", "", alice); r.code != 200 {
		t.Fatalf("apply: %d %s", r.code, r.body)
	}
	if r := s.do(t, nil, "POST", "/api/bulk", `{"action":"undo","ids":["`+s.ids["a-home-1"]+`"]}`, bearer); r.code != 200 {
		t.Fatalf("undo: %d %s", r.code, r.body)
	}

	type row struct {
		Event     string `db:"event"`
		ChangedBy string `db:"changed_by"`
		Operator  string `db:"operator"`
		Source    string `db:"source"`
		Session   string `db:"session_id"`
		Request   string `db:"request_id"`
	}
	var rows []row
	if err := s.db.Select(&rows, `SELECT event, changed_by, coalesce(metadata->>'operator', '') AS operator,
		coalesce(metadata->>'operator_source', '') AS source, coalesce(session_id, '') AS session_id, coalesce(request_id, '') AS request_id
		FROM memory_history WHERE event <> 'supersession_proposal' ORDER BY created_at, id`); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("rows: %+v", rows)
	}
	want := []struct{ event, by, operator, source string }{
		{"supersession_proposal_accepted", "supersessiond:console", "dana", "login"},
		{"supersession_proposal_rejected", "supersessiond:console", "bob", "token"},
		{"attribute_superseded", "supersessiond:api", "alice", "token"},
		{"supersession_reverted", "supersessiond:api", "admin", "token"},
	}
	for i, w := range want {
		g := rows[i]
		if g.Event != w.event || g.ChangedBy != w.by || g.Operator != w.operator || g.Source != w.source || g.Request == "" {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	if rows[0].Request != danaRequest || !strings.HasPrefix(rows[0].Session, "s-") || rows[1].Session == rows[0].Session || rows[2].Session != "" {
		t.Errorf("sessions and requests: %+v (dana's request %s)", rows, danaRequest)
	}
	for _, ck := range dana.Jar.Cookies(mustURL(t, s.srv.URL)) {
		if ck.Name == "supersessiond_session" && strings.Contains(rows[0].Session, ck.Value) {
			t.Fatal("the audit trail must not hold the session's cookie")
		}
	}

	page := s.do(t, dana, "GET", "/ui/proposals/"+s.ids["a-home-1"], "", nil)
	for _, w := range []string{"Accepted by <strong", "dana (console)", "Applied by", "alice (api)", "Undone by", "admin (api)"} {
		if !strings.Contains(page.body, w) {
			t.Errorf("the proposal page lacks %q", w)
		}
	}
	queue := s.do(t, dana, "GET", "/ui/?agent=a", "", nil)
	if !strings.Contains(queue.body, "by bob") || !strings.Contains(queue.body, "by admin") || !strings.Contains(queue.body, `class="operator"`) {
		t.Errorf("the queue says who decided and who is logged in:\n%s", queue.body)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// GET /api/proposals/{id}?agent= is scoped to that agent: another agent's
// proposal is not found, as the changes refuse another agent's ids.
func TestProposalReadIsScopedToItsAgent(t *testing.T) {
	t.Parallel()
	s := newSite(t, token)
	b := s.ids["b-home-1"]
	if r := s.do(t, nil, "GET", "/api/proposals/"+b+"?agent=a", "", bearer); r.code != 404 || strings.Contains(r.body, "Paris") {
		t.Errorf("another agent's proposal: %d %s", r.code, r.body)
	}
	if r := s.do(t, nil, "GET", "/api/proposals/"+b+"?agent=b", "", bearer); r.code != 200 || !strings.Contains(r.body, "Paris") {
		t.Errorf("its own agent's: %d", r.code)
	}
	if r := s.do(t, nil, "GET", "/api/proposals/"+b, "", bearer); r.code != 200 {
		t.Errorf("unscoped: %d", r.code)
	}
	client, _, _ := login(t, s, token)
	if r := s.do(t, client, "GET", "/ui/proposals/"+b+"?agent=a", "", nil); r.code != 404 || strings.Contains(r.body, "Paris") {
		t.Errorf("the page, scoped to another agent: %d", r.code)
	}
}
