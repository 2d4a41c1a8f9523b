package sdnotify

import (
	"net"
	"path/filepath"
	"testing"
	"time"
)

func TestNotifySendsOneDatagram(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n := New(path)
	if err := n.Notify(Ready, "STATUS=serving"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	k, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(buf[:k]); got != "READY=1\nSTATUS=serving" {
		t.Fatalf("got %q", got)
	}
}

func TestDisabledIsNoop(t *testing.T) {
	t.Parallel()
	if err := New("").Notify(Ready); err != nil {
		t.Fatal(err)
	}
	var n *Notifier
	if n.Enabled() {
		t.Fatal("nil notifier enabled")
	}
}

func TestWatchdogInterval(t *testing.T) {
	t.Parallel()
	cases := []struct {
		usec, pid string
		want      time.Duration
	}{
		{"", "", 0},
		{"30000000", "", 15 * time.Second},
		{"30000000", "42", 15 * time.Second},
		{"30000000", "43", 0}, // meant for another process
		{"garbage", "", 0},
		{"-5", "", 0},
	}
	for _, c := range cases {
		if got := WatchdogInterval(c.usec, c.pid, 42); got != c.want {
			t.Errorf("WatchdogInterval(%q, %q) = %v, want %v", c.usec, c.pid, got, c.want)
		}
	}
}
