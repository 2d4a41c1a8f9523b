package redact

import (
	"strings"
	"testing"
)

func TestURLMasksPasswordsThatDoNotParse(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"postgres://agent:s3cret@db:5432/agent", "postgres://agent:xxxxx@db:5432/agent"},
		{"postgres://agent:Hunter#2@db/agent", "postgres://agent:xxxxx@db/agent"},
		{"postgres://agent:a/b?c@db/agent?sslmode=disable", "postgres://agent:xxxxx@db/agent?sslmode=disable"},
		{"postgres://agent:p@ss@db/agent", "postgres://agent:xxxxx@db/agent"},
		{"postgres://agent@db/agent", "postgres://agent@db/agent"},
		{"postgres://db/agent?user=a&password=hush", "postgres://db/agent?user=a&password=xxxxx"},
		{"http://user:pass@llm:8080/v1", "http://user:xxxxx@llm:8080/v1"},
		{"http://llm/v1?api_key=abc123", "http://llm/v1?api_key=xxxxx"},
		{"not a url", "not a url"},
	}
	for _, c := range cases {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDSNKeyValue(t *testing.T) {
	t.Parallel()
	got := DSN("host=db user=agent password='a b#c' dbname=agent")
	if strings.Contains(got, "a b#c") || !strings.Contains(got, "password=xxxxx") {
		t.Fatalf("DSN = %q", got)
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	in := `POST "http://user:pa:ss@llm/v1/chat/completions" answered 401: {"auth":"Bearer sk-abcdefghijk"} ` +
		`retry at http://llm/v1?token=zzz; conninfo password=hunter2 host=db; Authorization: Basic dXNlcjpwYXNzd29yZA==`
	got := Text(in)
	for _, secret := range []string{"pa:ss", "sk-abcdefghijk", "abcdefghijk", "zzz", "hunter2", "dXNlcjpwYXNzd29yZA=="} {
		if strings.Contains(got, secret) {
			t.Errorf("Text left %q in %q", secret, got)
		}
	}
	if !strings.Contains(got, "http://user:xxxxx@llm/v1/chat/completions") {
		t.Errorf("Text lost the URL's shape: %q", got)
	}
}

func TestSecretMasksPrefixesAParserQuotes(t *testing.T) {
	t.Parallel()
	dsn := "postgres://agent:Hunter#2/x?y@db/agent"
	secrets := DSNSecrets(dsn)
	if len(secrets) != 1 || secrets[0] != "Hunter#2/x?y" {
		t.Fatalf("DSNSecrets = %q", secrets)
	}
	msg := `parse "postgres://agent:Hunter": invalid port ":Hunter" after host`
	got := Secret(msg, secrets...)
	if strings.Contains(got, "Hunter") {
		t.Fatalf("Secret left a prefix: %q", got)
	}
	if kv := DSNSecrets("host=db password='x y z w'"); len(kv) != 1 || kv[0] != "x y z w" {
		t.Fatalf("DSNSecrets(kv) = %q", kv)
	}
}

// A redactor masks the values it knows wherever they appear, whole or as an
// echoed prefix, and in prose leaves the words that only look like the
// patterns' keywords.
func TestRedactorMasksKnownValues(t *testing.T) {
	t.Parallel()
	key, token := "k9f2Q7xLpA0zR5tW3vN8", "admin-Tok3n-2b8e"
	r := New(key, token, "", "short")
	cases := []struct{ in, want string }{
		{"the key is " + key + ".", "the key is xxxxx."},
		{"prefix echoed: " + key[:14] + "…", "prefix echoed: xxxxx…"},
		{"token " + token + " and key " + key, "token xxxxx and key xxxxx"},
		{"a short word stays short", "a short word stays short"},
		{"the bearer of bad news has a basic understanding", "the bearer of bad news has a basic understanding"},
		{"Authorization: Bearer abc.def-123", "Authorization: Bearer xxxxx"},
		{"uses sk-live1234567 for billing", "uses sk-xxxxx for billing"},
		{"password=hunter2 was typed", "password=xxxxx was typed"},
	}
	for _, c := range cases {
		if got := r.Prose(c.in); got != c.want {
			t.Errorf("Prose(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := r.Text("server said: Bearer " + token); strings.Contains(got, token) || strings.Contains(got, "Tok3n") {
		t.Errorf("Text left the token: %q", got)
	}
	var none *Redactor
	if got := none.Prose("sk-abcdefghij " + key); got != "sk-xxxxx "+key {
		t.Errorf("nil redactor: %q", got)
	}
}
