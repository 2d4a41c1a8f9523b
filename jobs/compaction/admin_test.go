package compaction

import (
	"net/url"
	"strings"

	"github.com/jmoiron/sqlx"
)

// openAdmin connects to the server's postgres database, beside a test's own.
func openAdmin(dbURL string) (*sqlx.DB, error) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return nil, err
	}
	u.Path = "/postgres"
	return sqlx.Open("postgres", u.String())
}

func quote(ident string) string { return `"` + strings.ReplaceAll(ident, `"`, `""`) + `"` }
