package host

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// eligibility decides, now and once, whether p may vote on the approval in, and records why.
// Every eligibility field that binds must admit p: approversList binds everywhere, group and
// role refs bind only where the host advertises those ref kinds (refKinds) and are ignored
// otherwise, so an approval naming alice and the group ops admits alice only while she is in
// ops. audience never grants anything. An approval with no binding field is open to every caller
// with approvals:respond. Quorum counts people: a token minted without a principal votes only
// where one vote releases.
func eligibility(in *runlog.Interrupt, p interrupt.Principal, refKinds []string) (interrupt.Eligibility, error) {
	if p.Subject == "" && in.Tally().Required > 1 {
		return interrupt.Eligibility{}, interrupt.Errorf(interrupt.CodeNotEligible,
			"a token without a principal is no one in particular and cannot count towards a quorum of %d; approvers decide as themselves", in.Tally().Required)
	}
	rules := bindingRules(in.Payload.Data, refKinds)
	if len(rules) == 0 {
		return interrupt.Eligibility{Via: "open"}, nil
	}
	if p.Subject == "" {
		return interrupt.Eligibility{}, interrupt.Errorf(interrupt.CodeNotEligible, "this approval names its approvers; a token must be minted for one of them")
	}
	var e interrupt.Eligibility
	for _, r := range rules {
		i := slices.IndexFunc(r.refs, func(ref string) bool { return slices.Contains(r.held(p), ref) })
		if i < 0 {
			return interrupt.Eligibility{}, interrupt.Errorf(interrupt.CodeNotEligible, "%s is not an eligible approver of interrupt %s: %s does not admit it", p.Subject, in.ID, r.field)
		}
		if e.Via == "" {
			e.Via, e.Ref = r.via, r.refs[i]
		} else {
			e.Also = append(e.Also, interrupt.Admission{Via: r.via, Ref: r.refs[i]})
		}
	}
	return e, nil
}

// rule is one eligibility field that binds: the refs it lists, and what of a principal they
// are matched against.
type rule struct {
	field, via string
	refs       []string
	held       func(interrupt.Principal) []string
}

// bindingRules are the eligibility fields of d that bind on this host, list first.
func bindingRules(d interrupt.Data, refKinds []string) []rule {
	var rules []rule
	if len(d.ApproversList) > 0 {
		rules = append(rules, rule{"approversList", interrupt.RefPrincipal, d.ApproversList, func(p interrupt.Principal) []string { return []string{p.Subject} }})
	}
	if slices.Contains(refKinds, interrupt.RefGroup) && len(d.ApproverGroupRefs) > 0 {
		rules = append(rules, rule{"approverGroupRefs", interrupt.RefGroup, d.ApproverGroupRefs, func(p interrupt.Principal) []string { return p.Groups }})
	}
	if slices.Contains(refKinds, interrupt.RefRole) && len(d.ApproverRoleRefs) > 0 {
		rules = append(rules, rule{"approverRoleRefs", interrupt.RefRole, d.ApproverRoleRefs, func(p interrupt.Principal) []string { return p.Roles }})
	}
	return rules
}

// unreachable reports whether the approval's quorum can no longer be met once the vote of voter
// is counted into tally: approversList bounds who may still vote, and the approvals still
// possible from the listed principals who have not voted fall short (and none of them is an
// override principal who could release the gate alone). Without a list nobody knows how many
// approvers are left, and the gate waits.
func unreachable(in *runlog.Interrupt, voter string, tally interrupt.Tally, overrides []string) bool {
	d := in.Payload.Data
	if len(d.ApproversList) == 0 {
		return false
	}
	left := 0
	for _, who := range d.ApproversList {
		if who == voter || in.Voted(who) != nil {
			continue
		}
		if d.OverrideBypassesQuorum && slices.Contains(overrides, who) {
			return false
		}
		left++
	}
	return tally.Approvals+left < tally.Required
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
	// Only a caller authenticated to the host can be an override principal, never a token bearer.
	override := in.Payload.Data.OverrideBypassesQuorum && p.Token == "" && slices.Contains(overrides, p.Subject)
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
	if !released && action == interrupt.ActionReject && unreachable(in, voter, tally, overrides) {
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
