package bench

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// floorSQL reads what a full sweep reads: the columns of the active
// non-constraint classified attributes that the engine scans, in the order
// of the sibling index, in one statement.
const floorSQL = `
SELECT a.id, a.agent_id, a.aspect_id, a.kind, a.content, a.created_at, a.protected
FROM entity_attributes a
WHERE a.status = 'active' AND a.aspect_id IS NOT NULL AND a.kind <> 'constraint'
ORDER BY a.agent_id, a.aspect_id, a.created_at, a.id`

// How ReadFloor may plan its statement. The floor is the cheapest way
// found to read the rows: at a million rows on a two-core machine the
// planner sorts a parallel scan (about 2 s) where the read through the
// sibling index, the path the sweep's own reads take, streams the same rows
// in the same order in well under half that; at ten million it picks the
// index itself. Both are measured, and the faster is the floor.
const (
	FloorPlanned = "planned"  // as the planner plans it
	FloorIndex   = "by index" // through the sibling index: no sort
)

// ReadFloor is one read of the sweep's floor: one streaming read of the
// same columns of the same rows in the same order through the same driver,
// every value decoded into the Go types the engine uses, then discarded,
// planned as how says (FloorPlanned, FloorIndex). It returns the rows read
// and how long the read took.
func ReadFloor(ctx context.Context, db *sqlx.DB, how string) (int, time.Duration, error) {
	tx, err := db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, 0, fmt.Errorf("floor: %w", err)
	}
	defer tx.Rollback()
	if how == FloorIndex {
		// No sort: the only plan left in that order is the index scan.
		if _, err := tx.ExecContext(ctx, `SET LOCAL enable_sort = off`); err != nil {
			return 0, 0, fmt.Errorf("floor: %w", err)
		}
	}
	start := time.Now()
	rows, err := tx.QueryContext(ctx, floorSQL)
	if err != nil {
		return 0, 0, fmt.Errorf("floor: %w", err)
	}
	defer rows.Close()
	n := 0
	var (
		id, agent, aspect, kind string
		content                 sql.NullString
		created                 sql.NullTime
		protected               bool
	)
	for rows.Next() {
		if err := rows.Scan(&id, &agent, &aspect, &kind, &content, &created, &protected); err != nil {
			return n, 0, fmt.Errorf("floor: %w", err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, 0, fmt.Errorf("floor: %w", err)
	}
	return n, time.Since(start), nil
}

// ChangeAttributes changes share of the active attributes, chosen
// uniformly at random (so large aspects are hit as often as their size
// says): the content of each is edited to a new value of its slot, as an
// agent correcting a fact would. It returns how many changed and in how
// many aspects.
func ChangeAttributes(ctx context.Context, db *sqlx.DB, share float64, seed int64) (changed, aspects int, err error) {
	err = db.QueryRowxContext(ctx, `
		WITH pick AS (
		  SELECT id FROM entity_attributes
		  WHERE status = 'active' AND aspect_id IS NOT NULL AND kind = 'attribute'
		  ORDER BY md5(id || $2::text)
		  LIMIT (SELECT ceil(count(*) * $1::float8)::int FROM entity_attributes WHERE status = 'active' AND aspect_id IS NOT NULL)
		),
		upd AS (
		  UPDATE entity_attributes a SET content = a.content || ' (corrected)', updated_at = now()
		  FROM pick WHERE a.id = pick.id
		  RETURNING a.agent_id, a.aspect_id
		)
		SELECT count(*), count(DISTINCT (agent_id, aspect_id)) FROM upd`, share, seed).Scan(&changed, &aspects)
	return changed, aspects, err
}
