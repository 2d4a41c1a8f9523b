// Package store opens the agent's PostgreSQL database and holds the few
// helpers every job shares: transactions, password redaction, the one
// classification of errors by whose fault they are (fault.go: one row's,
// which skips that row, or the server's, which stops the batch and is
// retried), and the guard that leaves a crowded server's last connection
// slots to the agent (guard.go). SQL itself lives next to the job that owns
// it.
//
// Invariant: no error or log line produced here contains a password. Open
// wraps connection failures in *UnavailableError (exit code 3) carrying a
// redacted DSN.
package store
