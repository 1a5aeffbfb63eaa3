package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"testing"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// counter counts the DynamoDB operations a client sends, by name.
type counter struct {
	mu  sync.Mutex
	ops map[string]int
}

func (c *counter) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("count", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c.mu.Lock()
			c.ops[awsmiddleware.GetOperationName(ctx)]++
			c.mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	})
}

func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.ops
	c.ops = map[string]int{}
	return out
}

func newHost(t testing.TB, wrap func(host.Store) host.Store) (*host.Host, *counter) {
	t.Helper()
	c := &counter{ops: map[string]int{}}
	db, table := localaws.NewTable(t, c.option)
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	var l host.Store = dynamo.NewTable(db, table)
	if wrap != nil {
		l = wrap(l)
	}
	c.take()
	return host.New(host.Env{Stores: host.StoresOf(l), Schemas: sch}, host.Config{}), c
}

// alice and engine are the callers of the flows measured: the engine requests, alice decides.
// Neither holds a scope: the host checks scopes only where it mints tokens, and no flow here does.
var (
	alice  = hosttest.Who("alice")
	engine = hosttest.Who("engine")
)

// TestRoundTrips pins the DynamoDB calls of each operation on a warm path: one consistent Query
// to fold, one conditional PutItem to commit.
func TestRoundTrips(t *testing.T) {
	var l host.Store
	h, c := newHost(t, func(inner host.Store) host.Store { l = inner; return inner })
	ctx := context.Background()
	if _, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "n1", Payload: hosttest.Example(t, "custom")}); err != nil {
		t.Fatal(err)
	}
	if err := l.CreateEndpoint(ctx, webhook.Endpoint{ID: "we_1", Tenant: alice.Tenant, Provider: "stripe", Correlation: []string{"/data/id"}}, host.MaxEndpoints); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.RequestInterrupt(ctx, alice, "r0", host.Request{NodeID: "n", Endpoint: "we_1", Payload: hosttest.Example(t, "external-event")}); err != nil {
		t.Fatal(err) // a warm function has read the endpoint
	}
	c.take()
	steps := []struct {
		name string
		do   func() error
		want map[string]int
	}{
		{"request", func() error {
			_, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "n2", Payload: hosttest.Example(t, "clarification")})
			return err
		}, map[string]int{"Query": 1, "PutItem": 1}},
		{"replayed request", func() error {
			_, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "n2", Payload: hosttest.Example(t, "clarification")})
			return err
		}, map[string]int{"Query": 1}},
		{"request of an external event with a deadline, naming its endpoint: file, register, commit, confirm", func() error {
			_, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "n4", Endpoint: "we_1", Payload: hosttest.Example(t, "external-event")})
			return err
		}, map[string]int{"Query": 1, "UpdateItem": 2, "PutItem": 2}},
		{"naming none: the tenant's endpoints listed too", func() error {
			_, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "n5", Payload: json.RawMessage(`{"kind":"external-event","key":"other","timeoutMs":60000,"data":{"eventType":"t","correlation":"c"}}`)})
			return err
		}, map[string]int{"Query": 2, "UpdateItem": 2, "PutItem": 2}},
		{"resolve", func() error {
			_, err := h.Resolve(ctx, alice, "r1", "n1", json.RawMessage(`{}`), nil)
			return err
		}, map[string]int{"Query": 1, "PutItem": 1}},
		{"snapshot", func() error { _, err := h.Snapshot(ctx, alice, "r1"); return err }, map[string]int{"Query": 1}},
		{"an interrupt's outcome (an agent's get_outcome, each poll)", func() error {
			st, err := h.Snapshot(ctx, alice, "r1")
			if err != nil || len(st.Pending) == 0 {
				return fmt.Errorf("snapshot %+v %v", st, err)
			}
			c.take()
			_, err = h.InterruptOutcome(ctx, alice, "r1", st.Pending[0].InterruptID)
			return err
		}, map[string]int{"Query": 1}},
		{"events", func() error { _, err := h.Events(ctx, alice, "r1", 0, 10, ""); return err }, map[string]int{"Query": 1}},
		{"events after a commit", func() error { _, err := h.Events(ctx, alice, "r1", 1, 10, ""); return err }, map[string]int{"Query": 1}},
		{"tail poll with nothing newer", func() error {
			page, err := h.Events(ctx, alice, "r1", 5, 10, "")
			if err == nil && (len(page.Events) != 0 || page.Next != 5) {
				return fmt.Errorf("page %+v", page)
			}
			return err
		}, map[string]int{"Query": 1}},
		{"request that makes an idle run wait: the commit alone (the stream's consumer indexes it)", func() error {
			_, _, err := h.RequestInterrupt(ctx, alice, "r9", host.Request{NodeID: "n1", Payload: hosttest.Example(t, "custom")})
			return err
		}, map[string]int{"Query": 1, "PutItem": 1}},
		{"the last resolve: the commit alone", func() error {
			_, err := h.Resolve(ctx, alice, "r9", "n1", json.RawMessage(`{}`), nil)
			return err
		}, map[string]int{"Query": 1, "PutItem": 1}},
		{"the consumer's reindex of a run: its log, then its runs entry and its waiting entry, then an inbox entry for each interrupt a person decides and inbox it is filed in (one here)", func() error {
			for _, run := range []string{"r0", "r9"} {
				if err := h.Reindex(ctx, runlog.Key{Tenant: alice.Tenant, RunID: run}); err != nil {
					return err
				}
			}
			return h.Reindex(ctx, runlog.Key{Tenant: alice.Tenant, RunID: "r1"})
		}, map[string]int{"Query": 3, "PutItem": 6, "DeleteItem": 1}},
		{"the tenant's pending interrupts: the index, then a check of each entry against its log", func() error {
			page, err := h.PendingInterrupts(ctx, alice, "", 0)
			if err == nil && len(page.Interrupts) != 4 {
				return fmt.Errorf("page %+v", page)
			}
			return err
		}, map[string]int{"Query": 3}},
		{"refused payload", func() error {
			_, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "n3", Payload: json.RawMessage(`{"kind":"custom"}`)})
			if err == nil {
				return errors.New("accepted")
			}
			return nil
		}, map[string]int{}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got := c.take()
		if len(got) != len(s.want) {
			t.Errorf("%s: calls %v, want %v", s.name, got, s.want)
		}
		for op, n := range s.want {
			if got[op] != n {
				t.Errorf("%s: calls %v, want %v", s.name, got, s.want)
			}
		}
	}
}

