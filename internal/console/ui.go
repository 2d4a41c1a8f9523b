package console

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/ident"
)

// pages are the console's server-rendered pages: one template set per page,
// each with the shared layout.
type pages struct {
	queue, proposal, stats, login, compaction, dependents *template.Template
}

func parsePages() (*pages, error) {
	funcs := template.FuncMap{
		"pct":       func(f float64) string { return strconv.Itoa(int(math.Round(f*100))) + "%" },
		"conf":      func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
		"precision": audit.FormatPrecision,
		"ago":       ago,
		"when":      func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"spans":     spansHTML,
		"short":     func(id string) string { return shortID(id) },
		"deref": func(s *string) string {
			if s == nil {
				return ""
			}
			return *s
		},
		"deref64": func(n *int64) int64 {
			if n == nil {
				return 0
			}
			return *n
		},
		"bar":       bar,
		"json":      func(v any) string { return fmt.Sprint(v) },
		"add":       func(a, b int) int { return a + b },
		"hasPrefix": strings.HasPrefix,
		"slices": func(title string, s []audit.Slice) map[string]any {
			return map[string]any{"Title": title, "Slices": s}
		},
		"precband": func(p *float64) string {
			switch {
			case p == nil:
				return ""
			case *p >= 0.9:
				return "hi"
			case *p >= 0.7:
				return "mid"
			}
			return "lo"
		},
		"band": func(f float64) string {
			switch {
			case f >= 0.8:
				return "hi"
			case f >= 0.65:
				return "mid"
			}
			return "lo"
		},
	}
	parse := func(name string) (*template.Template, error) {
		return template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name)
	}
	var p pages
	var err error
	for _, x := range []struct {
		dst  **template.Template
		name string
	}{{&p.queue, "queue.html"}, {&p.proposal, "proposal.html"}, {&p.stats, "stats.html"}, {&p.login, "login.html"}, {&p.compaction, "compaction.html"}, {&p.dependents, "dependents.html"}} {
		if *x.dst, err = parse(x.name); err != nil {
			return nil, fmt.Errorf("console: parse %s: %w", x.name, err)
		}
	}
	return &p, nil
}

// shortID is an id as the queue shows it: UUIDs by their first group.
func shortID(id string) string {
	if i := strings.IndexByte(id, '-'); i == 8 && len(id) == 36 {
		return id[:8]
	}
	return id
}

func ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// spansHTML renders a diff side: changed words marked, everything escaped.
func spansHTML(spans []Span) template.HTML {
	var b strings.Builder
	for _, s := range spans {
		// The spaces after a changed run stay outside its mark.
		word := strings.TrimRightFunc(s.Text, unicode.IsSpace)
		text, space := template.HTMLEscapeString(word), s.Text[len(word):]
		switch s.Op {
		case '-':
			b.WriteString(`<del>` + text + `</del>` + space)
		case '+':
			b.WriteString(`<ins>` + text + `</ins>` + space)
		default:
			b.WriteString(template.HTMLEscapeString(s.Text))
		}
	}
	return template.HTML(b.String())
}

// barSeg is one coloured part of a stats bar, in percent of its width.
type barSeg struct {
	Class string
	X     float64 // where it starts, in percent
	Pct   float64
	N     int
	Label string
}

// bar splits a slice's proposals into what became of them, for the chart.
func bar(c audit.Counts) []barSeg {
	if c.Proposals == 0 {
		return nil
	}
	right := c.Correct
	wrong := c.Decided - c.Correct
	other := c.Proposals - c.Decided - c.Pending
	segs := []barSeg{
		{Class: "right", N: right, Label: "accepted or applied"},
		{Class: "wrong", N: wrong, Label: "rejected or undone"},
		{Class: "pending", N: c.Pending, Label: "pending"},
		{Class: "other", N: max(other, 0), Label: "stale, undecided"},
	}
	out := segs[:0]
	x := 0.0
	for _, s := range segs {
		if s.N > 0 {
			s.X, s.Pct = x, 100*float64(s.N)/float64(c.Proposals)
			x += s.Pct
			out = append(out, s)
		}
	}
	return out
}

