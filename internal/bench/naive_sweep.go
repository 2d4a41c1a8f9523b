package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/supersessiond/supersessiond/heuristics"
)

// NaiveSweepStats reports a baseline run.
type NaiveSweepStats struct {
	Aspects       int           `json:"aspects"`
	Attributes    int           `json:"attributes"`
	Pairs         int           `json:"pairs"`
	Supersessions int           `json:"supersessions"`
	Elapsed       time.Duration `json:"-"`
}

// NaiveSweep is the baseline the sweep is compared with, done the way
// Signet's maintenance worker does it: list the aspects with several active
// attributes, then one query per aspect for its siblings, the detector run
// on every pair from raw text (tokenising both sides each time), and each
// supersession written as its own update and history insert. It decides
// with the same heuristics and threshold as the daemon, so the two do the
// same work and differ only in how they do it. maxAspects > 0 stops early
// (the caller extrapolates from the attributes covered).
func NaiveSweep(ctx context.Context, db *sqlx.DB, minConfidence float64, maxAspects int) (NaiveSweepStats, error) {
	start := time.Now()
	var st NaiveSweepStats
	type key struct {
		Agent  string `db:"agent_id"`
		Aspect string `db:"aspect_id"`
	}
	var aspects []key
	if err := db.SelectContext(ctx, &aspects, `
		SELECT agent_id, aspect_id FROM entity_attributes
		WHERE status = 'active' AND kind = 'attribute' AND aspect_id IS NOT NULL
		GROUP BY agent_id, aspect_id HAVING count(*) >= 2`); err != nil {
		return st, fmt.Errorf("naive sweep: list aspects: %w", err)
	}
	type attr struct {
		ID        string    `db:"id"`
		Content   string    `db:"content"`
		CreatedAt time.Time `db:"created_at"`
	}
	for _, k := range aspects {
		if maxAspects > 0 && st.Aspects >= maxAspects {
			break
		}
		var sib []attr
		if err := db.SelectContext(ctx, &sib, `
			SELECT id, content, created_at FROM entity_attributes
			WHERE agent_id = $1 AND aspect_id = $2 AND status = 'active' AND kind = 'attribute'
			ORDER BY created_at, id`, k.Agent, k.Aspect); err != nil {
			return st, fmt.Errorf("naive sweep: siblings of %s: %w", k.Aspect, err)
		}
		st.Aspects++
		st.Attributes += len(sib)
		superseded := map[string]bool{}
		for j := len(sib) - 1; j > 0; j-- { // each newer attribute against its older siblings
			newer := heuristics.Input{Content: sib[j].Content, CreatedAt: sib[j].CreatedAt}
			for i := 0; i < j; i++ {
				if superseded[sib[i].ID] {
					continue
				}
				st.Pairs++
				d := heuristics.Decide(heuristics.Input{Content: sib[i].Content, CreatedAt: sib[i].CreatedAt}, newer)
				if d.Confidence < minConfidence || d.Blocked != "" {
					continue
				}
				res, err := db.ExecContext(ctx, `UPDATE entity_attributes SET status = 'superseded', superseded_by = $2,
					superseded_at = now(), updated_at = now() WHERE id = $1 AND status = 'active'`, sib[i].ID, sib[j].ID)
				if err != nil {
					return st, fmt.Errorf("naive sweep: supersede %s: %w", sib[i].ID, err)
				}
				if n, _ := res.RowsAffected(); n == 0 {
					continue
				}
				if _, err := db.ExecContext(ctx, `INSERT INTO memory_history (id, memory_id, event, old_content, new_content, changed_by, reason, metadata)
					VALUES (gen_random_uuid()::text, $1, 'attribute_superseded', $2, $3, 'baseline', $4,
					        jsonb_build_object('agent_id', $5::text, 'old_attribute_id', $1::text, 'new_attribute_id', $6::text))`,
					sib[i].ID, sib[i].Content, sib[j].Content, d.Reason, k.Agent, sib[j].ID); err != nil {
					return st, fmt.Errorf("naive sweep: history for %s: %w", sib[i].ID, err)
				}
				superseded[sib[i].ID] = true
				st.Supersessions++
			}
		}
	}
	st.Elapsed = time.Since(start)
	return st, nil
}
