package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// deadlinesContract: every store files due entries by minute in deadline order, pages them,
// and moves the sweep's cursor only from where it is.
func deadlinesContract(t *testing.T, open func(t *testing.T) host.Store) {
	ctx := context.Background()
	m := time.Date(2026, 11, 30, 9, 5, 0, 0, time.UTC)
	due := func(run string, at time.Duration) runlog.Due {
		return runlog.Due{Tenant: "acme", RunID: run, InterruptID: "int_" + run, Deadline: m.Add(at)}
	}
	l := open(t)
	for _, d := range []runlog.Due{due("c", 50*time.Second), due("a", 10*time.Second), due("b", 30*time.Second), due("b", 30*time.Second), due("next", time.Minute+time.Second)} {
		if err := l.Schedule(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Due(ctx, m.Add(20*time.Second), "", 10)
	if err != nil || len(got) != 3 || got[0].RunID != "a" || got[1].RunID != "b" || got[2].RunID != "c" || !got[0].Deadline.Equal(m.Add(10*time.Second)) {
		t.Fatalf("the minute: %+v %v", got, err)
	}
	if page, _ := l.Due(ctx, m, got[0].Position(), 1); len(page) != 1 || page[0].RunID != "b" {
		t.Errorf("a page after a: %+v", page)
	}
	if next, _ := l.Due(ctx, m.Add(time.Minute), "", 10); len(next) != 1 || next[0].RunID != "next" {
		t.Errorf("the next minute: %+v", next)
	}
	c, err := l.SweepCursor(ctx)
	if err != nil || !c.Equal(runlog.SweepCursor{}) {
		t.Fatalf("a cursor before any sweep: %+v %v", c, err)
	}
	to := runlog.SweepCursor{Minute: m, After: got[0].Position(), Done: []string{got[2].Position()}}
	if err := l.MoveSweep(ctx, c, to); err != nil {
		t.Fatal(err)
	}
	if err := l.MoveSweep(ctx, c, runlog.SweepCursor{Minute: m.Add(time.Hour)}); !errors.Is(err, runlog.ErrSeqTaken) {
		t.Errorf("a move from where the cursor no longer is: %v", err)
	}
	moved, err := l.SweepCursor(ctx)
	if err != nil || !moved.Minute.Equal(m) || moved.After != to.After || moved.Version != 1 || !slices.Equal(moved.Done, to.Done) {
		t.Errorf("the cursor moved to %+v %v", moved, err)
	}
}
