package schema

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/pressly/goose/v3"
)

//go:embed reference.sql
var referenceSQL string

//go:embed migrations/*.sql
var migrationsFS embed.FS

// VersionTable is goose's bookkeeping table for the daemon's migrations.
const VersionTable = "supersessiond_schema_migrations"

// migrateLockKey is the advisory lock that serialises concurrent `migrate`
// runs (two daemons starting at once, a deploy script racing an operator).
// Any constant unlikely to collide with the agent's own advisory locks works.
const migrateLockKey = 7203495121

// SchemaError lists what the database lacks. The CLI maps it to exit code 3.
type SchemaError struct {
	Missing []string // "table documents", "column entity_attributes.protected"
	Hint    string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("database schema is incompatible: missing %s; %s", strings.Join(e.Missing, ", "), e.Hint)
}

const hintMigrate = "run `supersessiond migrate` (add --reference-schema to also create absent reference agent tables)"

// required lists the agent columns (SPEC §4) the daemon reads or writes.
var required = map[string][]string{
	"memories": {"id", "agent_id", "type", "content", "normalized_content", "confidence", "importance",
		"source_type", "source_id", "idempotency_key", "is_deleted", "deleted_at", "superseded_by",
		"superseded_at", "superseded_reason", "pinned", "created_at", "updated_at"},
	"entities":       {"id", "agent_id", "name", "entity_type", "created_at", "updated_at"},
	"entity_aspects": {"id", "entity_id", "agent_id", "name", "canonical_name", "weight", "created_at", "updated_at"},
	"entity_attributes": {"id", "aspect_id", "agent_id", "memory_id", "kind", "content", "normalized_content",
		"confidence", "importance", "status", "superseded_by", "created_at", "updated_at"},
	"memory_history": {"id", "memory_id", "event", "old_content", "new_content", "changed_by", "reason",
		"metadata", "created_at", "actor_type", "session_id", "request_id"},
	"messages":          {"id", "agent_id", "seq", "direction", "body", "tool_calls", "created_at"},
	"compaction_events": {"id", "agent_id", "triggered_at", "min_message_seq", "max_message_seq", "status", "retry_count", "memory_updated", "summary_len"},
	"documents": {"id", "workspace_name", "observer", "observed", "content", "level", "source_ids", "embedding",
		"internal_metadata", "created_at", "deleted_at", "superseded_by"},
}

// added lists the columns the daemon's migration adds to agent tables.
var added = map[string][]string{
	"entity_attributes": {"superseded_at", "protected"},
	"compaction_events": {"last_error", "next_attempt_at", "completed_at"},
	"documents":         {"tombstone_preserved_at"},
}

// daemonTables are the daemon's own tables.
var daemonTables = []string{"supersessiond_state", "supersessiond_leases", "supersessiond_classified", "supersessiond_llm_verdicts"}

// Options for Migrate.
type Options struct {
	// Reference also creates the reference agent tables where absent.
	Reference bool
	Logger    *slog.Logger
}

// Result says what Migrate did.
type Result struct {
	ReferenceCreated []string // reference tables that did not exist before
	Applied          []string // migration files applied this run
	Version          int64
}

// Migrate idempotently brings the daemon's objects up to date. It holds an
// advisory lock for the whole run, so two concurrent runs serialise and the
// second finds nothing to do.
func Migrate(ctx context.Context, db *sqlx.DB, opts Options) (*Result, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrateLockKey); err != nil {
		return nil, fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLockKey)
	}()

	res := &Result{}
	if opts.Reference {
		before, err := missingTables(ctx, db, tableNames(required))
		if err != nil {
			return nil, err
		}
		if _, err := conn.ExecContext(ctx, referenceSQL); err != nil {
			return nil, fmt.Errorf("migrate: create reference schema: %w", err)
		}
		res.ReferenceCreated = before
	}
	if missing, err := missingTables(ctx, db, tableNames(required)); err != nil {
		return nil, err
	} else if len(missing) > 0 {
		for i := range missing {
			missing[i] = "table " + missing[i]
		}
		return nil, &SchemaError{Missing: missing, Hint: "this does not look like an agent database; " +
			"run `supersessiond migrate --reference-schema` to create the reference agent tables"}
	}

	p, err := provider(db, opts.Logger)
	if err != nil {
		return nil, err
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: apply migrations: %w", err)
	}
	for _, r := range results {
		res.Applied = append(res.Applied, r.Source.Path)
	}
	if res.Version, err = p.GetDBVersion(ctx); err != nil {
		return nil, fmt.Errorf("migrate: read schema version: %w", err)
	}
	return res, nil
}

