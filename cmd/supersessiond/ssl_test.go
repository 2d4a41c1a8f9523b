package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/testkit/pgcluster"
	"github.com/supersessiond/supersessiond/internal/testkit/proctest"
)

// A server without SSL, reached over TCP with a URL that does not say
// sslmode (the driver then requires SSL): check says the server refused the
// connection, not that it is unreachable, and says to add sslmode=disable.
// The same URL with sslmode=disable works.
func TestSSLRefusalSaysWhatToAdd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	port := proctest.FreePort(t)
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{Port: port, ExtraSettings: map[string]string{"listen_addresses": "'127.0.0.1'"}})
	if err != nil {
		t.Skipf("no PostgreSQL to start: %v", err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%s/postgres", strconv.Itoa(port))

	code, out, errOut := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+url).run("", "check")
	if code != exitUnavailable {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitUnavailable, out, errOut)
	}
	if strings.Contains(errOut, "unreachable") || !strings.Contains(errOut, "SSL is not enabled on the server") ||
		!strings.Contains(errOut, "refused the connection") || !strings.Contains(errOut, "add sslmode=disable") {
		t.Fatalf("the refusal does not say what it is and what to add:\n%s", errOut)
	}
	_, out, errOut = newCLI(t, "SUPERSESSIOND_DATABASE_URL="+url+"?sslmode=disable").run("", "check")
	if !strings.Contains(out, "database      ok") {
		t.Fatalf("with sslmode=disable the server still refuses:\n%s%s", out, errOut)
	}
}
