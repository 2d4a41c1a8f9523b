package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/supersessiond/supersessiond/internal/schema"
)

// Dependent is a live Honcho document that cites a retired one (SPEC §14):
// what it was concluded from is no longer held true, so a reviewer looks at
// it again. StaleBasis lists the retired documents it cites.
type Dependent struct {
	ID         string    `db:"id" json:"id"`
	Workspace  string    `db:"workspace_name" json:"workspace"`
	Observer   string    `db:"observer" json:"observer"`
	Observed   string    `db:"observed" json:"observed"`
	Content    string    `db:"content" json:"content"`
	CreatedAt  time.Time `db:"created_at" json:"created_at"`
	StaleBasis []string  `db:"-" json:"stale_basis"`
	Basis      string    `db:"stale_basis" json:"-"`
}

// dependentsSQL lists the flagged live documents, newest first, of one
// workspace ($1; empty: every one), at most $2.
const dependentsSQL = `
SELECT d.id, d.workspace_name, d.observer, d.observed, d.content, d.created_at,
       CAST(d.internal_metadata -> 'stale_basis' AS text) AS stale_basis
FROM {{.Documents}} d
WHERE d.deleted_at IS NULL AND jsonb_typeof(d.internal_metadata -> 'stale_basis') = 'array'
  AND ($1 = '' OR d.workspace_name = $1)
ORDER BY d.created_at DESC, d.id
LIMIT $2`

// Store is the store the commands act on (SPEC §14).
func (o *Ops) Store() schema.Store { return o.engine.Store() }

// Dependents lists the live documents flagged as citing retired ones, of
// one workspace ("" every one), newest first, at most limit (default 50).
// Only Honcho's store has them.
func (o *Ops) Dependents(ctx context.Context, workspace string, limit int) ([]Dependent, error) {
	if s := o.engine.Store(); s != schema.StoreHoncho {
		return nil, refuse("dependents", "the supersession store is %s: only Honcho's documents cite others "+
			"(maintenance.supersession.store: honcho)", s)
	}
	if limit <= 0 {
		limit = 50
	}
	out := []Dependent{}
	if err := o.db.SelectContext(ctx, &out, o.sql.Dependents, workspace, limit); err != nil {
		return nil, fmt.Errorf("dependents: %w", err)
	}
	for i := range out {
		if err := json.Unmarshal([]byte(out[i].Basis), &out[i].StaleBasis); err != nil {
			return nil, fmt.Errorf("dependents: document %s: stale_basis: %w", out[i].ID, err)
		}
	}
	return out, nil
}
