package outbound_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/internal/outboundtest"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/outbound"
)

// names is a resolver of the test's own: each host resolves to what the table says.
type names map[string][]string

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := n[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// TestTargets: https receivers at public addresses only, after DNS resolution, unless the
// deployment allows private targets (locally).
func TestTargets(t *testing.T) {
	dns := names{
		"hooks.example.com": {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
		"internal.example":  {"10.1.2.3"},
		"loop.example":      {"127.0.0.1"},
		"mixed.example":     {"93.184.215.14", "192.168.1.10"},
		"metadata.example":  {"169.254.169.254"},
		"mapped.example":    {"::ffff:10.0.0.1"},
		"ula.example":       {"fd00::1"},
		"cgnat.example":     {"100.64.0.1"},
		"nat64.example":     {"64:ff9b::a9fe:a9fe"},
	}
	cases := []struct {
		url          string
		allowPrivate bool
		refusal      string // "" when accepted
	}{
		{"https://hooks.example.com/interrupts", false, ""},
		{"https://hooks.example.com:8443/a?b=c", false, ""},
		{"https://93.184.215.14/hook", false, ""},
		{"http://hooks.example.com/interrupts", false, "must be https"},
		{"ftp://hooks.example.com/", false, "must be https"},
		{"https://internal.example/hook", false, "10.1.2.3"},
		{"https://loop.example/hook", false, "127.0.0.1"},
		{"https://mixed.example/hook", false, "192.168.1.10"},
		{"https://metadata.example/latest", false, "169.254.169.254"},
		{"https://mapped.example/", false, "10.0.0.1"},
		{"https://ula.example/", false, "fd00::1"},
		{"https://cgnat.example/", false, "100.64.0.1"},
		{"https://10.9.8.7/hook", false, "10.9.8.7"},
		{"https://[64:ff9b::a00:1]/", false, "64:ff9b::a00:1"},
		{"https://[2002:7f00:1::1]/", false, "2002:7f00:1::1"},
		{"https://[::7f00:1]/", false, "::7f00:1"},
		{"https://[::ffff:0:7f00:1]/", false, "::ffff:0:7f00:1"},
		{"https://[2001:0::1]/", false, "2001::1"},
		{"https://nat64.example/", false, "64:ff9b::a9fe:a9fe"},
		{"https://[64:ff9b::5db8:d70e]/", false, ""},
		{"https://[2002:5db8:d70e::1]/", false, ""},
		{"https://127.0.0.1:8443/hook", false, "127.0.0.1"},
		{"https://[::1]/hook", false, "::1"},
		{"https://0.0.0.0/", false, "0.0.0.0"},
		{"https://nowhere.example/", false, "resolves"},
		{"https://user:pw@hooks.example.com/", false, "credentials"},
		{"https://hooks.example.com/#x", false, "fragment"},
		{"/relative", false, "absolute"},
		{"https://" + strings.Repeat("a", 2050) + ".com/", false, "at most"},
		{"http://127.0.0.1:9000/hook", true, ""},
		{"https://10.9.8.7/hook", true, ""},
		{"ftp://127.0.0.1/", true, "must be https"},
	}
	for _, c := range cases {
		err := outbound.Targets{AllowPrivate: c.allowPrivate, Resolver: dns}.Check(context.Background(), c.url)
		switch {
		case c.refusal == "" && err != nil:
			t.Errorf("%s (private %v): %v", c.url, c.allowPrivate, err)
		case c.refusal != "" && (err == nil || !strings.Contains(err.Error(), c.refusal)):
			t.Errorf("%s (private %v): %v, want a refusal naming %q", c.url, c.allowPrivate, err, c.refusal)
		}
	}
}

// TestNoConnectionToAPrivateAddress: the delivery client itself refuses to connect to a
// non-public address, whatever a name resolved to when the subscription was made.
func TestNoConnectionToAPrivateAddress(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver() // on 127.0.0.1
	status, err := outbound.NewHTTPClient(false).Post(context.Background(), strings.Replace(r.URL, "http://", "https://", 1), nil, []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "not a public address") || status != 0 {
		t.Fatalf("posted to %s: %d %v", r.URL, status, err)
	}
	if len(r.Got) != 0 {
		t.Fatal("the receiver was reached")
	}
}
