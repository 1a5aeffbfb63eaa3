package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// dynamoHookHost is a host over a fresh table of the local DynamoDB API, with a Stripe endpoint;
// optFns shape its client (counting, faults).
func dynamoHookHost(t testing.TB, optFns ...func(*dynamodb.Options)) (*host.Host, *host.Webhooks, webhook.Endpoint) {
	t.Helper()
	db, table := localaws.NewTable(t, optFns...)
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	secrets := webhook.NewCache(inmem.NewSecrets(), nil)
	h := host.New(host.Env{Stores: host.StoresOf(dynamo.NewTable(db, table)), Schemas: sch, Now: func() time.Time { return hosttest.T0 }}, host.Config{})
	hooks := host.NewWebhooks(h, secrets)
	e, err := hooks.CreateEndpoint(context.Background(), hosttest.Who("admin"), host.EndpointRequest{Provider: "stripe", Secrets: []string{hosttest.StripeSecret}})
	if err != nil {
		t.Fatal(err)
	}
	return h, hooks, e
}

// TestEventAndRequestRace fires an event and the request of its interrupt at the same instant,
// round after round, against the real DynamoDB API: every round joins them exactly once.
func TestEventAndRequestRace(t *testing.T) {
	h, hooks, e := dynamoHookHost(t)
	ctx := context.Background()
	const rounds = 40
	for i := range rounds {
		corr := fmt.Sprintf("order-%d", i)
		run := fmt.Sprintf("race-%d", i)
		body := hosttest.StripeEvent(fmt.Sprintf("evt_%d", i), "payment_intent.succeeded", corr)
		start := make(chan struct{})
		var wg sync.WaitGroup
		var reqErr, ingErr error
		wg.Go(func() {
			<-start
			_, _, reqErr = h.RequestInterrupt(ctx, hosttest.Who("engine"), run, host.Request{NodeID: "pay", Payload: hosttest.WaitFor(corr)})
		})
		wg.Go(func() {
			<-start
			_, ingErr = hooks.Ingest(ctx, e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), body)
		})
		close(start)
		wg.Wait()
		if reqErr != nil || ingErr != nil {
			t.Fatalf("round %d: request %v, ingest %v", i, reqErr, ingErr)
		}
		if n := hosttest.ResolvedCount(t, h, run); n != 1 {
			t.Fatalf("round %d: %d resolutions, want exactly one", i, n)
		}
	}
}

// failing fails the n-th call of one DynamoDB operation and every later one until revived, as
// a process that died there would leave things: that write never happened, and nothing after it
// ran (revive is its successor's start).
type failing struct {
	op      string
	n       int32
	calls   atomic.Int32
	revived atomic.Bool
}

func (f *failing) option(o *dynamodb.Options) {
	o.RetryMaxAttempts = 1
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("fail", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if awsmiddleware.GetOperationName(ctx) == f.op && f.calls.Add(1) >= f.n && f.n > 0 && !f.revived.Load() {
				return middleware.InitializeOutput{}, middleware.Metadata{}, &smithy.GenericAPIError{Code: "ServiceUnavailable", Message: "the process died here"}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	})
}