// BenchmarkResolve measures one resolve of a pending approval against the local DynamoDB API,
// request included: the numbers are dominated by the two round trips it pins.
func BenchmarkResolve(b *testing.B) {
	h, c := newHost(b, nil)
	ctx := context.Background()
	value := json.RawMessage(`{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`)
	n := 0
	b.ReportAllocs()
	defer localaws.CPUPerOp(b)()
	for b.Loop() {
		n++
		run := "bench-" + strconv.Itoa(n)
		if _, _, err := h.RequestInterrupt(ctx, engine, run, host.Request{NodeID: "n1", Payload: hosttest.Example(b, "approval")}); err != nil {
			b.Fatal(err)
		}
		if _, err := h.Resolve(ctx, alice, run, "n1", value, nil); err != nil {
			b.Fatal(err)
		}
	}
	ops := c.take()
	b.ReportMetric(float64(ops["Query"]+ops["PutItem"])/float64(n), "roundtrips/op")
}

// TestRoundTripsOnALongRun pins the DynamoDB calls of a request and a resolve on a run whose
// early interrupts a checkpoint moved to the archive: the read is still one Query (to the
// checkpoint), a request of a key the state does not hold looks it up in the archive with one
// more, and a re-entry key from the first commit answers from there, writing nothing. Neither
// writes the waiting index: read-models keeps it from the stream (docs/design.md, "Read
// models").
func TestRoundTripsOnALongRun(t *testing.T) {
	h, c := newHost(t, nil)
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		if _, _, err := h.RequestInterrupt(ctx, alice, "long", host.Request{NodeID: "n", Payload: json.RawMessage(fmt.Sprintf(`{"kind":"custom","key":"k%d","data":{"customKind":"x"}}`, i))}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Resolve(ctx, alice, "long", "n", json.RawMessage(`{"i":`+strconv.Itoa(i)+`}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	c.take()
	steps := []struct {
		name string
		do   func() error
		want map[string]int
	}{
		{"request of a new key: the tail, the archive, the commit", func() error {
			_, _, err := h.RequestInterrupt(ctx, alice, "long", host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"fresh","data":{"customKind":"x"}}`)})
			return err
		}, map[string]int{"Query": 2, "PutItem": 1}},
		{"resolve: the commit", func() error {
			_, err := h.Resolve(ctx, alice, "long", "n", json.RawMessage(`{}`), nil)
			return err
		}, map[string]int{"Query": 1, "PutItem": 1}},
		{"the first commit's key again", func() error {
			v, created, err := h.RequestInterrupt(ctx, alice, "long", host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k0","data":{"customKind":"x"}}`)})
			if err == nil && (created || string(v.ResumeValue) != `{"i":0}`) {
				return fmt.Errorf("answered %+v created %v", v, created)
			}
			return err
		}, map[string]int{"Query": 2}},
		{"snapshot", func() error { _, err := h.Snapshot(ctx, alice, "long"); return err }, map[string]int{"Query": 1}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := c.take(); !maps.Equal(got, s.want) {
			t.Errorf("%s: calls %v, want %v", s.name, got, s.want)
		}
	}
}
