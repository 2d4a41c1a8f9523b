package sweep

// The sweep's own SQL: its records in the daemon's state table. The change
// records the incremental pass consumes are the engine's change feed's
// (supersession.Feed).
const (
	loadStateSQL = `SELECT value FROM {{.State}} WHERE name = $1`
	saveStateSQL = `
INSERT INTO {{.State}} (name, value, updated_at) VALUES ($1, $2, now())
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`
)

// statements are the sweep's SQL, rendered for one database
// (schema.Render).
type statements struct{ LoadState, SaveState string }

var sweepSQL = statements{LoadState: loadStateSQL, SaveState: saveStateSQL}
