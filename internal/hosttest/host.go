package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/testkeys"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/schemas"
)

// T0 is the tests' present: MemHost's clock and the time Stripe's test signatures are made at,
// so that a signature is never too old for the host that checks it.
var T0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// Keys is a keyring of one key, for minting without Secrets Manager.
var Keys = testkeys.Static{ActiveKid: "k1", Keys: map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")}}

// Who is the principal sub of tenant acme, holding no scope, proven by a JWT (as the API's
// callers are); Via changes how.
func Who(sub string) interrupt.Principal {
	return interrupt.Principal{Subject: sub, Tenant: "acme", Via: interrupt.ViaJWT}
}

// Setup is what MemHost builds its host with, for a test to change before: its policy and what
// it runs with.
type Setup struct {
	Config host.Config
	Env    host.Env
}

// MemHost is a host over an in-memory log, with every ref kind advertised and "boss" an override
// principal, its clock at T0: the rules run without a network in microseconds.
func MemHost(t testing.TB, configure ...func(*Setup)) (*host.Host, *inmem.Store) {
	t.Helper()
	return MemHostOn(t, nil, configure...)
}

// MemHostOn is MemHost over wrap(log), a log that watches or steers the in-memory one.
func MemHostOn(t testing.TB, wrap func(host.Store) host.Store, configure ...func(*Setup)) (*host.Host, *inmem.Store) {
	t.Helper()
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	set := Setup{
		Config: host.Config{
			Capabilities: []string{"conversation"}, RefKinds: []string{"principal", "group", "role"},
			OverridePrincipals: []string{"boss"},
		},
		Env: host.Env{Schemas: sch, Now: func() time.Time { return T0 }},
	}
	for _, c := range configure {
		c(&set)
	}
	l := inmem.New()
	var log host.Store = l
	if wrap != nil {
		log = wrap(l)
	}
	set.Env.Stores = host.StoresOf(log)
	return host.New(set.Env, set.Config), l
}

// Example is the schema's example payload of an interrupt kind: what the API documents is what
// the tests request.
func Example(t testing.TB, kind string) json.RawMessage {
	t.Helper()
	raw, err := fs.ReadFile(schemas.Examples, "examples/"+kind+".json")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Custom is the smallest payload of an interrupt, a custom one of key, without a deadline.
func Custom(key string) json.RawMessage {
	return json.RawMessage(`{"kind":"custom","key":"` + key + `","data":{"customKind":"x"}}`)
}

// BigPayload is a custom interrupt's payload of about size bytes.
func BigPayload(key string, size int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"kind":"custom","key":%q,"data":{"customKind":"x","payload":%q}}`, key, strings.Repeat("x", size)))
}

// ExpiredEvents are the interrupt.expired events of a run of acme, as the engine reads them.
func ExpiredEvents(t testing.TB, h *host.Host, run string) []runlog.Envelope {
	t.Helper()
	page, err := h.Events(context.Background(), Who("engine"), run, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []runlog.Envelope
	for _, e := range page.Events {
		if e.Type == interrupt.EventExpired {
			out = append(out, e)
		}
	}
	return out
}

// ResolvedCount counts the interrupt.resolved events of a run of acme: a race or a fault that
// resolves an interrupt twice, or never, shows here.
func ResolvedCount(t testing.TB, h *host.Host, run string) int {
	t.Helper()
	return CountEvents(t, h, Who("engine"), run, interrupt.EventResolved)
}

// CountEvents is how many events of type typ p's run holds.
func CountEvents(t testing.TB, h *host.Host, p interrupt.Principal, run, typ string) int {
	t.Helper()
	page, err := h.Events(context.Background(), p, run, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range page.Events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// Tokens are h's token operations, signing and verifying with Keys.
func Tokens(h *host.Host) *host.Signer { return host.NewSigner(h, Keys) }
