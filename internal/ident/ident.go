// Package ident makes the identities the daemon gives things that are not
// rows of the agent's: runs (sweep run ids, inline batches), lease and claim
// holders, and the ids of the memories and history rows compaction writes.
// Random parts come from crypto/rand, so two daemons never collide. It also
// says what an operator's name, as the audit trail records it, may be.
package ident

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// Random is n random bytes in hex, after prefix.
func Random(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + hex.EncodeToString(b)
}

// Holder names this process, unique among the daemons on one database:
// host, pid and a random part (a pid is reused after a restart).
func Holder() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), Random("", 4))
}
