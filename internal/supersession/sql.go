package supersession

import "github.com/supersessiond/supersessiond/internal/schema"

// The engine's own SQL, as templates over schema.Names (the stack's table
// names and column shapes), rendered once when the engine is built: the
// LLM's verdict cache and the key digests. What reads and writes the
// agent's attributes is the store's (attributes_sql.go); the change
// records are the feed's (feed.go).

const cachedVerdictsSQL = `
SELECT v.old_hash, v.new_hash, v.contradicts, v.confidence, coalesce(v.reasoning, '') AS reasoning
FROM {{.Verdicts}} v
JOIN unnest($2::bytea[], $3::bytea[]) AS k(old_hash, new_hash)
  ON v.old_hash = k.old_hash AND v.new_hash = k.new_hash
WHERE v.model = $1`

const storeVerdictsSQL = `
INSERT INTO {{.Verdicts}} (old_hash, new_hash, model, contradicts, confidence, reasoning)
SELECT k.old_hash, k.new_hash, :model, k.contradicts, k.confidence, k.reasoning
FROM unnest(CAST(:old_hashes AS bytea[]), CAST(:new_hashes AS bytea[]), CAST(:contradicts AS boolean[]), CAST(:confidences AS real[]),
            CAST(:reasonings AS text[]))
  AS k(old_hash, new_hash, contradicts, confidence, reasoning)
ON CONFLICT (old_hash, new_hash, model) DO NOTHING`

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
	CachedVerdicts, Keys, DropKeys string
	StoreVerdicts, StoreKeys       schema.Named
	Feed                           feedStatements
}

var engineSQL = statements{
	CachedVerdicts: cachedVerdictsSQL, StoreVerdicts: schema.NamedSQL(storeVerdictsSQL),
	Keys: keysSQL, StoreKeys: schema.NamedSQL(storeKeysSQL), DropKeys: dropKeysSQL, Feed: feedSQL,
}
