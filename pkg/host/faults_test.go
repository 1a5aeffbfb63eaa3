package host_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// faultyLog steers the in-memory log's appends and reads as a store under faults would answer
// them: an append applied with its answer lost, an append lost before it was applied, reads
// failing. Each fault is used up once it has happened.
type faultyLog struct {
	host.Store
	mu   sync.Mutex
	left faultCounts
}

// faultCounts are the faults a faultyLog has left to inject.
type faultCounts struct {
	// appliedThenLost appends this many commits and answers each ErrUnknownOutcome.
	appliedThenLost int
	// appliedThenTaken appends this many commits and answers each ErrSeqTaken, as the SDK's
	// retry of a put whose answer was lost finds its own commit.
	appliedThenTaken int
	// lostBefore answers this many appends ErrUnknownOutcome without applying them.
	lostBefore int
	// failReads fails this many reads (after the first commit) as unavailable.
	failReads int
}

func (f *faultyLog) set(c faultCounts) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.left = c
}

func (f *faultyLog) take(n *int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if *n == 0 {
		return false
	}
	*n--
	return true
}

func (f *faultyLog) Append(ctx context.Context, k runlog.Key, c runlog.Commit) error {
	switch {
	case f.take(&f.left.appliedThenLost):
		if err := f.Store.Append(ctx, k, c); err != nil {
			return err
		}
		return runlog.ErrUnknownOutcome
	case f.take(&f.left.appliedThenTaken):
		if err := f.Store.Append(ctx, k, c); err != nil {
			return err
		}
		return runlog.ErrSeqTaken
	case f.take(&f.left.lostBefore):
		return runlog.ErrUnknownOutcome
	}
	return f.Store.Append(ctx, k, c)
}

func (f *faultyLog) Read(ctx context.Context, k runlog.Key, after int64, limit int) ([]runlog.Commit, error) {
	if after > 0 && f.take(&f.left.failReads) {
		return nil, interrupt.ErrUnavailable
	}
	return f.Store.Read(ctx, k, after, limit)
}

// TestUnknownOutcomes: a vote whose put's answer is lost is found by a read and answered as
// committed; a put lost before it was applied is put again, once; when no read can say, the
// answer is outcome_unknown, never "nothing written", and a retry with the same
// Idempotency-Key answers what happened.
func TestUnknownOutcomes(t *testing.T) {
	tests := []struct {
		name  string
		fault faultCounts
		// want is the first answer's status or error code; commits the log's commits after it.
		want    string
		commits int
	}{
		{"applied, answer lost", faultCounts{appliedThenLost: 1}, "resolved", 2},
		{"lost before it was applied", faultCounts{lostBefore: 1}, "resolved", 2},
		{"applied, answer lost, the read fails", faultCounts{appliedThenLost: 1, failReads: 1}, "outcome_unknown", 2},
		{"applied, the retry finds it taken", faultCounts{appliedThenTaken: 1}, "resolved", 2},
		{"applied, the retry finds it taken, the read fails", faultCounts{appliedThenTaken: 1, failReads: 1}, "outcome_unknown", 2},
		{"never applied, every read fails", faultCounts{lostBefore: 1, failReads: 1}, "outcome_unknown", 1},
		{"never applied however often put", faultCounts{lostBefore: 10}, "outcome_unknown", 1},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &faultyLog{}
			h, l := hosttest.MemHostOn(t, func(log host.Store) host.Store { f.Store = log; return f })
			if _, _, err := h.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: "gate", Payload: approvalWith(``)}); err != nil {
				t.Fatal(err)
			}
			f.set(tt.fault)
			idem := &host.Idempotency{Key: "vote-1", Fingerprint: "f"}
			res, err := h.Resolve(ctx, approver("alice"), "r1", "gate", decision("accept"), idem)
			got := string(res.Status)
			if err != nil {
				got = string(code(err))
			}
			if got != tt.want {
				t.Fatalf("%s %v, want %s", got, err, tt.want)
			}
			commits, _ := l.Read(ctx, runlog.Key{Tenant: "acme", RunID: "r1"}, 0, 0)
			if len(commits) != tt.commits {
				t.Fatalf("%d commits, want %d", len(commits), tt.commits)
			}
			if err != nil && errors.Is(err, interrupt.ErrUnavailable) && !errors.Is(err, interrupt.ErrOutcomeUnknown) && len(commits) > 1 {
				t.Fatalf("answered unavailable (nothing written) with a commit behind it")
			}
			f.set(faultCounts{})
			again, err := h.Resolve(ctx, approver("alice"), "r1", "gate", decision("accept"), idem)
			if err != nil || again.Status != interrupt.StatusResolved {
				t.Fatalf("the retry with the same key: %+v %v", again, err)
			}
			if commits, _ := l.Read(ctx, runlog.Key{Tenant: "acme", RunID: "r1"}, 0, 0); len(commits) != 2 {
				t.Errorf("%d commits after the retry, want 2", len(commits))
			}
		})
	}
}
