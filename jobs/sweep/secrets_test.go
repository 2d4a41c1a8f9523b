package sweep_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/llm"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// A model that repeats the API key it was sent and the admin token in its
// reasoning: the verdict cache and the supersession's history row (reason,
// metadata.reasoning, the signal's detail) carry neither; nor does the
// history row of a pair whose verdict was cached, secret and all, before the
// redactor knew the secret.
func TestEchoedSecretsAreNeverStored(t *testing.T) {
	t.Parallel()
	const key, token = "Q7fL2mZx9RkT4wVb8NcY", "console-Adm1nToken-5521"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echoed := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{
			"content": windowReply("my key "+echoed+" and your token "+token, [2]int{1, 2})}}}})
	}))
	defer srv.Close()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	seedSemantic(s)
	cached := s.Aspect("a", "Sam", "deploys")
	s.Add(
		memtest.Attr{ID: "c1", Agent: "a", Aspect: cached, Content: "The nightly deploy job runs from the Jenkins server"},
		memtest.Attr{ID: "c2", Agent: "a", Aspect: cached, Content: "The nightly deploy job now runs inside GitHub Actions"},
	)
	// The deploys window answered long ago, the key in its reasoning.
	var rows []struct {
		Content string    `db:"content"`
		At      time.Time `db:"created_at"`
	}
	if err := db.Select(&rows, `SELECT content, created_at FROM entity_attributes WHERE aspect_id = $1 ORDER BY created_at, id`, cached); err != nil {
		t.Fatal(err)
	}
	req := llm.WindowRequest{Aspect: "deploys"}
	for _, r := range rows {
		req.Statements = append(req.Statements, llm.WindowStatement{At: r.At, Text: r.Content})
	}
	k := req.Key("test-model")
	s.Exec(`INSERT INTO supersessiond.llm_windows (key, model, state, verdict) VALUES ($1, 'test-model', 'answered', $2)`,
		k[:], `{"reasoning": "cached long ago, with `+key+` in it", "retired": [{"older": 1, "newer": 2, "confidence": 0.9}]}`)
	env := map[string]string{"OPENAI_API_KEY": key, "SUPERSESSIOND_ADMIN_TOKEN": token}
	llms := llm.NewProvider(func(k string) string { return env[k] }, nil)
	r, err := newJob(db.DB, llms).Once(context.Background(), settings(semanticCfg(srv.URL)), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Supersessions != 2 || r.SemanticAsked != 1 {
		t.Fatalf("want both pairs superseded, one of them asked: %+v", r)
	}
	for _, secret := range []string{key, token} {
		if n := s.Count(`SELECT count(*) FROM memory_history h WHERE h::text LIKE '%' || $1 || '%'`, secret); n > 0 {
			t.Errorf("%d history rows carry %q", n, secret)
		}
		if n := s.Count(`SELECT count(*) FROM supersessiond.llm_windows v WHERE v::text LIKE '%' || $1 || '%'`, secret); n > 1 {
			t.Errorf("%d windows carry %q: only the one stored before may", n, secret)
		}
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE reason LIKE '%my key xxxxx and your token xxxxx%'`); n != 1 {
		t.Errorf("the masked reasoning is not in the history's reason (%d rows)", n)
	}
}
