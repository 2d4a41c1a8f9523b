// Package pgtest gives each test its own freshly migrated PostgreSQL database.
//
// One throwaway cluster (package pgcluster) is started per test binary, on
// first use, and stopped when the binary exits; or, when
// $SUPERSESSIOND_TEST_DATABASE_URL is set, that server is used instead (the
// role needs CREATEDB). The reference schema and the daemon's migrations are
// applied once to a template database; each test then gets a copy with
// CREATE DATABASE ... TEMPLATE, which takes milliseconds, and the copy is
// dropped when the test ends. There is no mock of the database anywhere.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/testkit/pgcluster"
)

// EnvTestDatabaseURL names a server the tests use instead of starting a
// cluster of their own (config does not read it as a key: config's
// constant of the same name).
const EnvTestDatabaseURL = "SUPERSESSIOND_TEST_DATABASE_URL"

var (
	once     sync.Once
	initErr  error
	cluster  *pgcluster.Cluster
	baseURL  string // a URL on the server; its database is used for admin
	admin    *sqlx.DB
	template string
	counter  atomic.Int64
)

// Main runs the tests and stops the cluster afterwards. Use it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain that has its own cleanup to do: it runs the
// tests, stops the cluster and returns the exit code.
func Run(m *testing.M) int {
	code := m.Run()
	if admin != nil {
		if template != "" {
			_, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + quoteIdent(template))
		}
		_ = admin.Close()
	}
	if cluster != nil {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: stop cluster:", err)
		}
	}
	return code
}

func setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if u := os.Getenv(EnvTestDatabaseURL); u != "" {
		baseURL = u
	} else {
		c, err := pgcluster.Start(ctx, pgcluster.Options{})
		if err != nil {
			return err
		}
		c.StopOnSignal() // Run stops it otherwise
		cluster = c
		baseURL = c.URL("postgres")
	}
	var err error
	if admin, err = sqlx.Open("postgres", baseURL); err != nil {
		return err
	}
	if err := admin.PingContext(ctx); err != nil {
		return fmt.Errorf("pgtest: connect to %s: %w", baseURL, err)
	}
	template = fmt.Sprintf("ssd_tmpl_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+quoteIdent(template)); err != nil {
		return fmt.Errorf("pgtest: create template database: %w", err)
	}
	tdb, err := sqlx.Open("postgres", urlFor(template))
	if err != nil {
		return err
	}
	defer tdb.Close()
	if _, err := schema.Migrate(ctx, tdb, schema.ReferencePlan(), schema.Options{Reference: true}); err != nil {
		return fmt.Errorf("pgtest: migrate template: %w", err)
	}
	return nil
}

func urlFor(dbname string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		panic(fmt.Sprintf("pgtest: %s must be a postgres:// URL: %v", EnvTestDatabaseURL, err))
	}
	u.Path = "/" + dbname
	return u.String()
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func ensure(t testing.TB) {
	t.Helper()
	once.Do(func() { initErr = setup() })
	if initErr != nil {
		t.Fatalf("pgtest: no PostgreSQL for tests: %v", initErr)
	}
}

// DB is one test's database.
type DB struct {
	*sqlx.DB
	URL  string
	Name string
}

// New returns a fresh database holding the reference schema with the daemon's
// migrations applied. It is dropped when the test ends.
func New(t testing.TB) *DB {
	t.Helper()
	return create(t, true)
}

// NewEmpty returns a fresh, empty database (nothing migrated).
func NewEmpty(t testing.TB) *DB {
	t.Helper()
	return create(t, false)
}

func create(t testing.TB, migrated bool) *DB {
	ensure(t)
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), counter.Add(1))
	stmt := `CREATE DATABASE ` + quoteIdent(name)
	if migrated {
		stmt += ` TEMPLATE ` + quoteIdent(template)
	}
	if _, err := admin.Exec(stmt); err != nil {
		t.Fatalf("pgtest: %s: %v", stmt, err)
	}
	return open(t, name)
}

// open connects to a database of the test server and drops it when the
// test ends.
func open(t testing.TB, name string) *DB {
	t.Helper()
	u := urlFor(name)
	// Opened the way the daemon opens its database, session setup included.
	db, err := store.Open(context.Background(), u, store.Pool{MaxOpen: 32, MaxIdle: 8, IdleTime: time.Minute}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = db.Close()
		if _, err := admin.Exec(`DROP DATABASE IF EXISTS ` + quoteIdent(name) + ` WITH (FORCE)`); err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
		}
	})
	return &DB{DB: db, URL: u, Name: name}
}