// TestDyingBetweenWritesIsRepaired: a request that dies after its commit, before confirming its
// waiter, is still joined by the event (its waiter was registered before the commit); an event
// that dies after being kept, before resolving, is finished by the provider's redelivery; a
// request that dies before its commit leaves a waiter the event skips.
func TestDyingBetweenWritesIsRepaired(t *testing.T) {
	ctx := context.Background()
	t.Run("request dies before confirming", func(t *testing.T) {
		f := &failing{op: "UpdateItem", n: 2} // 1: register, 2: confirm
		h, hooks, e := dynamoHookHost(t, f.option)
		f.calls.Store(0)
		// Its commit is written: the answer says the outcome is unknown, never "nothing written".
		if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-1")}); !errors.Is(err, interrupt.ErrOutcomeUnknown) {
			t.Fatalf("the request that died: %v", err)
		}
		f.revived.Store(true)
		body := hosttest.StripeEvent("evt_1", "payment_intent.succeeded", "order-1")
		if res, err := hooks.Ingest(ctx, e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), body); err != nil || res.Outcome != host.OutcomeResolved {
			t.Fatalf("the event after it: %+v %v", res, err)
		}
		if n := hosttest.ResolvedCount(t, h, "r1"); n != 1 {
			t.Errorf("%d resolutions", n)
		}
	})
	t.Run("event dies after being kept", func(t *testing.T) {
		f := &failing{op: "PutItem", n: 3} // 1: endpoint, 2: the request's commit, 3: the event's resolution
		h, hooks, e := dynamoHookHost(t, f.option)
		if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-1")}); err != nil {
			t.Fatal(err)
		}
		body := hosttest.StripeEvent("evt_1", "payment_intent.succeeded", "order-1")
		if _, err := hooks.Ingest(ctx, e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), body); err == nil {
			t.Fatalf("the event that died answered as if resolved")
		}
		f.revived.Store(true)
		res, err := hooks.Ingest(ctx, e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), body)
		if err != nil || res.Outcome != host.OutcomeResolved || len(res.Matched) != 1 {
			t.Fatalf("the provider's redelivery: %+v %v", res, err)
		}
		if n := hosttest.ResolvedCount(t, h, "r1"); n != 1 {
			t.Errorf("%d resolutions", n)
		}
	})
	t.Run("request dies before its commit", func(t *testing.T) {
		f := &failing{op: "PutItem", n: 2} // 1: endpoint, 2: the request's commit
		h, hooks, e := dynamoHookHost(t, f.option)
		if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-1")}); err == nil {
			t.Fatalf("the request that died answered as if committed")
		}
		f.revived.Store(true)
		body := hosttest.StripeEvent("evt_1", "payment_intent.succeeded", "order-1")
		if res, err := hooks.Ingest(ctx, e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), body); err != nil || res.Outcome != host.OutcomeBuffered {
			t.Fatalf("the event skips the stale waiter and is kept: %+v %v", res, err)
		}
		v, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-1")})
		if err != nil || v.Status != interrupt.StatusResolved {
			t.Errorf("the engine's retry of the request: %+v %v", v, err)
		}
	})
}

// TestIngestRoundTrips pins the DynamoDB calls of ingesting one event that resolves one waiting
// interrupt (the endpoint cached, as on a warm function): keep it in its slot, read and append
// to the run's log, and settle the slot (the stream's consumer takes the run out of the waiting
// index). A redelivery costs one.
func TestIngestRoundTrips(t *testing.T) {
	c := &counter{ops: map[string]int{}}
	h, hooks, e := dynamoHookHost(t, c.option)
	ctx := context.Background()
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-1")}); err != nil {
		t.Fatal(err)
	}
	warm := hosttest.StripeEvent("evt_0", "payment_intent.succeeded", "order-0")
	if _, err := hooks.Ingest(ctx, e.ID, hosttest.StripeHeaders(warm, hosttest.StripeSecret), warm); err != nil {
		t.Fatal(err)
	}
	body := hosttest.StripeEvent("evt_1", "payment_intent.succeeded", "order-1")
	c.take()
	if res, err := hooks.Ingest(ctx, e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), body); err != nil || res.Outcome != host.OutcomeResolved {
		t.Fatalf("%+v %v", res, err)
	}
	ops := c.take()
	total := 0
	for _, n := range ops {
		total += n
	}
	if total > 4 || ops["PutItem"] != 1 || ops["UpdateItem"] != 2 || ops["DeleteItem"] != 0 {
		t.Errorf("ingest took %v", ops)
	}
	if _, err := hooks.Ingest(ctx, e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), body); err != nil {
		t.Fatal(err)
	}
	if ops := c.take(); ops["UpdateItem"] != 1 || len(ops) > 2 {
		t.Errorf("a redelivery took %v", ops)
	}
}

// TestAnEventWithALongIDIsAnswered: a verified event whose id is longer than DynamoDB lets a
// key be (Stripe's ids are short, but the signature proves only who sent it) is answered like
// any other, once, and its redelivery is a duplicate: no 500 for the provider to retry forever.
func TestAnEventWithALongIDIsAnswered(t *testing.T) {
	ctx := context.Background()
	_, hooks, e := dynamoHookHost(t)
	for _, body := range [][]byte{
		[]byte(`{"id":"evt_` + strings.Repeat("x", 2000) + `","type":"payment_intent.succeeded","data":{"object":{}}}`), // no correlation value: its answer is recorded by its id
		hosttest.StripeEvent("evt_"+strings.Repeat("y", 2000), "payment_intent.succeeded", "order-long"),
	} {
		first, err := hooks.Ingest(ctx, e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), body)
		if err != nil {
			t.Fatalf("the event: %v", err)
		}
		again, err := hooks.Ingest(ctx, e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), body)
		if err != nil || again.Outcome != host.OutcomeDuplicate || again.EventID != first.EventID {
			t.Errorf("its redelivery: %+v %v (first %s)", again, err, first.Outcome)
		}
	}
}
