package console_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/audit"
	"github.com/supersessiond/supersessiond/internal/console"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/internal/testkit/storetest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// Beside Honcho the console lists the documents concluded from retired
// ones (page and API, behind the token like every read); on the attribute
// graph there is no such page.
func TestConsoleListsHonchosDependents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewEmpty(t)
	h, err := storetest.CreateHoncho(ctx, db.DB, storetest.HonchoShape{Schema: "honcho", Dims: 4})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	ids, err := h.Observe(ctx, storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Toronto", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Observe(ctx,
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Takes the streetcar to work", Level: "deductive",
			Session: "-", Sources: ids, CreatedAt: t0.Add(time.Minute)},
		storetest.Observation{Workspace: "acme", Observer: "sam", Content: "Lives in Halifax", CreatedAt: t0.Add(2 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	names, err := storetest.Migrate(ctx, db.DB, storetest.Plan(daemon.DefaultPlan(), schema.StoreHoncho, "honcho"))
	if err != nil {
		t.Fatal(err)
	}
	deps := jobs.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Names: names}
	engine := supersession.New(deps)
	if r, err := sweep.New(deps, engine).Once(ctx, daemon.SettingsOf(config.Default()).Sweep, sweep.Options{}); err != nil || r.Supersessions != 1 {
		t.Fatalf("sweep: %v %+v", err, r)
	}
	c, err := console.New(console.Options{Ops: audit.New(db.DB, names, engine), Settings: func() console.Settings { return daemon.SettingsOf(config.Default()).Console }, Logger: slog.New(slog.DiscardHandler),
		Credentials: func() []console.Credential { return []console.Credential{{Name: "admin", Token: token}} }})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string, auth bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		c.ServeHTTP(w, req)
		return w
	}
	if w := get("/api/dependents", false); w.Code != http.StatusForbidden {
		t.Fatalf("without the token: %d", w.Code)
	}
	w := get("/api/dependents", true)
	var got []audit.Dependent
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || len(got) != 1 || got[0].Content != "Takes the streetcar to work" ||
		len(got[0].StaleBasis) != 1 || got[0].StaleBasis[0] != ids[0] {
		t.Fatalf("api: %d %s", w.Code, w.Body)
	}
	if w := get("/ui/dependents", true); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "Takes the streetcar to work") {
		t.Fatalf("page: %d %s", w.Code, w.Body)
	}
	if w := get("/ui/", true); !strings.Contains(w.Body.String(), `href="/ui/dependents"`) {
		t.Fatal("the navigation has no link to the dependents")
	}
	ref := newSite(t, token)
	if r := ref.do(t, nil, http.MethodGet, "/api/dependents", "", bearer); r.code != http.StatusNotFound {
		t.Fatalf("on the attribute graph: %d %s", r.code, r.body)
	}
}
