package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// metered configures a host to write its metrics to the returned buffer.
func metered(buf *bytes.Buffer) func(*hosttest.Setup) {
	return func(s *hosttest.Setup) { s.Env.Metrics = metrics.New(buf, "test") }
}

func points(t *testing.T, buf *bytes.Buffer) []metrics.Point {
	t.Helper()
	ps, err := metrics.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func kind(k string) metrics.Dim { return metrics.Dim{Name: metrics.DimKind, Value: k} }

// TestMetricsCountCommits: an interrupt requested once and resolved by the one of eight
// concurrent callers who won is counted once each, by kind; the losers are not.
func TestMetricsCountCommits(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	h, _ := hosttest.MemHost(t, metered(&buf))
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k","data":{"customKind":"x"}}`)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var won atomic.Int32
	for range 8 {
		wg.Go(func() {
			if _, err := h.Resolve(ctx, hosttest.Who("alice"), "r1", "n", json.RawMessage(`{}`), nil); err == nil {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	ps := points(t, &buf)
	if won.Load() != 1 {
		t.Fatalf("%d resolves won", won.Load())
	}
	for _, tc := range []struct {
		name metrics.Name
		dims []metrics.Dim
		want float64
	}{
		{metrics.Requested, []metrics.Dim{kind("custom")}, 1},
		{metrics.Resolved, []metrics.Dim{kind("custom")}, 1},
		{metrics.Resolved, nil, 1},
		{metrics.Expired, nil, 0},
	} {
		if got := metrics.Total(ps, tc.name, tc.dims...); got != tc.want {
			t.Errorf("%s %v = %v, want %v", tc.name, tc.dims, got, tc.want)
		}
	}
}

// behind answers one Tail without its newest commit, as a reader that lost a race sees it.
type behind struct {
	host.Store
	armed atomic.Bool
}

func (b *behind) Tail(ctx context.Context, k runlog.Key) (*runlog.Checkpoint, []runlog.Commit, error) {
	cp, commits, err := b.Store.Tail(ctx, k)
	if err == nil && len(commits) > 0 && b.armed.CompareAndSwap(true, false) {
		commits = commits[:len(commits)-1]
	}
	return cp, commits, err
}

// TestMetricsCountWriteRaces: a resolve decided on a log one commit behind loses the race for
// its seq, is decided again, and is counted as one write race.
func TestMetricsCountWriteRaces(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	var stale *behind
	h, _ := hosttest.MemHostOn(t, func(s host.Store) host.Store { stale = &behind{Store: s}; return stale }, metered(&buf))
	for _, node := range []string{"a", "b"} {
		if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: node, Payload: json.RawMessage(`{"kind":"custom","key":"` + node + `","data":{"customKind":"x"}}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := metrics.Total(points(t, &buf), metrics.WriteRaces); got != 0 {
		t.Fatalf("%v write races before any", got)
	}
	stale.armed.Store(true)
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), "r1", "a", json.RawMessage(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	if stale.armed.Load() {
		t.Fatal("the resolve never read the run's tail")
	}
	if got := metrics.Total(points(t, &buf), metrics.WriteRaces); got != 1 {
		t.Errorf("%v write races, want 1", got)
	}
}

// TestMetricsOfTheSweep: each sweep reports its lag, how long past its deadline the oldest entry
// it found due was, and the expiries it wrote count by kind.
func TestMetricsOfTheSweep(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 45, 0, time.UTC)
	clock := testclock.New(t0)
	var buf bytes.Buffer
	h, _ := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now }, metered(&buf))
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: timed("k", 1500)}); err != nil {
		t.Fatal(err)
	}
	var lags []float64
	for _, at := range []time.Duration{time.Second, 4 * time.Second, 5 * time.Minute} {
		clock.Set(t0.Add(at))
		r, err := h.Sweep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lags = append(lags, r.LagSeconds)
	}
	var sweepLags []float64
	for _, p := range points(t, &buf) {
		if p.Name == metrics.SweepLag {
			if p.Unit != metrics.Seconds {
				t.Errorf("SweepLag in %s", p.Unit)
			}
			sweepLags = append(sweepLags, p.Value)
		}
	}
	// Before the deadline nothing is due; 2.5 s after it the entry is; once handled, nothing is.
	want := []float64{0, 2.5, 0}
	if len(sweepLags) != len(want) {
		t.Fatalf("SweepLag points %v, want %v", sweepLags, want)
	}
	for i := range want {
		if sweepLags[i] != want[i] || lags[i] != want[i] {
			t.Errorf("sweep %d: lag %v (report %v), want %v", i, sweepLags[i], lags[i], want[i])
		}
	}
	if got := metrics.Total(points(t, &buf), metrics.Expired, kind("approval")); got != 1 {
		t.Errorf("%v approvals expired, want 1", got)
	}
}

// TestMetricsTimeDecisions: each resolution publishes how long its interrupt waited, from its
// request to the resolving commit, by kind; an expiry publishes none.
func TestMetricsTimeDecisions(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	clock := testclock.New(hosttest.T0)
	h, _ := hosttest.MemHost(t, metered(&buf), func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	approval := json.RawMessage(`{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"]}}`)
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "n", Payload: approval}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(90 * time.Second)
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), "r1", "n", json.RawMessage(`{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`), nil); err != nil {
		t.Fatal(err)
	}
	ps := points(t, &buf)
	if got := metrics.Total(ps, metrics.DecisionTime, kind("approval")); got != 90 {
		t.Errorf("DecisionTime %v, want 90 s", got)
	}
	if got := metrics.Total(ps, metrics.DecisionTime, kind("custom")); got != 0 {
		t.Errorf("DecisionTime of another kind %v", got)
	}
}
