package host

import (
	"context"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// RunEnd is the answer of end-run.
type RunEnd struct {
	RunID  string              `json:"runId"`
	Status interrupt.RunStatus `json:"status"`
	Seq    int64               `json:"seq"`
}

func (r RunEnd) atSeq(seq int64) RunEnd { r.Seq = seq; return r }

// EndRun cancels or completes a run (end is RunCancelled or RunCompleted). Its pending
// interrupts end with it, and every token for them answers 409 from then on. Ending a run the
// same way twice answers the first end and appends nothing; ending it the other way is a
// conflict.
func (h *Host) EndRun(ctx context.Context, p interrupt.Principal, runID string, end interrupt.RunStatus, reason string) (RunEnd, error) {
	return h.endRun(ctx, p, runID, end, reason, false)
}

// EndOwnRun is EndRun for a caller that may end only a run it began (Request.OwnRun): a person
// signed in through the agents' client ends the runs it asked in, and no other.
func (h *Host) EndOwnRun(ctx context.Context, p interrupt.Principal, runID string, end interrupt.RunStatus, reason string) (RunEnd, error) {
	return h.endRun(ctx, p, runID, end, reason, true)
}

func (h *Host) endRun(ctx context.Context, p interrupt.Principal, runID string, end interrupt.RunStatus, reason string, own bool) (RunEnd, error) {
	eventType := map[interrupt.RunStatus]string{interrupt.RunCancelled: interrupt.EventRunCancelled, interrupt.RunCompleted: interrupt.EventRunCompleted}[end]
	if eventType == "" {
		return RunEnd{}, interrupt.Errorf(interrupt.CodeValidation, "a run ends cancelled or completed")
	}
	k, st, err := h.loadRun(ctx, p, runID)
	if err != nil {
		return RunEnd{}, err
	}
	switch {
	case own && !st.Exists():
		return RunEnd{}, errNotYourRun(runID)
	case !st.Exists():
		return RunEnd{}, interrupt.Errorf(interrupt.CodeNotFound, "no run %s", runID)
	}
	return commit(ctx, h, k, st, p.Voter(), func(st *runlog.State) (decision[RunEnd], error) {
		if own && st.Author() != p.Voter() {
			return decision[RunEnd]{}, errNotYourRun(runID)
		}
		switch st.Ended {
		case end:
			return decision[RunEnd]{answer: RunEnd{RunID: runID, Status: end, Seq: st.EndedSeq}}, nil
		case "":
		default:
			return decision[RunEnd]{}, interrupt.Errorf(interrupt.CodeConflict, "run %s is already %s", runID, st.Ended)
		}
		ended, err := runlog.NewEvent(eventType, "", "", interrupt.Ended{By: p.Subject, Reason: reason})
		if err != nil {
			return decision[RunEnd]{}, err
		}
		return decision[RunEnd]{
			events: []runlog.Event{ended},
			answer: RunEnd{RunID: runID, Status: end},
			ends:   true,
		}, nil
	})
}
