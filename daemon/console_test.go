package daemon_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// Beside Honcho (supersession off) the console says why it is not there
// and which setting turns it on, instead of a bare 404; its script and
// styles are still served for that page.
func TestConsoleOffSaysWhy(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	h := start(t, db.URL, "memory:\n  pipelineV2:\n    structural:\n      supersessionEnabled: false\n", nil)
	for _, path := range []string{"/ui/", "/ui/proposals/x", "/api/proposals"} {
		code, body := h.get(path)
		if code != 404 || !strings.Contains(body, "supersessionEnabled") || !strings.Contains(body, "restart") {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	if _, body := h.get("/api/proposals"); !strings.HasPrefix(strings.TrimSpace(body), "{") {
		t.Errorf("the API answers JSON: %s", body)
	}
	if code, _ := h.get("/ui/static/console.css"); code != 200 {
		t.Errorf("the page's styles: %d", code)
	}
	if code, _ := h.get("/readyz"); code != 200 {
		t.Errorf("/readyz: %d", code)
	}
}

// The console runs on a pool of its own (its connections show apart in
// /metrics), reads need the token from the environment, and the named
// tokens of the configuration work too.
func TestConsoleHasItsOwnPoolAndNeedsAToken(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	env := func(o *daemon.Options) {
		o.Environ = func() []string { return []string{"SUPERSESSIOND_ADMIN_TOKEN=t0ken-admin", "TOKEN_ALICE=t0ken-alice"} }
		o.Initial.Config.Maintenance.HTTP.Tokens = config.Tokens{{Name: "alice", Env: "TOKEN_ALICE"}}
	}
	h := start(t, db.URL, "", nil, env)
	get := func(path, tok string) int {
		req, _ := http.NewRequest("GET", "http://"+h.addr+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := get("/api/proposals", ""); code != 403 {
		t.Errorf("a read without a token: %d", code)
	}
	for _, tok := range []string{"t0ken-admin", "t0ken-alice"} {
		if code := get("/api/proposals", tok); code != 200 {
			t.Errorf("a read with %s: %d", tok, code)
		}
	}
	_, metrics := h.get("/metrics")
	for _, want := range []string{`go_sql_max_open_connections{db_name="console"} 2`, `go_sql_max_open_connections{db_name="agent"} 3`,
		`supersessiond_console_requests_refused_total{reason="unauthorized"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// The console's settings are set up once: a reload that changes one keeps
// the running value and says, per key, that it needs a restart.
func TestReloadNamesTheConsoleSettingsThatNeedARestart(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	h := start(t, db.URL, "", nil)
	edited := strings.Replace(fmt.Sprintf(baseYAML, db.URL), "    listen: 127.0.0.1:0\n",
		"    listen: 127.0.0.1:0\n    openReadsOnLoopback: true\n    tokens: [{name: alice, env: TOKEN_ALICE}]\n", 1)
	h.write(edited)
	h.eventually("the reload", func() bool { return strings.Contains(h.log.String(), "configuration reloaded") })
	for _, key := range []string{"maintenance.http.openReadsOnLoopback", "maintenance.http.tokens"} {
		if !strings.Contains(h.log.String(), "key="+key) {
			t.Errorf("the log does not say %s needs a restart:\n%s", key, h.log)
		}
	}
	if h.d.Config().Maintenance.HTTP.OpenReadsOnLoopback {
		t.Error("the running console's settings must stay as they started")
	}
}

// Beside clawbolt (supersession off, the compaction job watching) the
// console serves the watch's page, behind the token, instead of saying it
// is off.
func TestConsoleServesTheCompactionWatchBesideClawbolt(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	pgtest.LoadStack(t, db, "../testdata/stacks/clawbolt.sql")
	clawbolt := func(o *daemon.Options) {
		c := o.Initial.Config
		c.Memory.PipelineV2.Structural.SupersessionEnabled = false
		c.Maintenance.Database.Schema = "clawbolt"
		c.Maintenance.Schedules.Tombstones = config.ScheduleOff
		o.Environ = func() []string { return []string{"SUPERSESSIOND_ADMIN_TOKEN=t0ken-admin"} }
	}
	loaded := config.Default()
	loaded.Memory.PipelineV2.Structural.SupersessionEnabled = false
	loaded.Maintenance.Database.Schema = "clawbolt"
	loaded.Maintenance.Schedules.Tombstones = config.ScheduleOff
	if _, err := schema.Migrate(context.Background(), db.DB, daemon.SettingsOf(loaded).Plan, schema.Options{}); err != nil {
		t.Fatal(err)
	}
	h := start(t, db.URL, "", nil, clawbolt)
	if code, _ := h.get("/api/compaction"); code != 403 {
		t.Fatalf("the watch without a token: %d", code)
	}
	req, _ := http.NewRequest("GET", "http://"+h.addr+"/ui/compaction", nil)
	req.Header.Set("Authorization", "Bearer t0ken-admin")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "a81d5e07-2c9b-4f63-b0e4-9d7716c3e2f5") {
		t.Fatalf("GET /ui/compaction: %d\n%s", res.StatusCode, body)
	}
}
