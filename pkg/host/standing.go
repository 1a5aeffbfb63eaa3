package host

import (
	"context"
	"encoding/json"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// ApproveByPolicy records the approval of a call by the tenant's policy it was asked under,
// whose standing approval m the call's arguments matched: no person is asked. It commits, as
// the policy's principal (interrupt.PolicyPrincipal), the policy's vote (eligible via
// interrupt.EligiblePolicy, naming the standing approval) and the resolution, accept, so the
// outcome answers the approved call and its receipt as a person's approval does. Only the
// requester asks it, only of an approval of a call asked under that very policy version, and
// only while it waits: an interrupt already decided answers as it stands, writing nothing, so
// a retried request approves at most once.
func (h *Host) ApproveByPolicy(ctx context.Context, p interrupt.Principal, runID, interruptID string, ref interrupt.PolicyRef, m interrupt.StandingMatch) (Resolution, error) {
	k, err := key(p, runID)
	if err != nil {
		return Resolution{}, err
	}
	st, err := h.load(ctx, k)
	if err != nil {
		return Resolution{}, err
	}
	by := interrupt.PolicyPrincipal(ref)
	return commit(ctx, h, k, st, by, func(st *runlog.State) (decision[Resolution], error) {
		in := st.ByID(interruptID)
		switch {
		case in == nil || in.RequestedBy != p.Voter():
			return decision[Resolution]{}, interrupt.Errorf(interrupt.CodeNotFound, "no interrupt %s of run %s asked by the caller", interruptID, runID)
		case in.ToolCall == nil || in.ToolCall.Policy == nil || *in.ToolCall.Policy != ref || in.Payload.Kind != interrupt.KindApproval:
			return decision[Resolution]{}, interrupt.Errorf(interrupt.CodeForbidden, "interrupt %s was not asked under %s", interruptID, ref.Said())
		case in.StatusAt(h.now()) != interrupt.StatusPending:
			return decision[Resolution]{answer: Resolution{RunID: runID, NodeID: in.NodeID, InterruptID: in.ID, ResumeValue: in.ResumeValue, Status: in.StatusAt(h.now())}}, nil
		}
		value, err := json.Marshal(struct {
			Action    interrupt.Action `json:"action"`
			DecidedBy string           `json:"decidedBy"`
			DecidedAt string           `json:"decidedAt"`
		}{interrupt.ActionAccept, by, h.now().UTC().Format(runlog.TimeFormat)})
		if err != nil {
			return decision[Resolution]{}, err
		}
		tally := in.Tally()
		tally.Approvals++
		voted, err := runlog.NewEvent(interrupt.EventVoted, in.NodeID, in.ID, interrupt.Vote{
			NodeID: in.NodeID, InterruptID: in.ID, Principal: by, Action: interrupt.ActionAccept,
			Eligibility: interrupt.Eligibility{Via: interrupt.EligiblePolicy, Ref: ref.Tool}, Tally: tally, Standing: &m,
		})
		if err != nil {
			return decision[Resolution]{}, err
		}
		resolved, err := resolveEvent(in, value)
		if err != nil {
			return decision[Resolution]{}, err
		}
		return decision[Resolution]{
			events: []runlog.Event{voted, resolved},
			answer: Resolution{RunID: runID, NodeID: in.NodeID, InterruptID: in.ID, ResumeValue: value, Status: interrupt.StatusResolved, Tally: &tally},
		}, nil
	})
}
