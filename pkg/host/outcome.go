package host

import (
	"context"
	"encoding/json"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Outcome is what became of one interrupt, as a requester waiting on it reads it (an agent
// over MCP, pkg/mcp).
type Outcome struct {
	RunID, NodeID, InterruptID string
	Kind                       interrupt.Kind
	// Status is the interrupt's now: pending, resolved, expired (its deadline passed, whether
	// or not the sweep recorded it yet) or cancelled (its run ended first: RunEnded says how).
	Status   interrupt.Status
	RunEnded interrupt.RunStatus
	// ResumeValue is the resolution's value; ResolvedBy who resolved it, the host's own record
	// (the commit's author), "" for a run checkpointed before it was kept.
	ResumeValue json.RawMessage
	ResolvedBy  string
	// Votes are an approval's counted votes, in order (runlog.Interrupt.CountedVotes).
	Votes []interrupt.Vote
	// DecidedAt is when it was resolved (zero while it is not).
	DecidedAt time.Time
	// ApprovedCall is the call people approved, for an approval that asked one and was
	// accepted; Receipt its receipt (Tokens.InterruptOutcome), Redeemed its redemption once
	// recorded.
	ApprovedCall *interrupt.ApprovedCall
	Receipt      *Receipt
	Redeemed     *runlog.Redemption
}

// InterruptOutcome reads the interrupt interruptID of the caller's run as it stands, with one
// read of the run from its newest checkpoint, as every read of a run: polling it costs the
// same on a run of any length. Another tenant's run, and an interrupt the run does not hold,
// answer 404.
func (h *Host) InterruptOutcome(ctx context.Context, p interrupt.Principal, runID, interruptID string) (Outcome, error) {
	o, _, err := h.outcome(ctx, p, runID, interruptID)
	return o, err
}

// outcome is InterruptOutcome, with the interrupt it read.
func (h *Host) outcome(ctx context.Context, p interrupt.Principal, runID, interruptID string) (Outcome, *runlog.Interrupt, error) {
	_, st, err := h.loadRun(ctx, p, runID, runlog.Ref{Kind: runlog.RefInterrupt, Name: interruptID}, runlog.Ref{Kind: runlog.RefReceipt, Name: interruptID})
	if err != nil {
		return Outcome{}, nil, err
	}
	if !st.Exists() {
		return Outcome{}, nil, interrupt.Errorf(interrupt.CodeNotFound, "no run %s", runID)
	}
	in := st.ByID(interruptID)
	if in == nil {
		return Outcome{}, nil, interrupt.Errorf(interrupt.CodeNotFound, "no interrupt %s in run %s", interruptID, runID)
	}
	o := Outcome{
		RunID: runID, NodeID: in.NodeID, InterruptID: in.ID, Kind: in.Payload.Kind, Status: in.StatusAt(h.now()),
		RunEnded: st.Ended, ResumeValue: in.ResumeValue, ResolvedBy: in.Decider(), Votes: in.CountedVotes(),
		DecidedAt: in.DecidedAt(), ApprovedCall: in.ApprovedCall(), Redeemed: st.Redeemed(in.ID),
	}
	return o, in, nil
}
