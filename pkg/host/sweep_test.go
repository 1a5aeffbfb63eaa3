package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

func timed(key string, ms int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"kind":"approval","key":%q,"timeoutMs":%d,"data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"],"requiredApprovals":2}}`, key, ms))
}

// TestSweepExpires: an interrupt past its deadline gets exactly one interrupt.expired from the
// sweep, without any read in between; its votes end with it, it releases nothing, and a resolve
// after it answers 409.
func TestSweepExpires(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 45, 0, time.UTC)
	clock := testclock.New(t0)
	h, _ := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	v, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: timed("k", 1500)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), "r1", "gate", decision("accept"), nil); err != nil {
		t.Fatal(err)
	}
	clock.Set(t0.Add(time.Second))
	if r, err := h.Sweep(ctx); err != nil || r.Expired != 0 {
		t.Fatalf("before the deadline: %+v %v", r, err)
	}
	clock.Set(t0.Add(2 * time.Second))
	r, err := h.Sweep(ctx)
	if err != nil || r.Expired != 1 || r.Entries != 1 {
		t.Fatalf("past the deadline: %+v %v", r, err)
	}
	if r, err := h.Sweep(ctx); err != nil || r.Expired != 0 {
		t.Errorf("a second sweep: %+v %v", r, err)
	}
	clock.Set(t0.Add(5 * time.Minute))
	if r, err := h.Sweep(ctx); err != nil || r.Expired != 0 || !r.CaughtUp {
		t.Errorf("minutes later: %+v %v", r, err)
	}
	expired := hosttest.ExpiredEvents(t, h, "r1")
	if len(expired) != 1 {
		t.Fatalf("%d interrupt.expired", len(expired))
	}
	var payload map[string]any
	if err := json.Unmarshal(expired[0].Payload, &payload); err != nil {
		t.Fatal(err)
	}
	if payload["interruptId"] != v.InterruptID || payload["nodeId"] != "gate" || payload["kind"] != "approval" || payload["deadline"] != "2026-11-30T09:00:46.500Z" {
		t.Errorf("payload %v", payload)
	}
	if _, err := h.Resolve(ctx, hosttest.Who("bob"), "r1", "gate", decision("accept"), nil); interrupt.ErrorCode(err) != interrupt.CodeAlreadyResolved {
		t.Errorf("a vote after the expiry: %v", err)
	}
	if snap, _ := h.Snapshot(ctx, hosttest.Who("engine"), "r1"); len(snap.Pending) != 0 || snap.Status != interrupt.RunRunning {
		t.Errorf("snapshot %+v", snap)
	}
	if hosttest.ResolvedCount(t, h, "r1") != 0 {
		t.Errorf("the expiry released the gate")
	}
}

// TestSweepSkipsWhatIsDone: entries of interrupts resolved in time, of runs ended, and of
// requests that never committed write nothing.
func TestSweepSkipsWhatIsDone(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	h, l := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	custom := func(key string) json.RawMessage {
		return json.RawMessage(`{"kind":"custom","key":"` + key + `","timeoutMs":1000,"data":{"customKind":"x"}}`)
	}
	h.RequestInterrupt(ctx, hosttest.Who("engine"), "resolved", host.Request{NodeID: "n", Payload: custom("a")})
	h.Resolve(ctx, hosttest.Who("alice"), "resolved", "n", json.RawMessage(`{}`), nil)
	h.RequestInterrupt(ctx, hosttest.Who("engine"), "ended", host.Request{NodeID: "n", Payload: custom("b")})
	h.EndRun(ctx, hosttest.Who("engine"), "ended", interrupt.RunCancelled, "")
	if err := l.Schedule(ctx, runlog.Due{Tenant: "acme", RunID: "never", InterruptID: "int_x", Deadline: t0.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	clock.Set(t0.Add(2 * time.Minute))
	if r, err := h.Sweep(ctx); err != nil || r.Entries != 4 || r.Expired != 0 { // 3 due entries, and the ended run's retention
		t.Errorf("%+v %v", r, err)
	}
}

// counted counts the calls the sweep makes of its store.
type counted struct {
	host.Store
	mu    sync.Mutex
	calls map[string]int
}

func (c *counted) count(op string) {
	c.mu.Lock()
	c.calls[op]++
	c.mu.Unlock()
}

func (c *counted) Due(ctx context.Context, m time.Time, after string, limit int) ([]runlog.Due, error) {
	c.count("Due")
	return c.Store.Due(ctx, m, after, limit)
}

func (c *counted) Read(ctx context.Context, k runlog.Key, after int64, limit int) ([]runlog.Commit, error) {
	c.count("Read")
	return c.Store.Read(ctx, k, after, limit)
}

func (c *counted) Tail(ctx context.Context, k runlog.Key) (*runlog.Checkpoint, []runlog.Commit, error) {
	c.count("Tail")
	return c.Store.Tail(ctx, k)
}

func (c *counted) Append(ctx context.Context, k runlog.Key, cm runlog.Commit) error {
	c.count("Append")
	return c.Store.Append(ctx, k, cm)
}

// TestSweepCostFollowsTheDue: with 10,000 interrupts due over the next hours and 100 due now,
// one sweep reads the due index's passed minutes and the 100 runs, nothing of the 10,000.
func TestSweepCostFollowsTheDue(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	c := &counted{calls: map[string]int{}}
	h, mem := hosttest.MemHostOn(t, func(l host.Store) host.Store { c.Store = l; return c }, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	for i := range 10_000 {
		if err := mem.Schedule(ctx, runlog.Due{Tenant: "acme", RunID: fmt.Sprintf("later-%d", i), InterruptID: "int", Deadline: t0.Add(time.Hour + time.Duration(i)*time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Sweep(ctx); err != nil { // the first sweep of the deployment: the look-back
		t.Fatal(err)
	}
	for i := range 100 {
		if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), fmt.Sprintf("due-%d", i), host.Request{NodeID: "n", Payload: timed("k", 1000+i*100)}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(t0.Add(time.Minute))
	c.calls = map[string]int{}
	r, err := h.Sweep(ctx)
	if err != nil || r.Expired != 100 {
		t.Fatalf("%+v %v", r, err)
	}
	if c.calls["Tail"] != 100 || c.calls["Read"] != 0 || c.calls["Append"] != 100 || c.calls["Due"] > 4 {
		t.Errorf("the sweep called %v for 100 due interrupts", c.calls)
	}
}

// TestRetentionFollowsTheEnd: once a run ends, the sweep gives every one of its commits the
// retention expiry, counted from the end; a run that has not ended keeps its commits without one.
func TestRetentionFollowsTheEnd(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	h, l := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now; s.Config.Retention = 48 * time.Hour })
	for _, run := range []string{"ended", "idle", "waiting"} {
		if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), run, host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k","data":{"customKind":"x"}}`)}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(t0.Add(time.Minute))
	h.Resolve(ctx, hosttest.Who("alice"), "ended", "n", json.RawMessage(`{}`), nil)
	h.Resolve(ctx, hosttest.Who("alice"), "idle", "n", json.RawMessage(`{}`), nil)
	clock.Set(t0.Add(2 * time.Minute))
	if _, err := h.EndRun(ctx, hosttest.Who("engine"), "ended", interrupt.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	clock.Set(t0.Add(5 * time.Minute))
	if _, err := h.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	want := t0.Add(2*time.Minute + 48*time.Hour)
	if got := l.Expires(runlog.Key{Tenant: "acme", RunID: "ended"}); len(got) != 3 || !got[0].Equal(want) || !got[2].Equal(want) {
		t.Errorf("the ended run's commits expire %v, want all %v", got, want)
	}
	for _, run := range []string{"idle", "waiting"} {
		for _, e := range l.Expires(runlog.Key{Tenant: "acme", RunID: run}) {
			if !e.IsZero() {
				t.Errorf("%s: a commit of a run that has not ended expires %v", run, e)
			}
		}
	}
}

