// Package sdnotify speaks systemd's sd_notify protocol: newline-separated
// assignments sent as one datagram to the Unix socket named by $NOTIFY_SOCKET.
// When the daemon is not started by systemd (no NOTIFY_SOCKET) every call is a
// no-op, so callers never need to ask.
package sdnotify

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Well-known states.
const (
	Ready     = "READY=1"
	Reloading = "RELOADING=1"
	Stopping  = "STOPPING=1"
	Watchdog  = "WATCHDOG=1"
)

// Notifier sends states to systemd.
type Notifier struct {
	socket string
}

// New returns a Notifier for the given $NOTIFY_SOCKET value ("" disables it).
func New(socket string) *Notifier { return &Notifier{socket: socket} }

// Enabled reports whether notifications go anywhere.
func (n *Notifier) Enabled() bool { return n != nil && n.socket != "" }

// Notify sends the given assignments as one message.
func (n *Notifier) Notify(states ...string) error {
	if !n.Enabled() {
		return nil
	}
	addr := &net.UnixAddr{Name: n.socket, Net: "unixgram"}
	if strings.HasPrefix(addr.Name, "@") {
		addr.Name = "\x00" + addr.Name[1:] // abstract namespace
	}
	conn, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		return fmt.Errorf("sdnotify: dial %s: %w", n.socket, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(strings.Join(states, "\n"))); err != nil {
		return fmt.Errorf("sdnotify: send: %w", err)
	}
	return nil
}

// ReloadingNow is the RELOADING=1 message with the MONOTONIC_USEC (the
// CLOCK_MONOTONIC time) that systemd wants with it.
func ReloadingNow() []string {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return []string{Reloading}
	}
	usec := ts.Sec*1_000_000 + ts.Nsec/1_000
	return []string{Reloading, "MONOTONIC_USEC=" + strconv.FormatInt(usec, 10)}
}

// WatchdogInterval reads $WATCHDOG_USEC (and $WATCHDOG_PID, which must be
// this process when set) and returns how often to ping: half the timeout, as
// sd_watchdog_enabled(3) recommends. Zero means no watchdog.
func WatchdogInterval(usec, pid string, self int) time.Duration {
	if usec == "" {
		return 0
	}
	if pid != "" {
		if p, err := strconv.Atoi(pid); err != nil || p != self {
			return 0
		}
	}
	u, err := strconv.ParseInt(usec, 10, 64)
	if err != nil || u <= 0 {
		return 0
	}
	return time.Duration(u) * time.Microsecond / 2
}
