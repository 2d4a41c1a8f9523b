package sweep_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
			"content": `{"contradicts": true, "confidence": 0.9, "reasoning": "my key ` + echoed + ` and your token ` + token + `"}`}}}})
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
	s.Exec(`INSERT INTO supersessiond.llm_verdicts (old_hash, new_hash, model, contradicts, confidence, reasoning)
		VALUES (sha256(convert_to($1, 'UTF8')), sha256(convert_to($2, 'UTF8')), 'test-model', true, 0.9, $3)`,
		"The nightly deploy job runs from the Jenkins server", "The nightly deploy job now runs inside GitHub Actions",
		"cached long ago, with "+key+" in it")
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
		if n := s.Count(`SELECT count(*) FROM supersessiond.llm_verdicts v WHERE v::text LIKE '%' || $1 || '%'`, secret); n > 1 {
			t.Errorf("%d verdicts carry %q: only the one cached before may", n, secret)
		}
	}
	if n := s.Count(`SELECT count(*) FROM memory_history WHERE reason LIKE '%my key xxxxx and your token xxxxx%'`); n != 1 {
		t.Errorf("the masked reasoning is not in the history's reason (%d rows)", n)
	}
}