// NewEncoded returns a fresh database in the given server encoding (e.g.
// SQL_ASCII, which stores whatever bytes it is given), holding the
// reference schema with the daemon's migrations applied. The template
// cannot be used: a copy keeps its encoding.
func NewEncoded(t testing.TB, encoding string) *DB {
	t.Helper()
	ensure(t)
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), counter.Add(1))
	stmt := fmt.Sprintf(`CREATE DATABASE %s ENCODING '%s' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`,
		quoteIdent(name), strings.ReplaceAll(encoding, "'", ""))
	if _, err := admin.Exec(stmt); err != nil {
		t.Fatalf("pgtest: %s: %v", stmt, err)
	}
	db := open(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := schema.Migrate(ctx, db.DB, schema.ReferencePlan(), schema.Options{Reference: true}); err != nil {
		t.Fatalf("pgtest: migrate %s: %v", name, err)
	}
	return db
}

// Stack is a fixture of a real agent stack's tables (testdata/stacks),
// loaded into a test database.
type Stack struct {
	// Expect are the fixture's "-- EXPECT <what>: <ids>" lines: what a
	// tombstone pass must do with which documents.
	Expect map[string][]string
	// Vector: pgvector is installed, and embedding is a real vector(1536)
	// with Honcho's HNSW index; otherwise real[] stands in.
	Vector bool
}

// LoadStack loads a fixture of testdata/stacks into db. The embedding column
// is pgvector's vector(1536) with its HNSW index when the server has the
// extension, and a real[] stand-in otherwise (Debian bookworm does not
// package pgvector): the daemon never reads it, only sets it NULL, so the
// tests hold either way. A line "-- INCLUDE <file>" stands for that file
// of the same directory: the shapes of one stack share their other tables
// and rows.
func LoadStack(t testing.TB, db *DB, path string) *Stack {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw = includeLine.ReplaceAllFunc(raw, func(line []byte) []byte {
		name := includeLine.FindSubmatch(line)[1]
		part, err := os.ReadFile(filepath.Join(filepath.Dir(path), string(name)))
		if err != nil {
			t.Fatalf("pgtest: %s: %v", path, err)
		}
		return part
	})
	st := &Stack{Expect: map[string][]string{}}
	var available bool
	if err := db.Get(&available, `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`); err != nil {
		t.Fatal(err)
	}
	st.Vector = available
	text := string(raw)
	if available {
		text = strings.ReplaceAll(text, "__VECTOR_TYPE__", "vector(1536)")
	} else {
		text = strings.ReplaceAll(text, "__VECTOR_TYPE__", "real[]")
		text = pgvectorBlock.ReplaceAllString(text, "")
	}
	for _, m := range expectLine.FindAllStringSubmatch(text, -1) {
		st.Expect[m[1]] = strings.Fields(m[2])
	}
	if _, err := db.Exec(text); err != nil {
		t.Fatalf("pgtest: load %s: %v", path, err)
	}
	return st
}

var (
	pgvectorBlock = regexp.MustCompile(`(?s)-- BEGIN PGVECTOR\n.*?-- END PGVECTOR\n`)
	expectLine    = regexp.MustCompile(`(?m)^-- EXPECT (\w+): (.*)$`)
	includeLine   = regexp.MustCompile(`(?m)^-- INCLUDE (\S+)\n`)
)

// Reopen connects to db's database again, with fresh sessions (that see,
// say, a search_path set with ALTER DATABASE since). The database is still
// dropped when the test ends.
func Reopen(t testing.TB, db *DB) *DB {
	t.Helper()
	return connect(t, db.URL, db.Name)
}

// As connects to db's database as another role (the throwaway cluster
// trusts local connections; an external server must too).
func As(t testing.TB, db *DB, role string) *DB {
	t.Helper()
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Has("user") {
		q.Set("user", role)
		u.RawQuery = q.Encode()
	} else {
		u.User = url.User(role)
	}
	return connect(t, u.String(), db.Name)
}

// Admin is a connection to the test server's maintenance database.
func Admin(t testing.TB) *sqlx.DB {
	t.Helper()
	ensure(t)
	return admin
}

// connect opens a pool on url and closes it when the test ends.
func connect(t testing.TB, url, name string) *DB {
	t.Helper()
	db, err := store.Open(context.Background(), url, store.Pool{MaxOpen: 8, MaxIdle: 2, IdleTime: time.Minute}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return &DB{DB: db, URL: url, Name: name}
}
