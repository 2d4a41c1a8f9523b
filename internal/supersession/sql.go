package supersession

import "github.com/supersessiond/supersessiond/internal/schema"

// The engine's own SQL, as templates over schema.Names (the stack's table
// names and column shapes), rendered once when the engine is built: the
// key digests and the rules' records (enforce.go). What reads and writes the
// agent's attributes is the store's (attributes_sql.go); the change
// records are the feed's (feed.go).

// keysSQL reads the key digest fragments of the given aspects made by one
// heuristics version ($3).
const keysSQL = `
SELECT k.agent_id, k.aspect_id, k.keys
FROM {{.Keys}} k
JOIN unnest($1::text[], $2::text[]) AS n(agent_id, aspect_id) ON k.agent_id = n.agent_id AND k.aspect_id = n.aspect_id
WHERE k.heuristics = $3`

// storeKeysSQL adds a digest fragment per aspect; with a snapshot
// (:replace), it first deletes the aspects' fragments that snapshot saw
// committed (the new ones were made from a read that began after: they
// replace them). The fragments come as one bytea (:keys) cut at the given
// ends (:ends): a bytea array would travel as hex text, twice the bytes and
// most of the cost.
const storeKeysSQL = `
WITH gone AS (
  DELETE FROM {{.Keys}} k
  USING unnest(CAST(:agents AS text[]), CAST(:aspects AS text[])) AS n(agent_id, aspect_id)
  WHERE CAST(:replace AS text) IS NOT NULL AND k.agent_id = n.agent_id AND k.aspect_id = n.aspect_id
    AND pg_visible_in_snapshot(k.xid, CAST(CAST(:replace AS text) AS pg_snapshot))
)
INSERT INTO {{.Keys}} (agent_id, aspect_id, heuristics, keys)
SELECT n.agent_id, n.aspect_id, :heuristics, substring(CAST(:keys AS bytea) FROM s.start + 1 FOR n.stop - s.start)
FROM unnest(CAST(:agents AS text[]), CAST(:aspects AS text[]), CAST(:ends AS int[])) WITH ORDINALITY AS n(agent_id, aspect_id, stop, i),
     LATERAL (SELECT coalesce((CAST(:ends AS int[]))[n.i - 1], 0) AS start) s`

// dropKeysSQL deletes the fragments a snapshot saw committed: what a
// complete full pass replaced, and digests of aspects it found too small or
// gone.
const dropKeysSQL = `DELETE FROM {{.Keys}} WHERE pg_visible_in_snapshot(xid, $1::pg_snapshot)`

// statements are the engine's SQL, rendered for one database
// (schema.Render).
type statements struct {
	Keys, DropKeys, Rules string
	StoreKeys             schema.Named
	Feed                  feedStatements
}

var engineSQL = statements{
	Keys: keysSQL, StoreKeys: schema.NamedSQL(storeKeysSQL), DropKeys: dropKeysSQL, Rules: rulesSQL, Feed: feedSQL,
}
