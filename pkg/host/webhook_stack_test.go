package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// dynamoHookHost is a host over a fresh table of the local DynamoDB API, with a Stripe endpoint;
// optFns shape its client (counting, faults).
func dynamoHookHost(t testing.TB, optFns ...func(*dynamodb.Options)) (*host.Host, webhook.Endpoint, *dynamodb.Client, string) {
	t.Helper()
	db, table := localaws.NewTable(t, optFns...)
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	secrets := webhook.NewCache(&memSecrets{m: map[string][]string{}}, nil)
	h := host.New(host.StoresOf(dynamo.NewTable(db, table)), sch, host.Config{Now: func() time.Time { return t0 }, Secrets: secrets})
	e, err := h.CreateEndpoint(context.Background(), who("admin"), host.EndpointRequest{Provider: "stripe", Secrets: []string{stripeSecret}})
	if err != nil {
		t.Fatal(err)
	}
	return h, e, db, table
}

// resolvedCount counts the interrupt.resolved events of a run.
func resolvedCount(t testing.TB, h *host.Host, run string) int {
	t.Helper()
	return countEvents(t, h, who("engine"), run, interrupt.EventResolved)
}

// countEvents is how many events of type typ p's run holds.
func countEvents(t testing.TB, h *host.Host, p interrupt.Principal, run, typ string) int {
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

// TestEventAndRequestRace fires an event and the request of its interrupt at the same instant,
// round after round, against the real DynamoDB API: every round joins them exactly once.
func TestEventAndRequestRace(t *testing.T) {
	h, e, _, _ := dynamoHookHost(t)
	ctx := context.Background()
	const rounds = 40
	for i := range rounds {
		corr := fmt.Sprintf("order-%d", i)
		run := fmt.Sprintf("race-%d", i)
		body := stripeEvent(fmt.Sprintf("evt_%d", i), "payment_intent.succeeded", corr)
		start := make(chan struct{})
		var wg sync.WaitGroup
		var reqErr, ingErr error
		wg.Go(func() {
			<-start
			_, _, reqErr = h.RequestInterrupt(ctx, who("engine"), run, host.Request{NodeID: "pay", Payload: waitFor(corr)})
		})
		wg.Go(func() {
			<-start
			_, ingErr = h.Ingest(ctx, e.ID, stripeHeaders(body, stripeSecret), body)
		})
		close(start)
		wg.Wait()
		if reqErr != nil || ingErr != nil {
			t.Fatalf("round %d: request %v, ingest %v", i, reqErr, ingErr)
		}
		if n := resolvedCount(t, h, run); n != 1 {
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
		h, e, _, _ := dynamoHookHost(t, f.option)
		f.calls.Store(0)
		// Its commit is written: the answer says the outcome is unknown, never "nothing written".
		if _, _, err := h.RequestInterrupt(ctx, who("engine"), "r1", host.Request{NodeID: "pay", Payload: waitFor("order-1")}); !errors.Is(err, interrupt.ErrOutcomeUnknown) {
			t.Fatalf("the request that died: %v", err)
		}
		f.revived.Store(true)
		body := stripeEvent("evt_1", "payment_intent.succeeded", "order-1")
		if res, err := h.Ingest(ctx, e.ID, stripeHeaders(body, stripeSecret), body); err != nil || res.Outcome != host.OutcomeResolved {
			t.Fatalf("the event after it: %+v %v", res, err)
		}
		if n := resolvedCount(t, h, "r1"); n != 1 {
			t.Errorf("%d resolutions", n)
		}
	})
	t.Run("event dies after being kept", func(t *testing.T) {
		f := &failing{op: "PutItem", n: 3} // 1: endpoint, 2: the request's commit, 3: the event's resolution
		h, e, _, _ := dynamoHookHost(t, f.option)
		if _, _, err := h.RequestInterrupt(ctx, who("engine"), "r1", host.Request{NodeID: "pay", Payload: waitFor("order-1")}); err != nil {
			t.Fatal(err)
		}
		body := stripeEvent("evt_1", "payment_intent.succeeded", "order-1")
		if _, err := h.Ingest(ctx, e.ID, stripeHeaders(body, stripeSecret), body); err == nil {
			t.Fatalf("the event that died answered as if resolved")
		}
		f.revived.Store(true)
		res, err := h.Ingest(ctx, e.ID, stripeHeaders(body, stripeSecret), body)
		if err != nil || res.Outcome != host.OutcomeResolved || len(res.Matched) != 1 {
			t.Fatalf("the provider's redelivery: %+v %v", res, err)
		}
		if n := resolvedCount(t, h, "r1"); n != 1 {
			t.Errorf("%d resolutions", n)
		}
	})
	t.Run("request dies before its commit", func(t *testing.T) {
		f := &failing{op: "PutItem", n: 2} // 1: endpoint, 2: the request's commit
		h, e, _, _ := dynamoHookHost(t, f.option)
		if _, _, err := h.RequestInterrupt(ctx, who("engine"), "r1", host.Request{NodeID: "pay", Payload: waitFor("order-1")}); err == nil {
			t.Fatalf("the request that died answered as if committed")
		}
		f.revived.Store(true)
		body := stripeEvent("evt_1", "payment_intent.succeeded", "order-1")
		if res, err := h.Ingest(ctx, e.ID, stripeHeaders(body, stripeSecret), body); err != nil || res.Outcome != host.OutcomeBuffered {
			t.Fatalf("the event skips the stale waiter and is kept: %+v %v", res, err)
		}
		v, _, err := h.RequestInterrupt(ctx, who("engine"), "r1", host.Request{NodeID: "pay", Payload: waitFor("order-1")})
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
	h, e, _, _ := dynamoHookHost(t, c.option)
	ctx := context.Background()
	if _, _, err := h.RequestInterrupt(ctx, who("engine"), "r1", host.Request{NodeID: "pay", Payload: waitFor("order-1")}); err != nil {
		t.Fatal(err)
	}
	warm := stripeEvent("evt_0", "payment_intent.succeeded", "order-0")
	if _, err := h.Ingest(ctx, e.ID, stripeHeaders(warm, stripeSecret), warm); err != nil {
		t.Fatal(err)
	}
	body := stripeEvent("evt_1", "payment_intent.succeeded", "order-1")
	c.take()
	if res, err := h.Ingest(ctx, e.ID, stripeHeaders(body, stripeSecret), body); err != nil || res.Outcome != host.OutcomeResolved {
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
	if _, err := h.Ingest(ctx, e.ID, stripeHeaders(body, stripeSecret), body); err != nil {
		t.Fatal(err)
	}
	if ops := c.take(); ops["UpdateItem"] != 1 || len(ops) > 2 {
		t.Errorf("a redelivery took %v", ops)
	}
}

// TestResolveAndSweepRace: a resolve just before the deadline and the sweep just after it, at
// once, against the real DynamoDB API, round after round: exactly one of interrupt.resolved and
// interrupt.expired.
func TestResolveAndSweepRace(t *testing.T) {
	db, table := localaws.NewTable(t)
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	at := func(d time.Duration) func() time.Time { return func() time.Time { return clock.Now().Add(d) } }
	log := dynamo.NewTable(db, table)
	engine := host.New(host.StoresOf(log), sch, host.Config{Now: clock.Now})
	resolver := host.New(host.StoresOf(log), sch, host.Config{Now: at(-time.Millisecond)})
	sweeper := host.New(host.StoresOf(log), sch, host.Config{Now: at(time.Millisecond)})
	ctx := context.Background()
	const rounds = 30
	for i := range rounds {
		run := fmt.Sprintf("race-%d", i)
		clock.Set(t0.Add(time.Duration(i) * time.Minute))
		if _, _, err := engine.RequestInterrupt(ctx, who("engine"), run, host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k","timeoutMs":1000,"data":{"customKind":"x"}}`)}); err != nil {
			t.Fatal(err)
		}
		clock.Set(clock.Now().Add(time.Second))
		start := make(chan struct{})
		var wg sync.WaitGroup
		var resolveErr, sweepErr error
		wg.Go(func() {
			<-start
			_, resolveErr = resolver.Resolve(ctx, who("alice"), run, "n", json.RawMessage(`{"done":true}`), nil)
		})
		wg.Go(func() {
			<-start
			_, sweepErr = sweeper.Sweep(ctx)
		})
		close(start)
		wg.Wait()
		if sweepErr != nil || (resolveErr != nil && interrupt.ErrorCode(resolveErr) != interrupt.CodeAlreadyResolved) {
			t.Fatalf("round %d: resolve %v, sweep %v", i, resolveErr, sweepErr)
		}
		resolved, expired := resolvedCount(t, engine, run), len(expiredEvents(t, engine, run))
		if resolved+expired != 1 || (resolveErr == nil) != (resolved == 1) {
			t.Fatalf("round %d: %d resolved, %d expired (resolve answered %v)", i, resolved, expired, resolveErr)
		}
	}
}

// TestSweepDyingMidwayIsFinished: a sweep whose store fails after some expiries leaves no
// half-written expiry, and the next sweep finishes: every interrupt expired exactly once.
func TestSweepDyingMidwayIsFinished(t *testing.T) {
	f := &failing{op: "PutItem", n: 0}
	db, table := localaws.NewTable(t, f.option)
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	h := host.New(host.StoresOf(dynamo.NewTable(db, table)), sch, host.Config{Now: clock.Now})
	ctx := context.Background()
	for i := range 6 {
		if _, _, err := h.RequestInterrupt(ctx, who("engine"), fmt.Sprintf("r%d", i), host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k","timeoutMs":1000,"data":{"customKind":"x"}}`)}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(t0.Add(2 * time.Minute))
	f.calls.Store(0)
	f.n = 4 // the fourth expiry's append dies
	if _, err := h.Sweep(ctx); err == nil {
		t.Fatalf("the sweep that died answered as if done")
	}
	f.revived.Store(true)
	if r, err := h.Sweep(ctx); err != nil || !r.CaughtUp {
		t.Fatalf("the next sweep: %+v %v", r, err)
	}
	for i := range 6 {
		if n := len(expiredEvents(t, h, fmt.Sprintf("r%d", i))); n != 1 {
			t.Errorf("r%d: %d interrupt.expired", i, n)
		}
	}
}

// BenchmarkSweep measures the sweep's cost per expired interrupt against the local DynamoDB
// API: round trips (its share of the due index, the run's log, the append) and time.
func BenchmarkSweep(b *testing.B) {
	c := &counter{ops: map[string]int{}}
	db, table := localaws.NewTable(b, c.option)
	sch, err := schema.Load()
	if err != nil {
		b.Fatal(err)
	}
	clock := testclock.New(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	h := host.New(host.StoresOf(dynamo.NewTable(db, table)), sch, host.Config{Now: clock.Now})
	ctx := context.Background()
	const perSweep = 20
	expired, n, total := 0, 0, 0
	for b.Loop() {
		b.StopTimer()
		for range perSweep {
			n++
			if _, _, err := h.RequestInterrupt(ctx, who("engine"), fmt.Sprintf("b%d", n), host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k","timeoutMs":1000,"data":{"customKind":"x"}}`)}); err != nil {
				b.Fatal(err)
			}
		}
		clock.Set(clock.Now().Add(2 * time.Minute))
		c.take()
		b.StartTimer()
		r, err := h.Sweep(ctx)
		if err != nil {
			b.Fatal(err)
		}
		expired += r.Expired
		for _, v := range c.take() {
			total += v
		}
	}
	if expired > 0 {
		b.ReportMetric(float64(total)/float64(expired), "roundtrips/expiry")
	}
}

// TestRetentionOnTheItems: on the real DynamoDB API (which, locally, never deletes), every
// commit item of an ended run carries the table's TTL attribute after the sweep, the retention
// period after the end; a waiting run's items carry none.
func TestRetentionOnTheItems(t *testing.T) {
	db, table := localaws.NewTable(t)
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Truncate(time.Second)
	clock := testclock.New(t0)
	h := host.New(host.StoresOf(dynamo.NewTable(db, table)), sch, host.Config{Now: clock.Now, Retention: 24 * time.Hour})
	ctx := context.Background()
	for _, run := range []string{"ended", "waiting"} {
		if _, _, err := h.RequestInterrupt(ctx, who("engine"), run, host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k","data":{"customKind":"x"}}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.EndRun(ctx, who("engine"), "ended", interrupt.RunCancelled, ""); err != nil {
		t.Fatal(err)
	}
	clock.Set(t0.Add(2 * time.Minute))
	if _, err := h.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: &table, ConsistentRead: new(true)})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(t0.Add(24 * time.Hour).Unix())
	commits := 0
	for _, item := range out.Items {
		pk := item["pk"].(*types.AttributeValueMemberS).Value
		if !strings.Contains(pk, "#run#") {
			continue
		}
		commits++
		exp, has := item["expiresAt"].(*types.AttributeValueMemberN)
		switch {
		case strings.HasSuffix(pk, "#run#ended") && (!has || exp.Value != want):
			t.Errorf("%s: expiresAt %v, want %s", pk, item["expiresAt"], want)
		case strings.HasSuffix(pk, "#run#waiting") && has:
			t.Errorf("%s: a waiting run's commit expires at %s", pk, exp.Value)
		}
	}
	if commits != 3 {
		t.Errorf("%d commit items", commits)
	}
}

// TestAnEventWithALongIDIsAnswered: a verified event whose id is longer than DynamoDB lets a
// key be (Stripe's ids are short, but the signature proves only who sent it) is answered like
// any other, once, and its redelivery is a duplicate: no 500 for the provider to retry forever.
func TestAnEventWithALongIDIsAnswered(t *testing.T) {
	ctx := context.Background()
	h, e, _, _ := dynamoHookHost(t)
	for _, body := range [][]byte{
		[]byte(`{"id":"evt_` + strings.Repeat("x", 2000) + `","type":"payment_intent.succeeded","data":{"object":{}}}`), // no correlation value: its answer is recorded by its id
		stripeEvent("evt_"+strings.Repeat("y", 2000), "payment_intent.succeeded", "order-long"),
	} {
		first, err := h.Ingest(ctx, e.ID, stripeHeaders(body, stripeSecret), body)
		if err != nil {
			t.Fatalf("the event: %v", err)
		}
		again, err := h.Ingest(ctx, e.ID, stripeHeaders(body, stripeSecret), body)
		if err != nil || again.Outcome != host.OutcomeDuplicate || again.EventID != first.EventID {
			t.Errorf("its redelivery: %+v %v (first %s)", again, err, first.Outcome)
		}
	}
}
