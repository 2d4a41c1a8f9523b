package sweep

import "github.com/supersessiond/supersessiond/internal/schema"

// The sweep's own SQL: its records in the daemon's state table, and the
// change records the incremental pass consumes (the trigger appends them).
const (
	loadStateSQL = `SELECT value FROM {{.State}} WHERE name = $1`
	saveStateSQL = `
INSERT INTO {{.State}} (name, value, updated_at) VALUES ($1, $2, now())
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`

	// dropSeenSQL deletes the change records a complete full pass covered.
	dropSeenSQL = `DELETE FROM {{.Changes}} WHERE pg_visible_in_snapshot(xid, $1::pg_snapshot)`

	// lastChangeSQL bounds an incremental pass to the records that exist
	// when it starts.
	lastChangeSQL = `SELECT coalesce(max(seq), 0) FROM {{.Changes}}`

	// claimSQL claims the records of up to $3 aspects, oldest first: every
	// unclaimed record of each (up to $2), so that one daemon examines an
	// aspect once for all its changes. While it runs it holds an advisory
	// lock per aspect it picks, and skips aspects another claim holds, so two
	// concurrent claims never split one aspect's records between them; SKIP
	// LOCKED keeps them off each other's rows; claimed_until makes a dead
	// holder's claims expire.
	claimSQL = `
WITH pick AS (
  SELECT agent_id, aspect_id FROM {{.Changes}}
  WHERE seq <= $2 AND (claimed_until IS NULL OR claimed_until < now())
    AND pg_try_advisory_xact_lock(` + claimLockClass + `, hashtext(agent_id || '/' || aspect_id))
  ORDER BY seq
  LIMIT $3
  FOR UPDATE SKIP LOCKED
),
mine AS (
  SELECT c.seq FROM {{.Changes}} c
  JOIN (SELECT DISTINCT agent_id, aspect_id FROM pick) k ON k.agent_id = c.agent_id AND k.aspect_id = c.aspect_id
  WHERE c.seq <= $2 AND (c.claimed_until IS NULL OR c.claimed_until < now())
  FOR UPDATE OF c SKIP LOCKED
)
UPDATE {{.Changes}} c
SET claimed_by = $1, claimed_until = now() + make_interval(secs => $4)
FROM mine WHERE c.seq = mine.seq
RETURNING c.seq, c.agent_id, c.aspect_id, c.attribute_id`

	// extendSQL renews this holder's claims on records it still works on.
	extendSQL = `
UPDATE {{.Changes}} SET claimed_until = now() + make_interval(secs => $3)
WHERE seq = ANY($1) AND claimed_by = $2`

	// consumeSQL deletes handled records (only while still ours).
	consumeSQL = `DELETE FROM {{.Changes}} WHERE seq = ANY($1) AND claimed_by = $2`

	// releaseSQL gives back the claims of a batch that failed.
	releaseSQL = `
UPDATE {{.Changes}} SET claimed_by = NULL, claimed_until = NULL
WHERE seq = ANY($1) AND claimed_by = $2`

	// recordSQL records aspects anew ($1: agent, aspect, agent, aspect...),
	// after the records a running pass takes.
	recordSQL = `
INSERT INTO {{.Changes}} (agent_id, aspect_id)
SELECT a[i], a[i + 1] FROM (SELECT $1::text[] AS a) s, generate_series(1, cardinality(a), 2) AS i`
)

// claimLockClass is the first key of the claims' advisory locks (the
// second is the aspect's hash): "SUPS".
const claimLockClass = "1398100051"

type statements struct {
	loadState, saveState, dropSeen, lastChange, claim, extend, consume, release, record string
}

func render(n *schema.Names) statements {
	if n == nil {
		n = schema.ReferenceNames()
	}
	return statements{
		loadState: n.SQL(loadStateSQL), saveState: n.SQL(saveStateSQL),
		dropSeen: n.SQL(dropSeenSQL), lastChange: n.SQL(lastChangeSQL), claim: n.SQL(claimSQL),
		extend: n.SQL(extendSQL), consume: n.SQL(consumeSQL), release: n.SQL(releaseSQL), record: n.SQL(recordSQL),
	}
}
