package host

import (
	"context"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Snapshot is the RunSnapshot of a run.
func (h *Host) Snapshot(ctx context.Context, p interrupt.Principal, runID string) (runlog.Snapshot, error) {
	st, err := h.load(ctx, key(p, runID))
	if err != nil {
		return runlog.Snapshot{}, err
	}
	if !st.Exists() {
		return runlog.Snapshot{}, interrupt.Errorf(interrupt.CodeNotFound, "no run %s", runID)
	}
	return st.Snapshot(runID, h.cfg.Now()), nil
}

// EventPage is one page of a run's events. Next is the cursor to pass as after for the page that
// follows; it equals the request's after when nothing newer exists yet, so a reader can poll it.
type EventPage struct {
	Events []runlog.Envelope `json:"events"`
	Next   int64             `json:"next"`
}

// MaxPageCommits caps one page of events, counted in commits: a page never splits a commit.
const MaxPageCommits = 1000

// Events lists the events of the commits after seq after, at most limit commits.
func (h *Host) Events(ctx context.Context, p interrupt.Principal, runID string, after int64, limit int) (EventPage, error) {
	k := key(p, runID)
	commits, err := h.log.Read(ctx, k, after, limit)
	if err != nil {
		return EventPage{}, err
	}
	if len(commits) == 0 {
		// Tell an unknown run from a run with nothing newer: one more read, only on this path.
		first, err := h.log.Read(ctx, k, 0, 1)
		if err != nil {
			return EventPage{}, err
		}
		if len(first) == 0 {
			return EventPage{}, interrupt.Errorf(interrupt.CodeNotFound, "no run %s", runID)
		}
	}
	page := EventPage{Events: []runlog.Envelope{}, Next: after}
	for _, c := range commits {
		page.Events = append(page.Events, c.Envelopes(runID)...)
		page.Next = c.Seq
	}
	return page, nil
}
