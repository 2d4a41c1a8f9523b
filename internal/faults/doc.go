// Package faults holds the fault tests: the real supersessiond binary under
// kill -9, a PostgreSQL restart beneath it, and several replicas on one
// database. There is no code here, only tests (go test ./faults/).
package faults
