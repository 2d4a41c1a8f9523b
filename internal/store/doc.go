// Package store opens the agent's PostgreSQL database and holds the few
// helpers every job shares: transactions, password redaction and the
// classification of errors into "the database went away" versus "the query is
// wrong". SQL itself lives next to the job that owns it.
//
// Invariant: no error or log line produced here contains a password. Open
// wraps connection failures in *UnavailableError (exit code 3) carrying a
// redacted DSN.
package store