func provider(db *sqlx.DB, logger *slog.Logger) (*goose.Provider, error) {
	fsys, err := fs.Sub(migrationsFS, "migrations")
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db.DB, fsys,
		goose.WithTableName(VersionTable),
		goose.WithDisableGlobalRegistry(true),
		goose.WithSlog(logger),
	)
	if err != nil {
		return nil, fmt.Errorf("migrate: load embedded migrations: %w", err)
	}
	return p, nil
}

// LatestVersion is the newest migration this binary carries.
func LatestVersion() int64 {
	entries, _ := fs.ReadDir(migrationsFS, "migrations")
	var v int64
	for _, e := range entries {
		var n int64
		if _, err := fmt.Sscanf(e.Name(), "%d_", &n); err == nil && n > v {
			v = n
		}
	}
	return v
}

// Check verifies that every table and column the daemon relies on exists and
// that the daemon's migrations are applied. A *SchemaError lists everything
// missing at once and says to run `supersessiond migrate`.
func Check(ctx context.Context, db *sqlx.DB) error {
	var missing []string
	want := map[string][]string{}
	for t, cols := range required {
		want[t] = append(want[t], cols...)
	}
	for t, cols := range added {
		want[t] = append(want[t], cols...)
	}
	for _, t := range daemonTables {
		want[t] = nil
	}
	have, err := columns(ctx, db, tableNames(want))
	if err != nil {
		return err
	}
	for _, t := range sortedKeys(want) {
		cols, ok := have[t]
		if !ok {
			missing = append(missing, "table "+t)
			continue
		}
		for _, c := range want[t] {
			if !cols[c] {
				missing = append(missing, "column "+t+"."+c)
			}
		}
	}
	if len(missing) == 0 {
		var trigger bool
		err := db.GetContext(ctx, &trigger, `SELECT EXISTS (
			SELECT 1 FROM pg_trigger WHERE tgname = 'supersessiond_attribute_classified'
			AND tgrelid = to_regclass('entity_attributes'))`)
		if err != nil {
			return fmt.Errorf("check: look for the classification trigger: %w", err)
		}
		if !trigger {
			missing = append(missing, "trigger supersessiond_attribute_classified on entity_attributes")
		}
		var version int64
		err = db.GetContext(ctx, &version, `SELECT coalesce(max(version_id), 0) FROM `+VersionTable+` WHERE is_applied`)
		var pe *pq.Error
		switch {
		case errors.As(err, &pe) && pe.Code == "42P01":
			missing = append(missing, "table "+VersionTable)
		case err != nil:
			return fmt.Errorf("check: read schema version: %w", err)
		case version < LatestVersion():
			missing = append(missing, fmt.Sprintf("migrations %d..%d (database is at %d)", version+1, LatestVersion(), version))
		}
	}
	if len(missing) > 0 {
		return &SchemaError{Missing: missing, Hint: hintMigrate}
	}
	return nil
}

// columns returns, for each of the tables that exist (on the search path),
// its set of column names.
func columns(ctx context.Context, db *sqlx.DB, tables []string) (map[string]map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `
		SELECT t.name, a.attname
		FROM unnest($1::text[]) AS t(name)
		JOIN pg_attribute a ON a.attrelid = to_regclass(t.name)
		WHERE a.attnum > 0 AND NOT a.attisdropped`, pq.Array(tables))
	if err != nil {
		return nil, fmt.Errorf("check: read catalog: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]bool{}
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			return nil, err
		}
		if out[t] == nil {
			out[t] = map[string]bool{}
		}
		out[t][c] = true
	}
	return out, rows.Err()
}

func missingTables(ctx context.Context, db *sqlx.DB, tables []string) ([]string, error) {
	var missing []string
	err := db.SelectContext(ctx, &missing, `
		SELECT t.name FROM unnest($1::text[]) AS t(name)
		WHERE to_regclass(t.name) IS NULL ORDER BY 1`, pq.Array(tables))
	if err != nil {
		return nil, fmt.Errorf("migrate: read catalog: %w", err)
	}
	return missing, nil
}

func tableNames(m map[string][]string) []string { return sortedKeys(m) }

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
