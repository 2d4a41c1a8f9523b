package console

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// client names who is asking, for the limit on wrong tokens: the peer's
// address (an IPv6 address by its /64, which one host usually holds
// whole). When the peer is a configured trusted proxy, the client is the
// last address in X-Forwarded-For that is not one; never anything a client
// could forge past a proxy it does not control.
func (c *Console) client(r *http.Request) string {
	peer, ok := peerAddr(r)
	if !ok {
		return r.RemoteAddr
	}
	if c.trusted(peer) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break
			}
			if a = a.Unmap(); !c.trusted(a) {
				peer = a
				break
			}
		}
	}
	if peer.Is6() {
		p, _ := peer.Prefix(64)
		return p.String()
	}
	return peer.String()
}

func peerAddr(r *http.Request) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

func (c *Console) trusted(a netip.Addr) bool {
	for _, p := range c.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// openRead reports whether r may read without a token: only with
// maintenance.http.openReadsOnLoopback, only a GET from this host that came
// straight (not through a proxy, trusted or not, nor with the headers one
// adds), and only when its Host names this listener. The Host check is what
// stops DNS rebinding: a page of attacker.example whose name now resolves
// to 127.0.0.1 still sends Host: attacker.example.
func (c *Console) openRead(r *http.Request) bool {
	if !c.opts.Settings().OpenReadsOnLoopback || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	peer, ok := peerAddr(r)
	if !ok || !peer.IsLoopback() || c.trusted(peer) {
		return false
	}
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Real-Ip"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	return c.namesListener(r.Host)
}

// namesListener reports whether host (a Host header) is one of this
// listener's own names: 127.0.0.1, localhost or [::1] with its port, or the
// configured listen address.
func (c *Console) namesListener(host string) bool {
	host = strings.ToLower(host)
	_, port, err := net.SplitHostPort(c.opts.Listen)
	if err != nil || host == "" {
		return false
	}
	names := []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, strings.ToLower(c.opts.Listen)}
	if l := c.opts.Settings().Listen; l != "" {
		names = append(names, strings.ToLower(l))
	}
	if port == "80" {
		names = append(names, "127.0.0.1", "localhost", "[::1]")
	}
	for _, n := range names {
		if host == n {
			return true
		}
	}
	return false
}
