package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// customDue is a custom interrupt of key that expires after timeoutMs (0: none).
func customDue(key string, timeoutMs int) json.RawMessage {
	if timeoutMs == 0 {
		return custom(key)
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
// tenant's; a run leaves the index with its last resolve, its end or the sweep's expiry, and
// an interrupt past its deadline is not listed before that; an entry filed for a commit not
// written is kept while its request may still commit, and removed by the read after that.
func TestPendingInterrupts(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	h, l := memHost(t, func(c *host.Config) { c.Now = clock.Now })
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
			return err
		}, []string{"r1/n1", "r2/n1", "r3/n2"}, []string{"r1", "r2", "r3"}},
		{"the last resolved", func() error {
			_, err := h.Resolve(ctx, alice, "r1", "n1", json.RawMessage(`{}`), nil)
			return err
		}, []string{"r2/n1", "r3/n2"}, []string{"r2", "r3"}},
		{"past its deadline: not listed, indexed until the sweep records it", func() error {
			clock.Set(t0.Add(2 * time.Minute))
			return nil
		}, []string{"r3/n2"}, []string{"r2", "r3"}},
		{"expired by the sweep", func() error {
			_, err := h.Sweep(ctx)
			return err
		}, []string{"r3/n2"}, []string{"r3"}},
		{"a request of an idle run", func() error {
			_, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "n1", Payload: custom("again")})
			return err
		}, []string{"r1/n1", "r3/n2"}, []string{"r1", "r3"}},
		{"ended", func() error {
			_, err := h.EndRun(ctx, alice, "r3", interrupt.RunCancelled, "")
			return err
		}, []string{"r1/n1"}, []string{"r1"}},
		{"an entry filed for a commit not written yet is kept: its request may be about to", func() error {
			return l.FileWaiting(ctx, runlog.Waiting{Key: runlog.Key{Tenant: alice.Tenant, RunID: "r0"}, Seq: 1, At: clock.Now()})
		}, []string{"r1/n1"}, []string{"r0", "r1"}},
		{"once it is older than a request may take, it is removed", func() error {
			clock.Set(t0.Add(2*time.Minute + host.SweepGrace + time.Millisecond))
			return nil
		}, []string{"r1/n1"}, []string{"r1"}},
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

// TestPendingPages: a page holds about limit interrupts and never splits a run; the pages
// together list each pending interrupt once, in run order.
func TestPendingPages(t *testing.T) {
	ctx := context.Background()
	h, _ := memHost(t)
	var want []string
	for i := range 30 {
		run := fmt.Sprintf("r%02d", i)
		for n := range 1 + i%3 {
			node := fmt.Sprintf("n%d", n)
			if _, _, err := h.RequestInterrupt(ctx, alice, run, host.Request{NodeID: node, Payload: custom(node)}); err != nil {
				t.Fatal(err)
			}
			want = append(want, run+"/"+node)
		}
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

// TestTheIndexHoldsUnderRaces: requests and resolves of one run race, over and over, each
// round from an idle run; whatever order their commits take, the run is indexed exactly while
// it waits.
func TestTheIndexHoldsUnderRaces(t *testing.T) {
	ctx := context.Background()
	h, l := memHost(t)
	for round := range 50 {
		key := func(i int) string { return fmt.Sprintf("k%d-%d", round, i) }
		if _, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "a", Payload: custom(key(0))}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { _, errs[0] = h.Resolve(ctx, alice, "r1", "a", json.RawMessage(`{}`), nil) })
		wg.Go(func() {
			_, _, errs[1] = h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "b", Payload: custom(key(1))})
		})
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := indexed(t, l, alice.Tenant); !slices.Equal(got, []string{"r1"}) {
			t.Fatalf("round %d: b pending, indexed %v", round, got)
		}
		if _, err := h.Resolve(ctx, alice, "r1", "b", json.RawMessage(`{}`), nil); err != nil {
			t.Fatal(err)
		}
		if got := indexed(t, l, alice.Tenant); len(got) != 0 {
			t.Fatalf("round %d: nothing pending, indexed %v", round, got)
		}
	}
}

// pausing holds the first removal from the waiting index it is asked for until released, so a
// test can run a request in between, as a slow writer would see it.
type pausing struct {
	host.Store
	once             sync.Once
	reached, release chan struct{}
}

func newPausing(s host.Store) *pausing {
	return &pausing{Store: s, reached: make(chan struct{}), release: make(chan struct{})}
}

func (p *pausing) UnfileWaiting(ctx context.Context, w runlog.Waiting) error {
	p.once.Do(func() {
		close(p.reached)
		<-p.release
	})
	return p.Store.UnfileWaiting(ctx, w)
}

// TestARemovalKeepsARacingRequestsEntry: a removal that lands after a request made the run
// wait again keeps that request's entry, on both stores: the removal after the last resolve
// (the request read the run idle, filed for the next commit and committed), and the list's
// removal of an entry it found stale (the request, of a new run of the id, filed over it).
func TestARemovalKeepsARacingRequestsEntry(t *testing.T) {
	ctx := context.Background()
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for name, open := range logs {
		t.Run(name, func(t *testing.T) {
			t.Run("the last resolve's", func(t *testing.T) {
				clock := testclock.New(t0)
				p := newPausing(open(t))
				h := host.New(host.StoresOf(p), sch, host.Config{Now: clock.Now})
				if _, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "a", Payload: custom("a")}); err != nil {
					t.Fatal(err)
				}
				resolved := make(chan error, 1)
				go func() { _, err := h.Resolve(ctx, alice, "r1", "a", json.RawMessage(`{}`), nil); resolved <- err }()
				<-p.reached // committed; its removal not sent yet
				if _, _, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "b", Payload: custom("b")}); err != nil {
					t.Fatal(err)
				}
				close(p.release)
				if err := <-resolved; err != nil {
					t.Fatal(err)
				}
				if got, _ := pendingAt(t, h, alice, 0); !slices.Equal(got, []string{"r1/b"}) {
					t.Errorf("pending %v, want r1/b", got)
				}
				if got := indexed(t, p, alice.Tenant); !slices.Equal(got, []string{"r1"}) {
					t.Errorf("indexed %v, want r1", got)
				}
			})
			t.Run("the list's", func(t *testing.T) {
				clock := testclock.New(t0)
				p := newPausing(open(t))
				h := host.New(host.StoresOf(p), sch, host.Config{Now: clock.Now})
				gone := runlog.Waiting{Key: runlog.Key{Tenant: alice.Tenant, RunID: "r2"}, Seq: 7, At: t0.Add(-time.Hour), Origin: "expired-run"}
				if err := p.FileWaiting(ctx, gone); err != nil {
					t.Fatal(err)
				}
				listed := make(chan error, 1)
				go func() { _, err := h.PendingInterrupts(ctx, alice, "", 0); listed <- err }()
				<-p.reached // the list found the entry stale for good
				if _, _, err := h.RequestInterrupt(ctx, alice, "r2", host.Request{NodeID: "a", Payload: custom("a")}); err != nil {
					t.Fatal(err)
				}
				close(p.release)
				if err := <-listed; err != nil {
					t.Fatal(err)
				}
				if got := indexed(t, p, alice.Tenant); !slices.Equal(got, []string{"r2"}) {
					t.Errorf("indexed %v, want r2", got)
				}
				if got, _ := pendingAt(t, h, alice, 0); !slices.Equal(got, []string{"r2/a"}) {
					t.Errorf("pending %v, want r2/a", got)
				}
			})
		})
	}
}
