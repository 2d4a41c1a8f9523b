// Package pgcluster starts and stops a throwaway PostgreSQL cluster for tests,
// the demo and the bench command.
//
// A cluster is initdb'd into a fresh temporary directory and listens only on a
// Unix socket in that directory, so any number can run side by side without
// port clashes and nothing is reachable from the network. initdb refuses to run
// as root, so when the effective uid is 0 the server binaries run as the
// "postgres" user through runuser. Durability is off by default (fsync,
// synchronous_commit, full_page_writes): these clusters hold nothing worth
// keeping, and a test suite that waits on fsync is a slow test suite.
package pgcluster
