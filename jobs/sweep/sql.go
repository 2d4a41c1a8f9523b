package sweep

import "github.com/supersessiond/supersessiond/internal/schema"

// The sweep's own SQL: its records in the daemon's state table. The change
// records the incremental pass consumes are the engine's change feed's
// (supersession.Feed).
const (
	loadStateSQL = `SELECT value FROM {{.State}} WHERE name = $1`
	saveStateSQL = `
INSERT INTO {{.State}} (name, value, updated_at) VALUES ($1, $2, now())
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`
)

type statements struct {
	loadState, saveState string
}

func render(n *schema.Names) statements {
	if n == nil {
		n = schema.ReferenceNames()
	}
	return statements{
		loadState: n.SQL(loadStateSQL), saveState: n.SQL(saveStateSQL),
	}
}