// TestSweepBudgetResumes: more due entries in one minute than one sweep may handle are handled
// over several sweeps, none skipped and none expired twice.
func TestSweepBudgetResumes(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	h, _ := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	const n = host.MaxSweepEntries + 150
	for i := range n {
		payload := json.RawMessage(`{"kind":"custom","key":"k","timeoutMs":1000,"data":{"customKind":"x"}}`)
		if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), fmt.Sprintf("r%d", i), host.Request{NodeID: "n", Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(t0.Add(5 * time.Minute))
	total := 0
	for sweeps := 1; ; sweeps++ {
		r, err := h.Sweep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total += r.Expired
		if r.Entries < host.MaxSweepEntries {
			break
		}
		if sweeps > 3 {
			t.Fatalf("still sweeping after %d sweeps", sweeps)
		}
	}
	if total != n {
		t.Errorf("%d expired, want %d", total, n)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		if got := len(hosttest.ExpiredEvents(t, h, fmt.Sprintf("r%d", i))); got != 1 {
			t.Errorf("r%d: %d interrupt.expired", i, got)
		}
	}
}

// TestOneTenantDelaysNoOther: with more of one tenant's interrupts due in the same seconds than
// a sweep may handle, another tenant's interrupt due just after them is expired by the first
// sweep; the next one handles only what is left, and says when it has caught up; once they are
// older than SweepGrace the cursor passes them, inside a minute that has not closed.
func TestOneTenantDelaysNoOther(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	h, l := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	flood := interrupt.Principal{Subject: "engine", Tenant: "flood"}
	const n = host.MaxSweepEntries + 20
	for i := range n {
		payload := json.RawMessage(fmt.Sprintf(`{"kind":"custom","key":"k","timeoutMs":%d,"data":{"customKind":"x"}}`, 1000+i))
		if _, _, err := h.RequestInterrupt(ctx, flood, fmt.Sprintf("f%d", i), host.Request{NodeID: "n", Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	quiet := interrupt.Principal{Subject: "engine", Tenant: "quiet"}
	if _, _, err := h.RequestInterrupt(ctx, quiet, "q", host.Request{NodeID: "n", Payload: json.RawMessage(`{"kind":"custom","key":"k","timeoutMs":3500,"data":{"customKind":"x"}}`)}); err != nil {
		t.Fatal(err)
	}
	expired := func(p interrupt.Principal, run string) int {
		return hosttest.CountEvents(t, h, p, run, interrupt.EventExpired)
	}

	clock.Set(t0.Add(5 * time.Second))
	r, err := h.Sweep(ctx)
	if err != nil || r.Entries != host.MaxSweepEntries || r.Deferred != n+1-host.MaxSweepEntries || r.Tenants != 2 || r.CaughtUp {
		t.Fatalf("the first sweep: %+v %v", r, err)
	}
	if got := expired(quiet, "q"); got != 1 {
		t.Fatalf("the quiet tenant's interrupt: %d interrupt.expired after the first sweep", got)
	}
	clock.Set(t0.Add(6 * time.Second))
	if r, err := h.Sweep(ctx); err != nil || r.Entries != n+1-host.MaxSweepEntries || r.Deferred != 0 || !r.CaughtUp {
		t.Fatalf("the second sweep handles only what the first left: %+v %v", r, err)
	}
	for i := range n {
		if got := expired(flood, fmt.Sprintf("f%d", i)); got != 1 {
			t.Fatalf("f%d: %d interrupt.expired", i, got)
		}
	}
	clock.Set(t0.Add(40 * time.Second))
	if r, err := h.Sweep(ctx); err != nil || r.Entries != 0 || !r.CaughtUp {
		t.Errorf("a sweep after both: %+v %v", r, err)
	}
	if c, _ := l.SweepCursor(ctx); !c.Minute.Equal(t0) || c.After == "" || len(c.Done) != 0 {
		t.Errorf("inside the open minute the cursor is %+v, want past every entry due before the grace", c)
	}
}

// heldPut holds the first commit's put until released, as a store under throttling and lost
// answers holds a request's commit for seconds: the request has filed its due entries, and its
// commit lands later. reached is closed once the put is held.
type heldPut struct {
	host.Store
	once             sync.Once
	reached, release chan struct{}
}

func newHeldPut(l host.Store) *heldPut {
	return &heldPut{Store: l, reached: make(chan struct{}), release: make(chan struct{})}
}

func (p *heldPut) Append(ctx context.Context, k runlog.Key, c runlog.Commit) error {
	first := false
	p.once.Do(func() { first = true })
	if first {
		close(p.reached)
		<-p.release
	}
	return p.Store.Append(ctx, k, c)
}

// TestALateCommitLosesNoDeadline: a request files its due entry, and its commit lands only after
// a sweep past the deadline has read that entry and found no interrupt in the log. The entry
// stays until the log can no longer gain it (host.SweepGrace past its deadline), so a later
// sweep expires the interrupt: exactly once. (Before, the sweep took the missing interrupt for
// "never committed", and the deadline was lost: TestChaos's failure.)
func TestALateCommitLosesNoDeadline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 5, 0, time.UTC)
	clock := testclock.New(t0)
	var held *heldPut
	h, _ := hosttest.MemHostOn(t, func(l host.Store) host.Store { held = newHeldPut(l); return held },
		func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	requested := make(chan error, 1)
	go func() {
		_, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "late", host.Request{NodeID: "gate", Payload: timed("k", 1500)})
		requested <- err
	}()
	<-held.reached
	clock.Set(t0.Add(2 * time.Second))
	r, err := h.Sweep(ctx)
	if err != nil || r.Expired != 0 || r.Kept != 1 {
		t.Fatalf("a sweep while the commit is held: %+v %v, want the entry kept", r, err)
	}
	close(held.release)
	if err := <-requested; err != nil {
		t.Fatalf("the held request: %v", err)
	}
	clock.Set(t0.Add(3 * time.Second))
	if r, err := h.Sweep(ctx); err != nil || r.Expired != 1 {
		t.Errorf("the sweep after the commit landed: %+v %v", r, err)
	}
	clock.Set(t0.Add(5 * time.Minute))
	if r, err := h.Sweep(ctx); err != nil || r.Expired != 0 || !r.CaughtUp {
		t.Errorf("minutes later: %+v %v", r, err)
	}
	if n := len(hosttest.ExpiredEvents(t, h, "late")); n != 1 {
		t.Errorf("%d interrupt.expired, want 1", n)
	}
}

// lateLost loses each put before applying it, as a store whose answers are lost, while the
// clock runs past the commit's horizon; it counts the puts sent.
type lateLost struct {
	host.Store
	clock *testclock.Clock
	mu    sync.Mutex
	puts  int
}

func (l *lateLost) Append(context.Context, runlog.Key, runlog.Commit) error {
	l.mu.Lock()
	l.puts++
	l.mu.Unlock()
	l.clock.Advance(host.CommitHorizon)
	return runlog.ErrUnknownOutcome
}

// TestNoCommitLandsPastItsHorizon: a commit is not put again once CommitHorizon has passed since
// its time (the answer is outcome_unknown, as a put of it was sent), so the sweep keeps its due
// entry only until SweepGrace past the deadline, then passes it over as never committed.
func TestNoCommitLandsPastItsHorizon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 5, 0, time.UTC)
	clock := testclock.New(t0)
	var lost *lateLost
	h, _ := hosttest.MemHostOn(t, func(l host.Store) host.Store { lost = &lateLost{Store: l, clock: clock}; return lost },
		func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	_, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "lost", host.Request{NodeID: "gate", Payload: timed("k", 1500)})
	if !errors.Is(err, interrupt.ErrOutcomeUnknown) || lost.puts != 1 {
		t.Fatalf("a request whose put was lost past its horizon: %v after %d puts, want outcome_unknown after 1", err, lost.puts)
	}
	clock.Set(t0.Add(1500*time.Millisecond + host.SweepGrace - time.Millisecond))
	if r, err := h.Sweep(ctx); err != nil || r.Kept != 1 || r.Entries != 0 {
		t.Errorf("within SweepGrace of the deadline: %+v %v, want the entry kept", r, err)
	}
	clock.Advance(time.Millisecond)
	if r, err := h.Sweep(ctx); err != nil || r.Kept != 0 || r.Entries != 1 || r.Expired != 0 {
		t.Errorf("SweepGrace past the deadline: %+v %v, want the entry passed over", r, err)
	}
}