// frame is what every page's layout needs.
type frame struct {
	Title    string
	Nav      string
	Admin    bool   // logged in with the token: actions are offered
	CSRF     string // the session's CSRF token, for forms and the script
	ReadOnly string // why changes are not possible, when they are not
	Shadow   bool
	Frozen   bool
	Flash    string
	FlashErr bool
	GraceMS  int64
	Path     string
	Operator string // who is logged in, as the audit trail records it
	// Review: the review pages are served (the supersession job is on);
	// Watch: the compaction watch's page is; Dependents: Honcho's
	// dependents page is.
	Review, Watch, Dependents bool
}

func (c *Console) frame(r *http.Request, title, nav string) frame {
	cfg := c.opts.Settings()
	f := frame{Title: title, Nav: nav, Shadow: cfg.ShadowMode, Frozen: cfg.Audit.Frozen(),
		GraceMS: c.opts.ReviewGrace.Milliseconds(), Path: r.URL.RequestURI(),
		Review: c.opts.Ops != nil, Watch: c.opts.Compaction != nil, Dependents: c.dependentsOn()}
	a := c.accessOf(r)
	if a.session != nil {
		f.Admin, f.CSRF, f.Operator = true, a.session.csrf, a.session.operator
	} else {
		f.ReadOnly = a.why
	}
	f.Flash = r.URL.Query().Get("flash")
	f.FlashErr = r.URL.Query().Get("flash_err") != ""
	return f
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, t *template.Template, code int, data any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		c.opts.Logger.Error("console: render page", "path", r.URL.Path, "err", err)
		http.Error(w, "internal error (see the daemon's log)", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// signalNames are the signals the filter offers (SPEC §5: the heuristics'
// and the LLM fallback's).
var signalNames = []string{"antonym", "negation_polarity", "semantic_contradiction", "temporal_supersession", "value_conflict"}

// queueRow is one proposal as the queue lists it.
type queueRow struct {
	audit.Proposal
	Old, New []Span
}

type statusTab struct {
	Name   string
	N      int
	Href   string
	Active bool
}

type queueData struct {
	frame
	Filter    audit.ProposalFilter
	MinConf   string
	MaxConf   string
	Agents    []string
	Signals   []string
	Tabs      []statusTab
	Total     int
	Matching  int // proposals the filter selects, all statuses or the one chosen
	Rows      []queueRow
	Older     string
	First     string
	Query     template.URL // the filter as a query string, for links that keep it (built here from parsed values)
	FilterSet bool
}

func (c *Console) queuePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := filterOf(q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if f.Limit == 0 {
		f.Limit = 50
	}
	ctx := r.Context()
	ops := c.opts.Ops
	rows, err := ops.Proposals(ctx, f)
	if err == nil {
		var counts map[string]int
		counts, err = ops.ProposalCounts(ctx, f)
		if err == nil {
			var agents []string
			agents, err = ops.Agents(ctx)
			if err == nil {
				c.render(w, r, c.pages.queue, http.StatusOK, c.queueData(r, f, rows, counts, agents))
				return
			}
		}
	}
	c.opts.Logger.Error("console: queue page", "err", err)
	http.Error(w, "internal error (see the daemon's log)", http.StatusInternalServerError)
}

func (c *Console) queueData(r *http.Request, f audit.ProposalFilter, ps []audit.Proposal, counts map[string]int, agents []string) queueData {
	d := queueData{frame: c.frame(r, "Review queue", "queue"), Filter: f, Agents: agents, Signals: signalNames}
	if f.MinConfidence != nil {
		d.MinConf = strconv.FormatFloat(*f.MinConfidence, 'f', -1, 64)
	}
	if f.MaxConfidence != nil {
		d.MaxConf = strconv.FormatFloat(*f.MaxConfidence, 'f', -1, 64)
	}
	base := url.Values{}
	for k, v := range map[string]string{"agent": f.Agent, "signal": f.Signal, "min": d.MinConf, "max": d.MaxConf} {
		if v != "" {
			base.Set(k, v)
		}
	}
	d.FilterSet = len(base) > 0
	for _, s := range audit.Statuses {
		d.Total += counts[s]
	}
	link := func(status string) string {
		v := url.Values{}
		for k, x := range base {
			v[k] = x
		}
		if status != "" {
			v.Set("status", status)
		}
		if len(v) == 0 {
			return "/ui/"
		}
		return "/ui/?" + v.Encode()
	}
	d.Tabs = append(d.Tabs, statusTab{"all", d.Total, link(""), f.Status == ""})
	for _, s := range audit.Statuses {
		d.Tabs = append(d.Tabs, statusTab{s, counts[s], link(s), f.Status == s})
	}
	d.Matching = d.Total
	if f.Status != "" {
		d.Matching = counts[f.Status]
	}
	for _, p := range ps {
		o, n := WordDiff(p.OldContent, p.NewContent)
		d.Rows = append(d.Rows, queueRow{Proposal: p, Old: o, New: n})
	}
	d.First = link(f.Status)
	if len(ps) == f.Limit && len(ps) > 0 {
		v, _ := url.ParseQuery(strings.TrimPrefix(strings.TrimPrefix(d.First, "/ui/"), "?"))
		v.Set("before", ps[len(ps)-1].ID)
		d.Older = "/ui/?" + v.Encode()
	}
	d.Query = template.URL(strings.TrimPrefix(strings.TrimPrefix(d.First, "/ui/"), "?"))
	return d
}

type proposalData struct {
	frame
	P        *audit.ProposalDetail
	Old, New []Span
	Back     string
}

func (c *Console) proposalPage(w http.ResponseWriter, r *http.Request) {
	d, err := c.proposalDetail(r)
	if errors.Is(err, audit.ErrNotFound) {
		msg := "404: no supersession_proposal with id " + r.PathValue("id")
		if agent := r.URL.Query().Get("agent"); agent != "" {
			msg += " for agent " + agent
		}
		http.Error(w, msg, http.StatusNotFound)
		return
	}
	if err != nil {
		c.opts.Logger.Error("console: proposal page", "err", err)
		http.Error(w, "internal error (see the daemon's log)", http.StatusInternalServerError)
		return
	}
	o, n := WordDiff(d.OldContent, d.NewContent)
	// The queue's filter travels with the page, so Back returns to it.
	q := r.URL.Query()
	q.Del("flash")
	q.Del("flash_err")
	back := "/ui/"
	if len(q) > 0 {
		back += "?" + q.Encode()
	}
	c.render(w, r, c.pages.proposal, http.StatusOK, proposalData{frame: c.frame(r, "Proposal "+shortID(d.ID), "queue"),
		P: d, Old: o, New: n, Back: back})
}

type statsData struct {
	frame
	S      *audit.Stats
	Agent  string
	Since  string
	Agents []string
}

func (c *Console) statsPage(w http.ResponseWriter, r *http.Request) {
	f, err := statsFilterOf(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	st, err := c.opts.Ops.Stats(r.Context(), f, c.opts.Settings().Audit.Enforcement)
	var agents []string
	if err == nil {
		agents, err = c.opts.Ops.Agents(r.Context())
	}
	if err != nil {
		c.opts.Logger.Error("console: stats page", "err", err)
		http.Error(w, "internal error (see the daemon's log)", http.StatusInternalServerError)
		return
	}
	c.render(w, r, c.pages.stats, http.StatusOK, statsData{frame: c.frame(r, "What the reviews say", "stats"), S: st,
		Agent: f.Agent, Since: r.URL.Query().Get("since"), Agents: agents})
}

// ---- login ----

type loginData struct {
	frame
	Next  string
	Error string
}

// loginCookie carries the login form's CSRF token (double submit): there
// is no session yet to keep it in.
const loginCookie = "supersessiond_login"

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, c.pages.login, http.StatusOK, c.loginData(w, r, safeNext(r.URL.Query().Get("next")), ""))
}

func (c *Console) loginData(w http.ResponseWriter, r *http.Request, next, why string) loginData {
	d := loginData{frame: c.frame(r, "Log in", "login"), Next: next, Error: why}
	d.CSRF = randomHex(16)
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: d.CSRF, Path: "/ui/login", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	return d
}

// safeNext keeps a redirect after login inside the console.
func safeNext(next string) string {
	if strings.HasPrefix(next, "/ui/") && !strings.HasPrefix(next, "//") && !strings.Contains(next, "\\") {
		return next
	}
	return "/ui/"
}

// login exchanges a token for a session: an HttpOnly, SameSite=Strict
// cookie holding only a random id. The token itself never leaves this
// handler (never logged, never stored but as a digest). A wrong token
// counts against the client, as a wrong bearer token does. The session
// records its operator: a named token's name, or with the shared admin
// token the name given in the form (else "admin").
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	now := c.opts.Now()
	next := safeNext(r.PostFormValue("next"))
	fail := func(code int, why string) {
		c.render(w, r, c.pages.login, code, c.loginData(w, r, next, why))
	}
	creds, client := c.opts.Credentials(), c.client(r)
	name := strings.TrimSpace(r.PostFormValue("name"))
	ck, err := r.Cookie(loginCookie)
	switch {
	case err != nil || !equalSecret(ck.Value, r.PostFormValue("csrf")):
		fail(http.StatusForbidden, "The login form expired or came from elsewhere (CSRF check): try again.")
		return
	case len(creds) == 0:
		fail(http.StatusForbidden, "This console is closed: "+c.needToken(creds)+".")
		return
	case name != "" && !ident.ValidOperator(name):
		fail(http.StatusBadRequest, "A name is 1 to 64 letters, digits or . _ @ - (it is what the audit trail records).")
		return
	}
	if wait := c.guesses.locked(client, now); wait > 0 {
		c.refused.WithLabelValues("locked_out").Inc()
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		fail(http.StatusTooManyRequests, "Too many wrong tokens from your address; try again in "+wait.Round(time.Second).String()+".")
		return
	}
	cred, ok := match(creds, r.PostFormValue("token"))
	if !ok {
		c.opts.Logger.Warn("console: failed login", "remote", r.RemoteAddr, "client", client)
		if wait := c.guesses.fail(client, now); wait > 0 {
			c.refused.WithLabelValues("locked_out").Inc()
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			fail(http.StatusTooManyRequests, "Too many wrong tokens from your address; try again in "+wait.Round(time.Second).String()+".")
			return
		}
		fail(http.StatusForbidden, "That is not a token this console knows.")
		return
	}
	c.guesses.succeed(client)
	operator, source := cred.Name, audit.SourceToken
	if cred.Name == ident.Admin && name != "" {
		operator, source = name, audit.SourceLogin
	}
	id, sess := c.sessions.create(cred, operator, source, now)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: int(sessionTTL.Seconds())})
	c.opts.Logger.Info("console: login", "remote", r.RemoteAddr, "operator", operator, "token", cred.Name, "session", sess.publicID)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	if !c.admit(w, r) {
		return
	}
	if ck, err := r.Cookie(sessionCookie); err == nil {
		c.sessions.drop(ck.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// formAction is the pages' forms: the same decisions as the API, for a
// browser without the script. It answers with a redirect back and a line
// saying what was done.
func (c *Console) formAction(w http.ResponseWriter, r *http.Request) {
	if !c.admit(w, r) {
		return
	}
	back := safeNext(r.PostFormValue("back"))
	req := actionRequest{Action: r.PostFormValue("action"), Note: r.PostFormValue("note"), All: r.PostFormValue("all") == "true"}
	req.IDs = r.PostForm["id"]
	fq, _ := url.ParseQuery(r.PostFormValue("filter"))
	f, err := filterOf(fq)
	if err == nil {
		req.Filter.Agent, req.Filter.Status, req.Filter.Signal = f.Agent, f.Status, f.Signal
		req.Filter.MinConfidence, req.Filter.MaxConfidence = f.MinConfidence, f.MaxConfidence
	}
	var res *actionResult
	if err == nil {
		if h := r.PostFormValue("history_id"); req.Action == "undo" && h != "" {
			var rev string
			rev, err = c.ops(r).Undo(r.Context(), c.opts.Settings().Audit, h)
			res = &actionResult{Action: "undo", Done: 1, Results: []outcome{{HistoryID: rev}}}
		} else {
			res, err = c.perform(r.Context(), c.ops(r), req)
		}
	}
	msg, isErr := "", false
	switch {
	case errors.Is(err, audit.ErrRefused):
		msg, isErr = err.Error(), true
	case err != nil:
		var bad *badRequest
		if !errors.As(err, &bad) {
			c.opts.Logger.Error("console: form action", "err", err)
			msg, isErr = "internal error (see the daemon's log)", true
		} else {
			msg, isErr = bad.msg, true
		}
	default:
		c.logAction(r, req.Action, res.Done)
		msg = fmt.Sprintf("%s: %d done", req.Action, res.Done)
		if res.Refused > 0 {
			msg += fmt.Sprintf(", %d refused (%s)", res.Refused, firstError(res))
			isErr = true
		}
	}
	u, _ := url.Parse(back)
	q := u.Query()
	q.Set("flash", msg)
	if isErr {
		q.Set("flash_err", "1")
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

func firstError(res *actionResult) string {
	for _, o := range res.Results {
		if o.Error != "" {
			return o.Error
		}
	}
	return ""
}
