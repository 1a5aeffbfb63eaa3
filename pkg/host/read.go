package host

import (
	"context"
	"slices"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Snapshot is the RunSnapshot of a run.
func (h *Host) Snapshot(ctx context.Context, p interrupt.Principal, runID string) (runlog.Snapshot, error) {
	_, st, err := h.loadRun(ctx, p, runID)
	if err != nil {
		return runlog.Snapshot{}, err
	}
	if !st.Exists() {
		return runlog.Snapshot{}, interrupt.Errorf(interrupt.CodeNotFound, "no run %s", runID)
	}
	return st.Snapshot(runID, h.now()), nil
}

// EventPage is one page of a run's events. Next is the cursor to pass as after for the page that
// follows; it equals the request's after when nothing newer exists yet, so a reader can poll it.
type EventPage struct {
	Events []runlog.Envelope `json:"events"`
	Next   int64             `json:"next"`
}

// A page never splits a commit, and is capped by count and by size: MaxPageCommits commits, and
// MaxPageBytes of events once at least one commit is in it (Lambda answers at most 6 MB, and the
// gateway's event escapes the body once more).
const (
	MaxPageCommits = 1000
	MaxPageBytes   = 2 << 20
)

// envelopeOverhead bounds the bytes an envelope adds to its payload and ids when encoded.
const envelopeOverhead = 128

// Events lists the events of the commits after seq after, at most limit commits (0: no limit)
// and about MaxPageBytes, the ones mode includes. Reading from the commit at after itself tells,
// in the same Query, whether the run exists, so polling the tail of a run costs one round trip.
// A page counts commits, not events: one of updates may hold fewer events than commits, even
// none, with Next past the commits it read.
func (h *Host) Events(ctx context.Context, p interrupt.Principal, runID string, after int64, limit int, mode interrupt.Mode) (EventPage, error) {
	k, err := key(p, runID)
	if err != nil {
		return EventPage{}, err
	}
	from, extra := after, 0
	if after > 0 {
		from, extra = after-1, 1
	}
	if limit > 0 {
		limit += extra
	}
	commits, err := h.runs.Read(ctx, k, from, limit)
	if err != nil {
		return EventPage{}, err
	}
	if after > 0 && len(commits) > 0 && commits[0].Seq == after {
		commits = commits[1:]
	} else if len(commits) == 0 {
		// Past the end of an existing run, or no run: one more read, only on this path.
		first, err := h.runs.Read(ctx, k, 0, 1)
		if err != nil {
			return EventPage{}, err
		}
		if len(first) == 0 {
			return EventPage{}, interrupt.Errorf(interrupt.CodeNotFound, "no run %s", runID)
		}
	}
	page := EventPage{Events: []runlog.Envelope{}, Next: after}
	size := 0
	for _, c := range commits {
		envs := slices.DeleteFunc(c.Envelopes(runID), func(e runlog.Envelope) bool { return !mode.Includes(e.Type) })
		n := 0
		for _, e := range envs {
			n += len(e.Type) + len(e.RunID) + len(e.NodeID) + len(e.InterruptID) + len(e.Payload) + envelopeOverhead
		}
		if size > 0 && size+n > MaxPageBytes {
			break
		}
		size += n
		page.Events = append(page.Events, envs...)
		page.Next = c.Seq
	}
	return page, nil
}
