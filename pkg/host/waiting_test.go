package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// customDue is a custom interrupt of key that expires after timeoutMs (0: none).
func customDue(key string, timeoutMs int) json.RawMessage {
	if timeoutMs == 0 {
		return hosttest.Custom(key)
	}
	return json.RawMessage(fmt.Sprintf(`{"kind":"custom","key":%q,"timeoutMs":%d,"data":{"customKind":"x"}}`, key, timeoutMs))
}

// pendingAt lists every page of p's tenant's pending interrupts, as "run/node" in page order.
func pendingAt(t *testing.T, h *host.Host, p interrupt.Principal, limit int) (got []string, pages int) {
	t.Helper()
	after := ""
	for {
		page, err := h.PendingInterrupts(context.Background(), p, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, in := range page.Interrupts {
			got = append(got, in.RunID+"/"+in.NodeID)
		}
		if page.Next == "" {
			return got, pages
		}
		after = page.Next
	}
}

// indexed is the tenant's waiting index as the store holds it: the run ids.
func indexed(t *testing.T, l host.Waiting, tenant string) []string {
	t.Helper()
	runs, err := l.WaitingRuns(context.Background(), tenant, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range runs {
		ids = append(ids, w.Key.RunID)
	}
	return ids
}

// TestPendingInterrupts: a tenant's list holds the interrupts its runs wait on and no other
// tenant's; the consumer takes a run out of the index after its last resolve, its end or the
// sweep's expiry, and an interrupt past its deadline is not listed before that. Where the
// consumer has yet to take a commit, the list answers from the run's log and repairs the entry.
func TestPendingInterrupts(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	h, l := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	evil := interrupt.Principal{Subject: "mallory", Tenant: "evilcorp"}
	for _, r := range []struct {
		p              interrupt.Principal
		run, node, key string
		timeoutMs      int
	}{
		{alice, "r1", "n1", "a", 0}, {alice, "r2", "n1", "a", 60_000}, {alice, "r3", "n1", "a", 0},
		{alice, "r3", "n2", "b", 0}, {evil, "r1", "x", "a", 0},
	} {
		if _, _, err := h.RequestInterrupt(ctx, r.p, r.run, host.Request{NodeID: r.node, Payload: customDue(r.key, r.timeoutMs)}); err != nil {
			t.Fatal(err)
		}
		hosttest.Reindex(t, h, r.p, r.run)
	}
	steps := []struct {
		name        string
		do          func() error
		want, index []string
	}{
		{"requested", func() error { return nil },
			[]string{"r1/n1", "r2/n1", "r3/n1", "r3/n2"}, []string{"r1", "r2", "r3"}},
		{"one of two resolved: the run still waits", func() error {
			_, err := h.Resolve(ctx, alice, "r3", "n1", json.RawMessage(`{}`), nil)
			hosttest.Reindex(t, h, alice, "r3")
			return err
		}, []string{"r1/n1", "r2/n1", "r3/n2"}, []string{"r1", "r2", "r3"}},
		{"the last resolved", func() error {
			_, err := h.Resolve(ctx, alice, "r1", "n1", json.RawMessage(`{}`), nil)
			hosttest.Reindex(t, h, alice, "r1")
			return err
		}, []string{"r2/n1", "r3/n2"}, []string{"r2", "r3"}},
		{"past its deadline: not listed, indexed until the sweep records it", func() error {
			clock.Set(t0.Add(2 * time.Minute))
			return nil
		}, []string{"r3/n2"}, []string{"r2", "r3"}},
		{"expired by the sweep", func() error {
			_, err := h.Sweep(ctx)
			hosttest.Reindex(t, h, alice, "r2")
			return err
		}, []string{"r3/n2"}, []string{"r3"}},
		{"a request of an idle run", func() error {
			_, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "n1", Payload: hosttest.Custom("again")})
			hosttest.Reindex(t, h, alice, "r1")
			return err
		}, []string{"r1/n1", "r3/n2"}, []string{"r1", "r3"}},
		{"ended, the consumer not there yet: the list reads the log and repairs the entry", func() error {
			_, err := h.EndRun(ctx, alice, "r3", interrupt.RunCancelled, "")
			return err
		}, []string{"r1/n1"}, []string{"r1"}},
		{"a request the consumer has yet to take is not listed until it does", func() error {
			_, _, err := h.RequestInterrupt(ctx, alice, "r0", host.Request{NodeID: "n1", Payload: hosttest.Custom("new")})
			return err
		}, []string{"r1/n1"}, []string{"r1"}},
		{"taken", func() error { hosttest.Reindex(t, h, alice, "r0"); return nil }, []string{"r0/n1", "r1/n1"}, []string{"r0", "r1"}},
		{"taken twice, and a record read late: nothing moves", func() error {
			hosttest.Reindex(t, h, alice, "r0", "r1", "r0")
			return nil
		}, []string{"r0/n1", "r1/n1"}, []string{"r0", "r1"}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got, _ := pendingAt(t, h, alice, 0); !slices.Equal(got, s.want) {
			t.Errorf("%s: pending %v, want %v", s.name, got, s.want)
		}
		if got := indexed(t, l, alice.Tenant); !slices.Equal(got, s.index) {
			t.Errorf("%s: indexed %v, want %v", s.name, got, s.index)
		}
	}
	if got, _ := pendingAt(t, h, evil, 0); !slices.Equal(got, []string{"r1/x"}) {
		t.Errorf("the other tenant's: %v", got)
	}
}

// TestPendingSummaries: an entry answers what a list needs without the payload: title, times
// and an approval's tally as the votes come in, kept up by the consumer and, past it, the list.
func TestPendingSummaries(t *testing.T) {
	ctx := context.Background()
	h, _ := hosttest.MemHost(t)
	approval := json.RawMessage(`{"kind":"approval","key":"q","timeoutMs":3600000,"data":{"artifactId":"inv-7","artifactType":"invoice","title":"Pay invoice inv-7","actions":["accept","reject"],"approversList":["bob","carol"],"requiredApprovals":2}}`)
	if _, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "approve", Payload: approval}); err != nil {
		t.Fatal(err)
	}
	hosttest.Reindex(t, h, alice, "r1")
	check := func(approvals int) {
		t.Helper()
		page, err := h.PendingInterrupts(ctx, alice, "", 0)
		if err != nil || len(page.Interrupts) != 1 {
			t.Fatalf("page %+v %v", page, err)
		}
		in := page.Interrupts[0]
		if in.Title != "Pay invoice inv-7" || in.Kind != interrupt.KindApproval || in.ExpiresAt != "2026-11-30T10:00:00.000Z" || in.RequestedAt != "2026-11-30T09:00:00.000Z" ||
			in.Tally == nil || *in.Tally != (interrupt.Tally{Approvals: approvals, Required: 2}) {
			t.Errorf("listed %+v (tally %+v), want %d approvals", in, in.Tally, approvals)
		}
	}
	check(0)
	bob := interrupt.Principal{Subject: "bob", Tenant: alice.Tenant, Scopes: alice.Scopes}
	if _, err := h.Resolve(ctx, bob, "r1", "approve", json.RawMessage(`{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`), nil); err != nil {
		t.Fatal(err)
	}
	check(1) // the list, past the consumer
	hosttest.Reindex(t, h, alice, "r1")
	check(1)
}

