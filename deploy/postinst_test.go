package deploy_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/testkit/pgcluster"
)

// postinstSteps is the text postinst prints after a first install.
func postinstSteps(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("deb/postinst")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<<'MSG'\n")
	msg, _, ok2 := strings.Cut(rest, "\nMSG\n")
	if !ok || !ok2 {
		t.Fatal("postinst prints no MSG here-document")
	}
	return msg
}

// stepCommand finds the step that runs `supersessiond <name>`, and returns
// the role it runs as (the daemon's, or the tables' owner) and its
// arguments.
func stepCommand(t *testing.T, msg, name string) (role string, args []string) {
	t.Helper()
	for _, line := range strings.Split(msg, "\n") {
		i := strings.LastIndex(line, "supersessiond "+name)
		if i < 0 {
			continue
		}
		switch {
		case strings.Contains(line, "sudo -u supersessiond"):
			role = "supersessiond"
		case strings.Contains(line, "SUPERSESSIOND_DATABASE_URL='postgres://OWNER@"):
			role = "owner"
		default:
			t.Fatalf("the step does not say which role runs it: %s", line)
		}
		args = strings.Fields(strings.TrimRight(line[i+len("supersessiond "):], "'"))
		return role, args
	}
	t.Fatalf("postinst's steps never run supersessiond %s:\n%s", name, msg)
	return "", nil
}

// The steps postinst prints after a first install work when followed as
// written, against a database whose tables another role owns: the migrate
// step as the role it names (the tables' owner, granting the daemon's role),
// then the check step as the daemon's role, which finds every job able to
// run. They say how to give sslmode and the owner's password.
func TestPostinstStepsWorkAsWritten(t *testing.T) {
	t.Parallel()
	msg := postinstSteps(t)
	for _, want := range []string{"sslmode=disable", "PGPASSWORD", "~/.pgpass", "--grant supersessiond"} {
		if !strings.Contains(msg, want) {
			t.Errorf("postinst's steps do not mention %q:\n%s", want, msg)
		}
	}
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{})
	if err != nil {
		t.Skipf("no PostgreSQL to start: %v", err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	admin, err := sqlx.Open("postgres", cluster.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE ROLE owner LOGIN`, `CREATE ROLE supersessiond LOGIN`, `CREATE DATABASE agent OWNER owner`} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	admin.Close()
	urls := map[string]string{}
	for _, role := range []string{"owner", "supersessiond"} {
		urls[role] = strings.Replace(cluster.URL("agent"), "user=postgres", "user="+role, 1)
	}
	dir := t.TempDir()
	binary := filepath.Join(dir, "supersessiond")
	if out, err := exec.Command("go", "build", "-o", binary, "../cmd/supersessiond").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(cfg, []byte("memory: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	supersessiond := func(role string, args ...string) {
		t.Helper()
		for i, a := range args {
			if a == "/etc/supersessiond/agent.yaml" {
				args[i] = cfg
			}
		}
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "SUPERSESSIOND_DATABASE_URL="+urls[role], "SUPERSESSIOND_CONFIG="+cfg)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("supersessiond %s as %s: %v\n%s", strings.Join(args, " "), role, err, out)
		}
	}
	// The stack's own tables, owned by the owner.
	supersessiond("owner", "migrate", "--reference-schema")
	for _, step := range []string{"migrate", "check"} {
		role, args := stepCommand(t, msg, step)
		supersessiond(role, args...)
	}
}
