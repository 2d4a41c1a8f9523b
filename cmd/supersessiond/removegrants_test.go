package main

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// directGrants lists the privileges role holds by name on the database's
// tables, their columns and its schemas, as "object privilege".
func directGrants(t *testing.T, db *sqlx.DB, role string) []string {
	t.Helper()
	var out []string
	err := db.Select(&out, `
		SELECT n.nspname || '.' || c.relname || ' ' || a.privilege_type
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(c.relacl) a
		WHERE a.grantee = (SELECT oid FROM pg_roles WHERE rolname = $1)
		UNION ALL
		SELECT n.nspname || '.' || c.relname || '.' || t.attname || ' ' || a.privilege_type
		FROM pg_attribute t JOIN pg_class c ON c.oid = t.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(t.attacl) a
		WHERE a.grantee = (SELECT oid FROM pg_roles WHERE rolname = $1)
		UNION ALL
		SELECT 'schema ' || n.nspname || ' ' || a.privilege_type FROM pg_namespace n, aclexplode(n.nspacl) a
		WHERE a.grantee = (SELECT oid FROM pg_roles WHERE rolname = $1)
		ORDER BY 1`, role)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// migrate --remove revokes what migrate --grant gave, and says so; a
// privilege the role held before the grant stays. With the record of
// deleted documents kept, the role loses its use of that too.
func TestMigrateRemoveRevokesItsGrants(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	var b [5]byte
	_, _ = rand.Read(b[:])
	role := "daemon_" + hex.EncodeToString(b[:])
	for _, q := range []string{`CREATE ROLE ` + role, `GRANT SELECT ON memories TO ` + role} {
		if _, err := db.Exec(q); err != nil {
			t.Skipf("cannot create a role here (needs CREATEROLE): %v", err)
		}
	}
	t.Cleanup(func() {
		_, _ = db.Exec(`DROP OWNED BY ` + role)
		_, _ = db.Exec(`DROP ROLE IF EXISTS ` + role)
	})
	c := newCLI(t, "SUPERSESSIOND_DATABASE_URL="+db.URL)
	for range 2 { // a second grant records nothing more, and revokes nothing it did not give
		if code, out, errOut := c.run("", "migrate", "--grant", role); code != 0 {
			t.Fatalf("migrate --grant: exit %d\n%s%s", code, out, errOut)
		}
	}
	granted := directGrants(t, db.DB, role)
	for _, want := range []string{"public.memory_history INSERT", "public.entity_attributes.status UPDATE", "schema supersessiond USAGE",
		"supersessiond.deleted_documents INSERT", "public.memories SELECT"} {
		if !slices.Contains(granted, want) {
			t.Fatalf("migrate --grant did not give %q: %v", want, granted)
		}
	}
	if _, err := db.Exec(`INSERT INTO supersessiond.deleted_documents (run_id, document_id, workspace_name, content_sha256, phase)
		VALUES ('r', 'd', 'ws', 'x', 'triage')`); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := c.run("", "migrate", "--remove")
	if code != 0 {
		t.Fatalf("migrate --remove: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"revoke INSERT ON public.memory_history from " + role, "revoke USAGE ON SCHEMA public from " + role,
		"revoke use of the tables and sequences in schema supersessiond from " + role, "table supersessiond.deleted_documents and schema supersessiond"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if left := directGrants(t, db.DB, role); !slices.Equal(left, []string{"public.memories SELECT"}) {
		t.Fatalf("after --remove the role holds %v; want only what it held before the grant", left)
	}
}
