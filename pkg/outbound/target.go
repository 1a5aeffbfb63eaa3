package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// Resolver finds the addresses of a host name (net.DefaultResolver).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Targets decides which URLs a subscription may deliver to. A receiver must be an https URL
// whose host resolves only to public addresses: a subscriber must not be able to aim the host's
// requests at its own network (the metadata service, a VPC's internal services). AllowPrivate
// (the template parameter AllowPrivateDeliveryTargets, on locally) admits any address and http.
type Targets struct {
	AllowPrivate bool
	Resolver     Resolver
}

// MaxURLLen bounds a subscription's URL.
const MaxURLLen = 2048

// Check refuses a URL a subscription may not deliver to, saying why in a sentence a client can
// act on.
func (t Targets) Check(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	switch {
	case len(raw) > MaxURLLen:
		return fmt.Errorf("must be at most %d characters", MaxURLLen)
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return errors.New("must be an absolute URL")
	case u.User != nil:
		return errors.New("must not carry credentials")
	case u.Fragment != "":
		return errors.New("must not carry a fragment")
	case u.Scheme != "https" && !(t.AllowPrivate && u.Scheme == "http"):
		return errors.New("must be https")
	}
	if t.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	if addr, err := netip.ParseAddr(host); err == nil {
		if !Public(addr) {
			return fmt.Errorf("must not target a private, loopback or link-local address (%s)", addr)
		}
		return nil
	}
	r := t.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("must name a host that resolves (%s does not)", host)
	}
	for _, a := range addrs {
		if !Public(a) {
			return fmt.Errorf("must not resolve to a private, loopback or link-local address (%s resolves to %s)", host, a.Unmap())
		}
	}
	return nil
}

// nonPublic are the ranges no receiver may be in, beyond what netip's predicates name.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("2001::/32"),       // Teredo: tunnels to an IPv4 address of anyone's choosing
}

// IPv6 ranges whose addresses carry an IPv4 address that a translator or tunnel on the path
// delivers to: a receiver there is where that IPv4 address is.
var (
	nat64          = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052, the last 32 bits
	ipv4Compatible = netip.MustParsePrefix("::/96")        // deprecated, the last 32 bits
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	sixToFour      = netip.MustParsePrefix("2002::/16") // RFC 3056, bits 16 to 48
)

// embedded is the IPv4 address an IPv6 transition address carries, if it is one.
func embedded(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case !a.Is6():
		return a, false
	case nat64.Contains(a), ipv4Compatible.Contains(a), ipv4Translated.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return a, false
}

// Public reports whether a is an address a receiver may have: not loopback, private (RFC 1918,
// fc00::/7), link-local (169.254/16 with the metadata service, fe80::/10), unspecified,
// multicast or otherwise reserved. IPv4-mapped IPv6 addresses are judged as the IPv4 address,
// and so are the IPv6 forms that carry one to a translator or tunnel (NAT64, 6to4,
// IPv4-compatible and -translated); Teredo is refused outright.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	if v4, ok := embedded(a); ok {
		return Public(v4)
	}
	return true
}

// dialControl refuses, at connect time, a connection to an address that is not public: a host
// name that resolved to a public address when the subscription was made may resolve elsewhere
// now (DNS rebinding).
func dialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("outbound: dial %s: %w", address, err)
	}
	if !Public(ap.Addr()) {
		return fmt.Errorf("outbound: %s is not a public address", ap.Addr())
	}
	return nil
}

// Timeout bounds one delivery attempt, connection to last byte.
const Timeout = 5 * time.Second

// NewHTTPClient is the client deliveries go out with: bounded by Timeout, never following a
// redirect (a receiver answers for itself), and unless allowPrivate refusing any connection to
// an address that is not public.
func NewHTTPClient(allowPrivate bool) *HTTPClient {
	dialer := &net.Dialer{Timeout: Timeout}
	if !allowPrivate {
		dialer.Control = dialControl
	}
	return &HTTPClient{allowPrivate: allowPrivate, client: &http.Client{
		Timeout: Timeout,
		Transport: &http.Transport{
			DialContext: dialer.DialContext, TLSHandshakeTimeout: Timeout, ResponseHeaderTimeout: Timeout,
			MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second, ForceAttemptHTTP2: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}
