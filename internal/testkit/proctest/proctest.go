// Package proctest holds what tests of running processes and servers
// share: a buffer that collects output while it is being written, and a
// free TCP port to listen on.
package proctest

import (
	"bytes"
	"net"
	"sync"
	"testing"
)

// Buffer collects output written from other goroutines (a process's
// stdout, a logger) while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listened on a
// moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
