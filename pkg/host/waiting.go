package host

import (
	"context"
	"errors"
	"sync"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Waiting is each tenant's index of its runs that wait on an interrupt, with a summary of each
// (docs/design.md, "Read models"), so that a tenant's pending interrupts are listed without a
// scan and without reading a payload. It is a read model: the stream's consumer keeps it after
// the commits (Reindex), never the commit path, and PendingInterrupts reads it, checks each
// entry against its run's log and repairs what it finds stale. Every method refuses a tenant or
// run id that is not an id (runlog.ValidID) with runlog.ErrInvalidKey.
type Waiting interface {
	// FileWaiting files w, unless its run's entry there reflects a later commit of the same run
	// (runlog.Waiting.Replaces): that entry stays, and that is no error (filed is false). Filed,
	// it answers the entry w replaced (zero for none), atomically with the write.
	FileWaiting(ctx context.Context, w runlog.Waiting) (prior runlog.Waiting, filed bool, err error)
	// UnfileWaiting removes w's run's entry if w removes it (runlog.Waiting.Removes), answering
	// the entry removed; no entry, or one w keeps, is no error (removed is false).
	UnfileWaiting(ctx context.Context, w runlog.Waiting) (prior runlog.Waiting, removed bool, err error)
	// WaitingRuns lists the tenant's entries in run id order after the run id after ("" for the
	// first), at most limit (at least 1); none when none is left.
	WaitingRuns(ctx context.Context, tenant, after string, limit int) ([]runlog.Waiting, error)
	// Newer reports whether run k's log holds a commit after seq, live or expired (false for no
	// run), reading no commit when it holds none: what tells a list whether an entry is as new
	// as its run.
	Newer(ctx context.Context, k runlog.Key, seq int64) (bool, error)
}

// Reindex brings run k's entries in the read models (its waiting entry, its inbox entries and
// its runs entry) up to its log (docs/design.md, "Read models"): the stream's consumer calls it
// after the commits of k it takes, and a list after it found an entry stale. It reads the log consistently and writes the entry as of its last
// commit, conditionally: an entry never goes back over one of a later commit, so duplicates and
// records out of order are harmless. A write of an older read may still land after a removal
// of a newer one (the item is gone, so nothing is there to compare with): that entry is behind
// its log, and the next list finds so and repairs it. A run with no live commit (gone past its
// retention) has no entry to write; a list removes what names it.
//
// commits are those of k the caller already holds (a stream batch's, in order), or none. When
// they are the run's whole log from its first commit, the run's state is folded from them and
// no read is made; and a run that waits on nothing after them was never in the waiting index
// (one batch, one write), so only its runs entry is written. An entry another writer filed in
// between (a list's repair) is then behind its log, and the next list removes it.
func (h *Host) Reindex(ctx context.Context, k runlog.Key, commits ...runlog.Commit) error {
	if k.Tenantwide() {
		return nil // the tenant's own log is no run: it waits on nothing and is listed nowhere
	}
	if whole(commits) {
		if st, err := runlog.Fold(commits); err == nil {
			if w := h.entry(k, st); len(w.Pending) > 0 {
				return h.reindexed(ctx, k, st)
			}
			return h.fileRun(ctx, k, st)
		}
	}
	st, err := h.load(ctx, k)
	if err != nil || st.Seq == 0 {
		return err
	}
	return h.reindexed(ctx, k, st)
}

// fileRun files run k's entry in the runs index as of st (none for a host without one).
func (h *Host) fileRun(ctx context.Context, k runlog.Key, st *runlog.State) error {
	if h.runIndex == nil {
		return nil
	}
	_, err := h.runIndex.FileRun(ctx, st.RunEntry(k, h.cfg.Retention))
	return err
}

// whole reports whether commits are a run's log from its first commit, with no gap.
func whole(commits []runlog.Commit) bool {
	for i, c := range commits {
		if c.Seq != int64(i)+1 {
			return false
		}
	}
	return len(commits) > 0
}

// reindexed writes run k's waiting entry as of st (filed while it waits, removed once it does
// not) and, when it took, the run's inbox entries (reassign): the waiting entry's write is what
// orders the writers of one run, so a reindex of an older read writes no inbox entry.
func (h *Host) reindexed(ctx context.Context, k runlog.Key, st *runlog.State) error {
	if err := h.fileRun(ctx, k, st); err != nil {
		return err
	}
	w := h.entry(k, st)
	var prior runlog.Waiting
	var took bool
	var err error
	if len(w.Pending) == 0 {
		prior, took, err = h.waiting.UnfileWaiting(ctx, w)
	} else {
		prior, took, err = h.waiting.FileWaiting(ctx, w)
	}
	if err != nil || !took {
		return err
	}
	return h.reassign(ctx, k, st, prior, w)
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
	// Title is the payload's data.title (at most runlog.MaxTitle characters), if it has one.
	Title       string `json:"title,omitempty"`
	Seq         int64  `json:"seq"`
	RequestedAt string `json:"requestedAt"`
	ExpiresAt   string `json:"expiresAt,omitempty"`
	// Tally is an approval's votes so far against its quorum.
	Tally *interrupt.Tally `json:"tally,omitempty"`
	// WaitingOn are whom it waits on: the inboxes it is filed in ("principal:alice",
	// "group:finance", "role:manager", "anyone"; docs/design.md, "The inbox"), none for a kind
	// machines answer.
	WaitingOn []string `json:"waitingOn,omitempty"`
	// RequestedBy is the principal that requested it (absent from an entry indexed before it
	// was kept, until its run's next commit).
	RequestedBy string `json:"requestedBy,omitempty"`
}

// PendingInterrupts lists the caller's tenant's interrupts pending at now, from the runs after
// run id after, about limit of them (0: DefaultPendingLimit); a page that read pageRuns runs ends
// there, however few it holds, with a Next. It answers from the index's summaries, each entry
// checked against its run's log first (Waiting.Newer: one read unit, no payload, when the entry
// is as new as its log). An entry its log has gone past (the stream's consumer has yet to take
// the newer commits, or gave up on them) is answered from the log instead, and repaired: at
// most a page of such reads, each the run's checkpoint and the commits after it.
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
	return PendingPage{Interrupts: h.listed(h.entry(k, st))}, nil
}

