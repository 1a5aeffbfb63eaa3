package host

import (
	"encoding/json"
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
// interrupt.resolved with it, as the model counts it (interrupt.Deciders.Count). overrides are
// the host's override principals.
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
	// The model counts it: one vote each, the quorum, the policy, the override, reachability.
	counted, err := in.Deciders.Count(p, elig, action, in.Votes, overrides)
	if err != nil {
		return decision[Resolution]{}, err
	}
	tally, released := counted.Tally, counted.Released
	v := interrupt.Vote{
		NodeID: in.NodeID, InterruptID: in.ID, Principal: voter, OnBehalfOf: counted.Eligibility.OnBehalfOf, Action: action, ResumeValue: value,
		Eligibility: counted.Eligibility, Override: counted.Override, Tally: tally, Reason: counted.Reason,
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
