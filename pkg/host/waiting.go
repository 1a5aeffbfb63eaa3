package host

import (
	"context"
	"errors"
	"sync"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Waiting is each tenant's index of its runs that wait on an interrupt (docs/design.md,
// "Pending interrupts"), so that a tenant's pending interrupts are listed without a scan. The
// commit path keeps it: an entry is filed before the commit that makes a run wait and removed
// after the commit that leaves it waiting on nothing; PendingInterrupts reads it.
type Waiting interface {
	// FileWaiting files w, unless its run's entry was filed for a later commit (the request of
	// that one is about to commit, or has): runlog.Waiting.Replaces.
	FileWaiting(ctx context.Context, w runlog.Waiting) error
	// UnfileWaiting removes w's run's entry if w removes it (runlog.Waiting.Removes); no entry,
	// or one w keeps, is no error.
	UnfileWaiting(ctx context.Context, w runlog.Waiting) error
	// WaitingRuns lists the tenant's entries in run id order after the run id after ("" for the
	// first), at most limit.
	WaitingRuns(ctx context.Context, tenant, after string, limit int) ([]runlog.Waiting, error)
}

// Bounds of a page of pending interrupts: DefaultPendingLimit interrupts unless the caller asks
// for up to MaxPendingLimit. A page never splits a run, so it may hold a run's DefaultMaxPending
// more. It reads at most pageRuns runs, pendingReads at once, so a page of runs whose
// interrupts are all past their deadline (the sweep has yet to record them) stays bounded too.
const (
	DefaultPendingLimit = 50
	MaxPendingLimit     = 500
	pendingReads        = 8
	pageRuns            = 96
)

// PendingPage is one page of a tenant's pending interrupts, in run id order and in request order
// within a run.
type PendingPage struct {
	Interrupts []PendingInterrupt `json:"interrupts"`
	// Next is the cursor of the next page (its after), "" on the last.
	Next string `json:"next,omitempty"`
}

// PendingInterrupt is one interrupt a tenant's run waits on: enough to decide whom to chase and
// to find it (GET /runs/{runId}, the approval page), not its payload, which the run's events
// hold.
type PendingInterrupt struct {
	RunID       string         `json:"runId"`
	NodeID      string         `json:"nodeId"`
	InterruptID string         `json:"interruptId"`
	Key         string         `json:"key"`
	Kind        interrupt.Kind `json:"kind"`
	Seq         int64          `json:"seq"`
	RequestedAt string         `json:"requestedAt"`
	ExpiresAt   string         `json:"expiresAt,omitempty"`
}

// PendingInterrupts lists the caller's tenant's interrupts pending at now, from the runs after
// run id after, about limit of them (0: DefaultPendingLimit); a page that read pageRuns runs ends
// there, however few it holds, with a Next. Each indexed run is read and re-validated: the
// entry of a run that waits no longer lists nothing, and is removed when it is stale for good:
// filed for a commit the log holds, or for one still missing SweepGrace after it was filed (its
// request gave up, or its run is an expired one of the same id). The removal keeps an entry a
// request filed meanwhile; one that fails is left to the next list.
func (h *Host) PendingInterrupts(ctx context.Context, p interrupt.Principal, after string, limit int) (PendingPage, error) {
	if limit <= 0 {
		limit = DefaultPendingLimit
	}
	page := PendingPage{Interrupts: []PendingInterrupt{}}
	if !runlog.ValidID(p.Tenant) {
		return page, nil
	}
	for read := 0; ; read += pendingReads {
		if read == pageRuns {
			page.Next = after
			return page, nil
		}
		runs, err := h.waiting.WaitingRuns(ctx, p.Tenant, after, pendingReads)
		if err != nil {
			return PendingPage{}, err
		}
		found, err := h.pendingOf(ctx, runs)
		if err != nil {
			return PendingPage{}, err
		}
		for i, run := range runs {
			page.Interrupts = append(page.Interrupts, found[i]...)
			after = run.Key.RunID
			if len(page.Interrupts) >= limit {
				if i < len(runs)-1 || len(runs) == pendingReads {
					page.Next = after
				}
				return page, nil
			}
		}
		if len(runs) < pendingReads {
			return page, nil
		}
	}
}

// PendingInRun lists the interrupts pending at now in the caller's run runID, as
// PendingInterrupts does for every run, from the run's log alone (no run is none pending).
func (h *Host) PendingInRun(ctx context.Context, p interrupt.Principal, runID string) (PendingPage, error) {
	k, err := key(p, runID)
	if err != nil {
		return PendingPage{}, err
	}
	st, err := h.load(ctx, k)
	if err != nil {
		return PendingPage{}, err
	}
	return PendingPage{Interrupts: h.pendingOfState(k, st)}, nil
}

// pendingOf reads the runs at once and answers each one's pending interrupts.
func (h *Host) pendingOf(ctx context.Context, runs []runlog.Waiting) ([][]PendingInterrupt, error) {
	found := make([][]PendingInterrupt, len(runs))
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, w := range runs {
		wg.Go(func() { found[i], errs[i] = h.pendingIn(ctx, w) })
	}
	wg.Wait()
	return found, errors.Join(errs...)
}

func (h *Host) pendingIn(ctx context.Context, w runlog.Waiting) ([]PendingInterrupt, error) {
	st, err := h.load(ctx, w.Key)
	if err != nil {
		return nil, err
	}
	if !st.Waiting() {
		// A removal that fails leaves the entry for the next list: the page is right without it.
		switch {
		case w.Origin == st.Origin() && w.Seq <= st.Seq:
			_ = h.waiting.UnfileWaiting(ctx, runlog.Waiting{Key: w.Key, Seq: st.Seq + 1, Origin: st.Origin()})
		case h.cfg.Now().Sub(w.At) > SweepGrace:
			_ = h.waiting.UnfileWaiting(ctx, w)
		}
		return nil, nil
	}
	return h.pendingOfState(w.Key, st), nil
}

// pendingOfState lists the interrupts of run k pending at now in st, in request order.
func (h *Host) pendingOfState(k runlog.Key, st *runlog.State) []PendingInterrupt {
	out := []PendingInterrupt{}
	for _, in := range st.Pending(h.cfg.Now()) {
		pi := PendingInterrupt{
			RunID: k.RunID, NodeID: in.NodeID, InterruptID: in.ID, Key: in.Payload.Key, Kind: in.Payload.Kind,
			Seq: in.RequestedSeq, RequestedAt: in.RequestedAt.UTC().Format(runlog.TimeFormat),
		}
		if !in.Deadline.IsZero() {
			pi.ExpiresAt = in.Deadline.UTC().Format(runlog.TimeFormat)
		}
		out = append(out, pi)
	}
	return out
}