// pendingOf checks the entries at once and answers each one's pending interrupts.
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

// pendingIn answers w's pending interrupts: from its summaries when no commit of its run follows
// w's, else from the run's log, whose entry is then repaired (a failed repair is left to the
// stream's consumer or the next list: the page is right without it). A run with no live commit
// lists nothing, and its entry is removed.
func (h *Host) pendingIn(ctx context.Context, w runlog.Waiting) ([]PendingInterrupt, error) {
	newer, err := h.waiting.Newer(ctx, w.Key, w.Seq)
	if err != nil {
		return nil, err
	}
	// An entry without summaries was filed by the commit path of a release before read models
	// (docs/design.md, "Pending interrupts"): it is read from the log once, and rewritten. One
	// whose summaries its item could not hold is current all the same: read, never rewritten.
	if !newer && len(w.Pending) > 0 {
		return h.listed(w), nil
	}
	st, err := h.load(ctx, w.Key)
	if err != nil {
		return nil, err
	}
	if !newer && w.Omitted && st.Seq == w.Seq {
		return h.listed(h.entry(w.Key, st)), nil
	}
	if st.Seq == 0 || w.Seq > st.Seq {
		// No run, or an entry of a commit that never came (an earlier release filed entries
		// before their commits): it goes as it is, then the run's entry is written anew.
		_, _, _ = h.waiting.UnfileWaiting(ctx, w)
	}
	if st.Seq == 0 {
		return nil, nil
	}
	_ = h.reindexed(ctx, w.Key, st)
	return h.listed(h.entry(w.Key, st)), nil
}

// listed are the interrupts of entry w pending at now, in request order: an interrupt past its
// deadline is not (its run stays indexed until the sweep records the expiry).
func (h *Host) listed(w runlog.Waiting) []PendingInterrupt {
	now := h.now()
	out := []PendingInterrupt{}
	for _, sm := range w.Pending {
		if !sm.Deadline.IsZero() && !now.Before(sm.Deadline) {
			continue
		}
		pi := PendingInterrupt{
			RunID: w.Key.RunID, NodeID: sm.NodeID, InterruptID: sm.InterruptID, Key: sm.Key, Kind: sm.Kind, Title: sm.Title,
			Seq: sm.Seq, RequestedAt: sm.RequestedAt.UTC().Format(runlog.TimeFormat), Tally: sm.Tally, WaitingOn: sm.Inboxes,
			RequestedBy: sm.RequestedBy,
		}
		if !sm.Deadline.IsZero() {
			pi.ExpiresAt = sm.Deadline.UTC().Format(runlog.TimeFormat)
		}
		out = append(out, pi)
	}
	return out
}
