package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// waitingContract: every store files a run's entry over one filed for the same or an
// earlier commit of the run, or for another run of its id, only; removes it only when it was
// filed for an earlier commit of the run, or is the very entry named (its commit and time); lists
// a tenant's entries in run id order after a run id; and keeps tenants apart.
func waitingContract(t *testing.T, open func(t *testing.T) host.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 123456000, time.UTC)
	tally := interrupt.Tally{Approvals: 1, Required: 2}
	entry := func(tenant, id string, seq int64) runlog.Waiting {
		return runlog.Waiting{Key: runlog.Key{Tenant: tenant, RunID: id}, Seq: seq, At: t0.Add(time.Duration(seq) * time.Second), Origin: "first-run",
			Pending: []runlog.Summary{
				{NodeID: "approve", InterruptID: "int_1", Key: "k1", Kind: interrupt.KindApproval, Title: "Invoice ✓", Seq: 1, RequestedAt: t0, Deadline: t0.Add(time.Hour), Tally: &tally},
				{NodeID: "ask", InterruptID: "int_2", Key: "k2", Kind: interrupt.KindClarification, Seq: seq, RequestedAt: t0.Add(time.Second)},
			}}
	}
	l := open(t)
	for _, w := range []runlog.Waiting{
		entry("acme", "r2", 5), entry("acme", "r1", 1), entry("acme", "r3", 9),
		entry("acme", "r2", 3), // a record read late does not move it back
		entry("acme", "r1", 4), entry("evilcorp", "r1", 2),
	} {
		if _, _, err := l.FileWaiting(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	list := func(after string, limit int) []runlog.Waiting {
		t.Helper()
		got, err := l.WaitingRuns(ctx, "acme", after, limit)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// A write that takes answers the entry it replaced, atomically; one that does not, nothing.
	if prior, filed, err := l.FileWaiting(ctx, entry("acme", "r1", 4)); err != nil || !filed || !reflect.DeepEqual(prior, entry("acme", "r1", 4)) {
		t.Errorf("filing r1 as of 4 again: %+v %v %v, want it filed over the same entry", prior, filed, err)
	}
	if prior, filed, err := l.FileWaiting(ctx, entry("acme", "r2", 4)); err != nil || filed || prior.Seq != 0 {
		t.Errorf("filing r2 as of 4 under its entry of 5: %+v %v %v, want it not filed", prior, filed, err)
	}
	if prior, filed, err := l.FileWaiting(ctx, entry("acme", "r5", 1)); err != nil || !filed || prior.Seq != 0 || prior.Origin != "" {
		t.Errorf("filing r5 first: %+v %v %v, want it filed over nothing", prior, filed, err)
	}
	if prior, removed, err := l.UnfileWaiting(ctx, entry("acme", "r5", 2)); err != nil || !removed || !reflect.DeepEqual(prior, entry("acme", "r5", 1)) {
		t.Errorf("removing r5: %+v %v %v, want its entry of 1 removed", prior, removed, err)
	}
	if prior, removed, err := l.UnfileWaiting(ctx, entry("acme", "r5", 3)); err != nil || removed || prior.Seq != 0 {
		t.Errorf("removing r5 again: %+v %v %v, want nothing removed", prior, removed, err)
	}
	want := []runlog.Waiting{entry("acme", "r1", 4), entry("acme", "r2", 5), entry("acme", "r3", 9)}
	if got := list("", 10); !reflect.DeepEqual(got, want) {
		t.Fatalf("the index: %+v, want %+v", got, want)
	}
	if got := list("r1", 1); !reflect.DeepEqual(got, want[1:2]) {
		t.Errorf("a page after r1: %+v", got)
	}
	for _, w := range []runlog.Waiting{
		entry("acme", "r1", 5),   // as of a commit after r1's entry
		entry("acme", "r2", 5),   // as of r2's entry's own commit
		entry("acme", "r3", 8),   // as of a commit before r3's entry: kept
		entry("acme", "gone", 4), // no entry
	} {
		if _, _, err := l.UnfileWaiting(ctx, w); err != nil {
			t.Errorf("removing %+v: %v", w, err)
		}
	}
	if got := list("", 10); !reflect.DeepEqual(got, want[2:]) {
		t.Errorf("after the removals: %+v, want %+v", got, want[2:])
	}
	if got, err := l.WaitingRuns(ctx, "evilcorp", "", 10); err != nil || !reflect.DeepEqual(got, []runlog.Waiting{entry("evilcorp", "r1", 2)}) {
		t.Errorf("the other tenant's index: %+v %v", got, err)
	}
	if _, _, err := l.FileWaiting(ctx, entry("acme", "a#b", 1)); !errors.Is(err, runlog.ErrInvalidKey) {
		t.Errorf("a run id that is no key: %v", err)
	}
	// A run id reused after its run expired is another run: its entry replaces the old
	// run's whatever their seqs, its removal takes the old run's (dead) entry, and its
	// own entry goes only as of its own later commits.
	reused := entry("acme", "r3", 3)
	reused.Origin = "second-run"
	if _, _, err := l.FileWaiting(ctx, reused); err != nil {
		t.Fatal(err)
	}
	earlier := reused
	earlier.Seq = 2
	if _, _, err := l.UnfileWaiting(ctx, earlier); err != nil {
		t.Fatal(err)
	}
	if got := list("", 10); !reflect.DeepEqual(got, []runlog.Waiting{reused}) {
		t.Errorf("after a reused id's request and a removal as of its earlier commit: %+v, want %+v", got, reused)
	}
	if _, _, err := l.FileWaiting(ctx, entry("acme", "r4", 9)); err != nil {
		t.Fatal(err)
	}
	again := entry("acme", "r4", 1)
	again.Origin = "second-run"
	if _, _, err := l.UnfileWaiting(ctx, again); err != nil {
		t.Fatal(err)
	}
	if got := list("", 10); !reflect.DeepEqual(got, []runlog.Waiting{reused}) {
		t.Errorf("after a reused id's removal of the old run's entry: %+v, want %+v", got, reused)
	}
	// Newer: whether the log holds a commit after a seq.
	k := runlog.Key{Tenant: "acme", RunID: "newer"}
	for seq := int64(1); seq <= 3; seq++ {
		if err := l.Append(ctx, k, commitOf(seq, `{"kind":"custom","key":"k","data":{"customKind":"x"}}`)); err != nil {
			t.Fatal(err)
		}
	}
	// An expired commit counts: the entry's run is gone, or its id taken again.
	if _, err := l.Retain(ctx, k, time.Now().Add(-time.Second), 1000); err != nil {
		t.Fatal(err)
	}
	for seq, want := range map[int64]bool{0: true, 2: true, 3: false, 9: false} {
		if got, err := l.Newer(ctx, k, seq); err != nil || got != want {
			t.Errorf("Newer(%d): %v %v, want %v", seq, got, err, want)
		}
	}
	if got, err := l.Newer(ctx, runlog.Key{Tenant: "acme", RunID: "none"}, 0); err != nil || got {
		t.Errorf("Newer of no run: %v %v", got, err)
	}
}