// TestPendingPages: a page holds about limit interrupts and never splits a run; the pages
// together list each pending interrupt once, in run order.
func TestPendingPages(t *testing.T) {
	ctx := context.Background()
	h, _ := hosttest.MemHost(t)
	var want []string
	for i := range 30 {
		run := fmt.Sprintf("r%02d", i)
		for n := range 1 + i%3 {
			node := fmt.Sprintf("n%d", n)
			if _, _, err := h.RequestInterrupt(ctx, alice, run, host.Request{NodeID: node, Payload: hosttest.Custom(node)}); err != nil {
				t.Fatal(err)
			}
			want = append(want, run+"/"+node)
		}
		hosttest.Reindex(t, h, alice, run)
	}
	for _, limit := range []int{1, 2, 5, 59, 60, 500} {
		got, pages := pendingAt(t, h, alice, limit)
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: %v, want %v", limit, got, want)
		}
		if most := len(want)/limit + 1; pages > most {
			t.Errorf("limit %d: %d pages, want at most %d", limit, pages, most)
		}
	}
}

// TestReindexRacesCommits: the consumer's reads race the run's commits, over and over; an
// entry written from an older read never replaces a newer one, and once the consumer has taken
// the last commit the run is indexed exactly while it waits.
func TestReindexRacesCommits(t *testing.T) {
	ctx := context.Background()
	h, l := hosttest.MemHost(t)
	k := runlog.Key{Tenant: alice.Tenant, RunID: "r1"}
	for round := range 50 {
		key := func(i int) string { return fmt.Sprintf("k%d-%d", round, i) }
		var wg sync.WaitGroup
		errs := make([]error, 4)
		wg.Go(func() {
			_, _, errs[0] = h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "a", Payload: hosttest.Custom(key(0))})
			if errs[0] == nil {
				_, errs[1] = h.Resolve(ctx, alice, "r1", "a", json.RawMessage(`{}`), nil)
			}
		})
		wg.Go(func() { errs[2] = h.Reindex(ctx, k) })
		wg.Go(func() { errs[3] = h.Reindex(ctx, k) })
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		hosttest.Reindex(t, h, alice, "r1")
		if got := indexed(t, l, alice.Tenant); len(got) != 0 {
			t.Fatalf("round %d: nothing pending, indexed %v", round, got)
		}
		if _, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "b", Payload: hosttest.Custom(key(1))}); err != nil {
			t.Fatal(err)
		}
		hosttest.Reindex(t, h, alice, "r1")
		if got := indexed(t, l, alice.Tenant); !slices.Equal(got, []string{"r1"}) {
			t.Fatalf("round %d: b pending, indexed %v", round, got)
		}
		if _, err := h.Resolve(ctx, alice, "r1", "b", json.RawMessage(`{}`), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAPageCostsAPage runs the scenario on the in-memory store; pkg/dynamo runs it on a table,
// and counts the read units a page consumes.
func TestAPageCostsAPage(t *testing.T) {
	t.Parallel()
	hosttest.APageCostsAPage(t, inmem.New(), nil)
}

// TestAnEntryOfAnEarlierReleaseIsRead: an entry filed by the commit path of a release before
// read models holds no summaries; the list reads its run's log once, and rewrites it.
func TestAnEntryOfAnEarlierReleaseIsRead(t *testing.T) {
	ctx := context.Background()
	h, l := hosttest.MemHost(t)
	if _, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "n1", Payload: hosttest.Custom("a")}); err != nil {
		t.Fatal(err)
	}
	snap, err := h.Snapshot(ctx, alice, "r1")
	if err != nil {
		t.Fatal(err)
	}
	old := runlog.Waiting{Key: runlog.Key{Tenant: alice.Tenant, RunID: "r1"}, Seq: snap.LastSeq, Origin: "unknown"}
	if _, _, err := l.FileWaiting(ctx, old); err != nil {
		t.Fatal(err)
	}
	if got, _ := pendingAt(t, h, alice, 0); !slices.Equal(got, []string{"r1/n1"}) {
		t.Errorf("pending %v, want r1/n1", got)
	}
	runs, err := l.WaitingRuns(ctx, alice.Tenant, "", 10)
	if err != nil || len(runs) != 1 || len(runs[0].Pending) != 1 {
		t.Errorf("the entry after the list: %+v %v", runs, err)
	}
}

