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
SELECT a.id, a.agent_id, a.aspect_id, a.memory_id, a.kind, a.content, a.created_at, a.protected
FROM entity_attributes a
WHERE a.status = 'active' AND a.aspect_id IS NOT NULL AND a.kind <> 'constraint'
ORDER BY a.agent_id, a.aspect_id, a.created_at, a.id`

// ReadFloor is the sweep's floor: one streaming read of the same columns of
// the same rows through the same driver, every value decoded into the Go
// types the engine uses, then discarded. It returns the rows read and how
// long the read took.
func ReadFloor(ctx context.Context, db *sqlx.DB) (int, time.Duration, error) {
	start := time.Now()
	rows, err := db.QueryContext(ctx, floorSQL)
	if err != nil {
		return 0, 0, fmt.Errorf("floor: %w", err)
	}
	defer rows.Close()
	n := 0
	var (
		id, agent, aspect, kind string
		memory, content         sql.NullString
		created                 sql.NullTime
		protected               bool
	)
	for rows.Next() {
		if err := rows.Scan(&id, &agent, &aspect, &memory, &kind, &content, &created, &protected); err != nil {
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
