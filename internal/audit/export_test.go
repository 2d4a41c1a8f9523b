package audit

import "github.com/supersessiond/supersessiond/internal/schema"

// HistorySQL is exported to the tests that check its plans, rendered for
// the reference schema.
var HistorySQL = schema.Render(nil, struct{ S schema.Named }{schema.NamedSQL(historySQL)}).S