// TestReindexFromTheBatch: given a run's whole log from its first commit (a stream batch that
// carried the run from its start), the consumer folds it and reads nothing: a run that waits is
// filed, one that waits on nothing any more is left alone (no batch filed it); given part of a
// log, it reads the run.
func TestReindexFromTheBatch(t *testing.T) {
	ctx := context.Background()
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	r := &hosttest.Reading{Store: inmem.New()}
	h := host.New(host.Env{Stores: host.StoresOf(r), Schemas: sch}, host.Config{})
	k := func(run string) runlog.Key { return runlog.Key{Tenant: alice.Tenant, RunID: run} }
	commits := func(run string) []runlog.Commit {
		t.Helper()
		c, err := r.Read(ctx, k(run), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, run := range []string{"waits", "settled"} {
		if _, _, err := h.RequestInterrupt(ctx, alice, run, host.Request{NodeID: "n", Payload: hosttest.Custom("a")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Resolve(ctx, alice, "settled", "n", json.RawMessage(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	r.Logs = 0
	for _, run := range []string{"waits", "settled"} {
		if err := h.Reindex(ctx, k(run), commits(run)...); err != nil {
			t.Fatal(err)
		}
	}
	if r.Logs != 0 {
		t.Errorf("reindexing whole logs read %d", r.Logs)
	}
	if got := indexed(t, r, alice.Tenant); !slices.Equal(got, []string{"waits"}) {
		t.Errorf("indexed %v, want waits", got)
	}
	if _, err := h.Resolve(ctx, alice, "waits", "n", json.RawMessage(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	r.Logs = 0
	if err := h.Reindex(ctx, k("waits"), commits("waits")[1:]...); err != nil {
		t.Fatal(err)
	}
	if got := indexed(t, r, alice.Tenant); len(got) != 0 || r.Logs != 1 {
		t.Errorf("after the resolve, from part of the log: indexed %v, %d logs read", got, r.Logs)
	}
}

// TestReadModelsAtABoundedCost runs the probe's case on the in-memory store; pkg/dynamo runs it
// on a table.
func TestReadModelsAtABoundedCost(t *testing.T) {
	t.Parallel()
	hosttest.ReadModelsAtABoundedCost(t, inmem.New())
}
