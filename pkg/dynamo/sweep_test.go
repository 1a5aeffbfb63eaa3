package dynamo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

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
	engine := host.New(host.Env{Stores: host.StoresOf(log), Schemas: sch, Now: clock.Now}, host.Config{})
	resolver := host.New(host.Env{Stores: host.StoresOf(log), Schemas: sch, Now: at(-time.Millisecond)}, host.Config{})
	sweeper := host.New(host.Env{Stores: host.StoresOf(log), Schemas: sch, Now: at(time.Millisecond)}, host.Config{})
	ctx := context.Background()
	const rounds = 30
	for i := range rounds {
		run := fmt.Sprintf("race-%d", i)
		clock.Set(t0.Add(time.Duration(i) * time.Minute))
		if _, _, err := engine.RequestInterrupt(ctx, hosttest.Who("engine"), run, host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k","timeoutMs":1000,"data":{"customKind":"x"}}`)}); err != nil {
			t.Fatal(err)
		}
		clock.Set(clock.Now().Add(time.Second))
		start := make(chan struct{})
		var wg sync.WaitGroup
		var resolveErr, sweepErr error
		wg.Go(func() {
			<-start
			_, resolveErr = resolver.Resolve(ctx, hosttest.Who("alice"), run, "n", json.RawMessage(`{"done":true}`), nil)
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
		resolved, expired := hosttest.ResolvedCount(t, engine, run), len(hosttest.ExpiredEvents(t, engine, run))
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
	h := host.New(host.Env{Stores: host.StoresOf(dynamo.NewTable(db, table)), Schemas: sch, Now: clock.Now}, host.Config{})
	ctx := context.Background()
	for i := range 6 {
		if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), fmt.Sprintf("r%d", i), host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k","timeoutMs":1000,"data":{"customKind":"x"}}`)}); err != nil {
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
		if n := len(hosttest.ExpiredEvents(t, h, fmt.Sprintf("r%d", i))); n != 1 {
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
	h := host.New(host.Env{Stores: host.StoresOf(dynamo.NewTable(db, table)), Schemas: sch, Now: clock.Now}, host.Config{})
	ctx := context.Background()
	const perSweep = 20
	expired, n, total := 0, 0, 0
	for b.Loop() {
		b.StopTimer()
		for range perSweep {
			n++
			if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), fmt.Sprintf("b%d", n), host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k","timeoutMs":1000,"data":{"customKind":"x"}}`)}); err != nil {
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
	h := host.New(host.Env{Stores: host.StoresOf(dynamo.NewTable(db, table)), Schemas: sch, Now: clock.Now}, host.Config{Retention: 24 * time.Hour})
	ctx := context.Background()
	for _, run := range []string{"ended", "waiting"} {
		if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), run, host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k","data":{"customKind":"x"}}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.EndRun(ctx, hosttest.Who("engine"), "ended", interrupt.RunCancelled, ""); err != nil {
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
