// Package safedial keeps the fetcher off addresses a crawler must not
// reach on a stranger's behalf (SSRF): loopback, private, link-local
// (169.254.169.254, the cloud metadata service, among them), multicast,
// unspecified and other special-purpose ranges. The check runs on the
// address actually connected to, after DNS resolution, so neither DNS
// rebinding nor a redirect gets around it.
package safedial

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"
)

// BlockedError says a connection was refused by policy.
type BlockedError struct {
	Host string
	Addr netip.Addr
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("%s resolves to %s, a %s address the fetcher refuses (see --allow-private)", e.Host, e.Addr, kind(e.Addr))
}

// Dialer dials TCP connections, refusing blocked addresses except for
// hosts explicitly allowed (the hosts the user named as seeds).
type Dialer struct {
	// AllowPrivate turns the check off.
	AllowPrivate bool
	mu           sync.RWMutex
	allowed      map[string]bool // lower-case "host:port"
	net          net.Dialer
}

// New returns a dialer with the given connect timeout.
func New(timeout time.Duration) *Dialer {
	return &Dialer{allowed: map[string]bool{}, net: net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}}
}

// Allow lets connections to hostport ("host:port", a name or literal
// address) through whatever the host resolves to; a hostport without a
// port allows ports 80 and 443. Only that port: a seed does not open the
// other services of its machine.
func (d *Dialer) Allow(hostport string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
		d.allowed[key(host, "80")] = true
		d.allowed[key(host, "443")] = true
		return
	}
	d.allowed[key(host, port)] = true
}

func key(host, port string) string {
	return net.JoinHostPort(strings.ToLower(strings.Trim(host, "[]")), port)
}

func (d *Dialer) isAllowed(host, port string) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.AllowPrivate || d.allowed[key(host, port)]
}

// DialContext is an http.Transport DialContext.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if d.isAllowed(host, port) {
		return d.net.DialContext(ctx, network, address)
	}
	nd := d.net
	nd.Control = func(_, addr string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			return fmt.Errorf("check address %s: %w", addr, err)
		}
		if a := ap.Addr().Unmap(); Blocked(a) {
			return &BlockedError{Host: host, Addr: a}
		}
		return nil
	}
	return nd.DialContext(ctx, network, address)
}

var specialPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // shared address space (carrier-grade NAT)
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
}

// Blocked reports whether the fetcher refuses to connect to a.
func Blocked(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range specialPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func kind(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a.IsUnspecified():
		return "unspecified"
	}
	return "special-purpose"
}
