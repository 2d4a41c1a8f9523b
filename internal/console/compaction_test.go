package console_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/console"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs/compaction"
)

// Beside clawbolt the supersession job is off and the compaction job only
// watches: the console serves the watch's page alone, behind the token like
// every read; /ui/ leads to it; the review pages say why they are off.
func TestCompactionWatchPage(t *testing.T) {
	t.Parallel()
	db := pgtest.NewEmpty(t)
	pgtest.LoadStack(t, db, "../../testdata/stacks/clawbolt.sql")
	plan := schema.Plan{On: map[schema.Job]bool{schema.Compaction: true}, Schema: "clawbolt", Own: "supersessiond", Tables: map[string]string{}}
	res, err := schema.Migrate(context.Background(), db.DB, plan, schema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	st := &site{cfg: cfg, srv: httptest.NewUnstartedServer(nil)}
	st.opts = console.Options{Settings: func() console.Settings { return daemon.SettingsOf(cfg).Console },
		Compaction: func(ctx context.Context) (*compaction.Watch, error) {
			c := cfg.Maintenance.Compaction
			return compaction.Watchlist(ctx, db.DB, res.Layout.Names, c.StaleAfter, c.Lookback, c.StackMaxAttempts, time.Now())
		},
		Credentials: func() []console.Credential { return []console.Credential{{Name: "admin", Token: token}} },
		Listen:      st.srv.Listener.Addr().String()}
	st.start(t)

	if r := st.do(t, nil, "GET", "/ui/compaction", "", nil); r.code != 303 || !strings.HasPrefix(r.header.Get("Location"), "/ui/login") {
		t.Fatalf("the watch without a token: %d %s", r.code, r.header.Get("Location"))
	}
	if r := st.do(t, nil, "GET", "/api/compaction", "", nil); r.code != 403 || strings.Contains(r.body, "a81d5e07") {
		t.Fatalf("the watch's API without a token: %d %s", r.code, r.body)
	}
	r := st.do(t, nil, "GET", "/ui/compaction", "", bearer)
	for _, want := range []string{"a81d5e07-2c9b-4f63-b0e4-9d7716c3e2f5", "at the stack&#39;s retry cap (3 of 3 attempts)", "no range",
		`href="/ui/compaction" class="on"`} {
		if r.code != 200 || !strings.Contains(r.body, want) {
			t.Fatalf("GET /ui/compaction: %d, %q missing\n%s", r.code, want, r.body)
		}
	}
	if strings.Contains(r.body, `href="/ui/stats"`) {
		t.Fatal("the nav offers the review pages the console does not serve")
	}
	r = st.do(t, nil, "GET", "/api/compaction", "", bearer)
	var w compaction.Watch
	if err := json.Unmarshal([]byte(r.body), &w); err != nil || r.code != 200 || w.Stale != 3 || w.AtStackCap != 1 || len(w.Events) != 3 {
		t.Fatalf("GET /api/compaction: %d %v %s", r.code, err, r.body)
	}
	if r := st.do(t, nil, "GET", "/ui/", "", bearer); r.code != 303 || r.header.Get("Location") != "/ui/compaction" {
		t.Fatalf("/ui/ leads to the watch: %d %s", r.code, r.header.Get("Location"))
	}
	if r := st.do(t, nil, "GET", "/api/proposals", "", bearer); r.code != 404 || !strings.Contains(r.body, "supersessionEnabled") {
		t.Fatalf("the review API with the supersession job off: %d %s", r.code, r.body)
	}
}
