package host

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// refKinds are the ref kinds an interrupt requested now is judged by (runlog.With.RefKinds):
// none when they are interrupt.DefaultRefKinds, which a request that records none stands for;
// principal alone when the host advertises none (approversList always binds).
func (h *Host) refKinds() []string {
	switch k := h.cfg.RefKinds; {
	case len(k) == 0:
		return []string{interrupt.RefPrincipal}
	case slices.Equal(k, interrupt.DefaultRefKinds):
		return nil
	default:
		return slices.Clone(k)
	}
}

// vote decides what one approval decision commits. ask is recorded and does not exit; the other
// actions are counted votes (one per principal), and the one that releases the gate commits
// interrupt.resolved with it (release). overrides are the host's override principals.
func vote(in *runlog.Interrupt, p interrupt.Principal, elig interrupt.Eligibility, action interrupt.Action, value json.RawMessage, overrides []string) (decision[Resolution], error) {
	res := Resolution{NodeID: in.NodeID, InterruptID: in.ID, ResumeValue: value, Status: interrupt.StatusPending}
	tally := in.Tally()
	voter := p.Voter()
	if action == interrupt.ActionAsk {
		if in.Asks[voter] >= MaxAsksPerPrincipal {
			return decision[Resolution]{}, interrupt.Errorf(interrupt.CodeConflict, "%s has asked %d times on interrupt %s, as often as one principal may", voter, MaxAsksPerPrincipal, in.ID)
		}
		asked, err := runlog.NewEvent(interrupt.EventAsked, in.NodeID, in.ID, interrupt.Asked{NodeID: in.NodeID, InterruptID: in.ID, Principal: voter, ResumeValue: value})
		if err != nil {
			return decision[Resolution]{}, err
		}
		res.Tally = &tally
		return decision[Resolution]{events: []runlog.Event{asked}, answer: res}, nil
	}
	if prior := in.Voted(voter); prior != nil {
		return decision[Resolution]{}, interrupt.Errorf(interrupt.CodeAlreadyVoted, "%s already voted %s on interrupt %s", voter, prior.Action, in.ID)
	}
	// The model says whose vote releases alone: an override principal proven by a deliberate act.
	override := in.Deciders.Overrides(p, in.Payload.Data.OverrideBypassesQuorum, overrides)
	tally, released, err := release(in.Payload.Data.RejectionPolicy, tally, action, override)
	if err != nil {
		return decision[Resolution]{}, err
	}
	v := interrupt.Vote{
		NodeID: in.NodeID, InterruptID: in.ID, Principal: voter, Action: action, ResumeValue: value,
		Eligibility: elig, Override: override && released && action != interrupt.ActionRefine, Tally: tally,
	}
	// Only a rejection can leave the quorum out of reach (an approval adds what it takes away),
	// so the gate then releases with this rejection rather than wait for votes that cannot come.
	votedOrVoting := func(who string) bool { return who == voter || in.Voted(who) != nil }
	releasesAlone := func(who string) bool {
		return in.Payload.Data.OverrideBypassesQuorum && slices.Contains(overrides, who)
	}
	if !released && action == interrupt.ActionReject && in.Deciders.Unreachable(tally.Approvals, votedOrVoting, releasesAlone) {
		released, v.Reason = true, interrupt.ReasonQuorumUnreachable
	}
	if released {
		v.ResumeValue = nil // interrupt.resolved carries it; readers see it in both
	}
	voted, err := runlog.NewEvent(interrupt.EventVoted, in.NodeID, in.ID, v)
	if err != nil {
		return decision[Resolution]{}, err
	}
	events := []runlog.Event{voted}
	res.Tally = &tally
	if released {
		resolved, err := resolveEvent(in, value)
		if err != nil {
			return decision[Resolution]{}, err
		}
		events = append(events, resolved)
		res.Status = interrupt.StatusResolved
	}
	return decision[Resolution]{events: events, answer: res}, nil
}

// release counts one vote into tally and says whether it releases the gate: refine at once;
// accept and edit-accept once they reach the quorum; reject at once under single-veto (the
// default), past half the quorum under majority; an override (a configured principal, on an
// approval that allows it) at once.
func release(policy string, tally interrupt.Tally, action interrupt.Action, override bool) (interrupt.Tally, bool, error) {
	switch action {
	case interrupt.ActionRefine:
		return tally, true, nil
	case interrupt.ActionAccept, interrupt.ActionEditAccept:
		tally.Approvals++
		return tally, override || tally.Approvals >= tally.Required, nil
	case interrupt.ActionReject:
		tally.Rejections++
		switch policy {
		case interrupt.PolicyMajority:
			return tally, override || 2*tally.Rejections > tally.Required, nil
		case interrupt.PolicySingleVeto, "":
			return tally, true, nil
		}
		return tally, false, fmt.Errorf("host: unknown rejection policy %q", policy)
	}
	return tally, false, fmt.Errorf("host: unhandled approval action %q", action)
}
