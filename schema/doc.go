// Package schema owns the database objects: the reference agent schema of
// SPEC §4 (created only on request, for tests, the demo and new installs) and
// the daemon's own migrations, embedded and applied with goose.
//
// The daemon never assumes it owns the agent database. Its migrations only add
// things (columns the SPEC marks as added, indexes, its own tables, one
// trigger), with IF NOT EXISTS so a partially prepared database migrates
// cleanly, and the whole run holds an advisory lock so concurrent migrate runs
// serialise. Check verifies, from the catalog, everything the daemon relies on
// and lists all that is missing at once.
package schema
