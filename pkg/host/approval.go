package host

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// eligibility decides, now and once, whether p may vote on the approval in, and records why.
// approversList binds everywhere; group and role refs bind only where the host advertises those
// ref kinds, and are ignored otherwise; audience never grants anything. An approval with no
// binding rule is open to every caller with approvals:respond.
func (h *Host) eligibility(in *runlog.Interrupt, p interrupt.Principal) (interrupt.Eligibility, error) {
	d := in.Payload.Data
	groups := h.advertises(interrupt.RefGroup) && len(d.ApproverGroupRefs) > 0
	roles := h.advertises(interrupt.RefRole) && len(d.ApproverRoleRefs) > 0
	if len(d.ApproversList) == 0 && !groups && !roles {
		return interrupt.Eligibility{Via: "open"}, nil
	}
	if p.Subject == "" {
		return interrupt.Eligibility{}, interrupt.Errorf(interrupt.CodeNotEligible, "this approval names its approvers; a token must be minted for one of them")
	}
	if slices.Contains(d.ApproversList, p.Subject) {
		return interrupt.Eligibility{Via: interrupt.RefPrincipal, Ref: p.Subject}, nil
	}
	if groups {
		for _, ref := range d.ApproverGroupRefs {
			if slices.Contains(p.Groups, ref) {
				return interrupt.Eligibility{Via: interrupt.RefGroup, Ref: ref}, nil
			}
		}
	}
	if roles {
		for _, ref := range d.ApproverRoleRefs {
			if slices.Contains(p.Roles, ref) {
				return interrupt.Eligibility{Via: interrupt.RefRole, Ref: ref}, nil
			}
		}
	}
	return interrupt.Eligibility{}, interrupt.Errorf(interrupt.CodeNotEligible, "%s is not an eligible approver of interrupt %s", p.Subject, in.ID)
}

func (h *Host) advertises(refKind string) bool { return slices.Contains(h.cfg.RefKinds, refKind) }

// vote decides what one approval decision commits. ask is recorded and does not exit; refine
// exits at once; accept and edit-accept count towards the quorum, reject against it (at once
// under single-veto, past half the quorum under majority); a configured override principal
// releases alone where the approval allows it. Every counted vote is an interrupt.voted event;
// the vote that releases the gate commits interrupt.resolved with it.
func (h *Host) vote(in *runlog.Interrupt, p interrupt.Principal, elig interrupt.Eligibility, action interrupt.Action, value json.RawMessage) (decision[Resolution], error) {
	res := Resolution{NodeID: in.NodeID, InterruptID: in.ID, ResumeValue: value, Status: interrupt.StatusPending}
	tally := in.Tally()
	voter := p.Voter()
	if action == interrupt.ActionAsk {
		if in.Asks[voter] >= MaxAsksPerPrincipal {
			return decision[Resolution]{}, interrupt.Errorf(interrupt.CodeConflict, "%s has asked %d times on interrupt %s, as often as one principal may", voter, MaxAsksPerPrincipal, in.ID)
		}
		asked, _ := runlog.Marshal(map[string]any{"nodeId": in.NodeID, "interruptId": in.ID, "principal": voter, "resumeValue": value})
		res.Tally = &tally
		return decision[Resolution]{events: []runlog.Event{{Type: interrupt.EventAsked, NodeID: in.NodeID, InterruptID: in.ID, Payload: asked}}, answer: seqInto(res)}, nil
	}
	if prior := in.Voted(voter); prior != nil {
		return decision[Resolution]{}, interrupt.Errorf(interrupt.CodeAlreadyVoted, "%s already voted %s on interrupt %s", voter, prior.Action, in.ID)
	}
	d := in.Payload.Data
	// Only a caller authenticated to the host can be an override principal, never a token bearer.
	override := d.OverrideBypassesQuorum && p.Token == "" && slices.Contains(h.cfg.OverridePrincipals, p.Subject)
	release := false
	switch action {
	case interrupt.ActionRefine:
		release = true
	case interrupt.ActionAccept, interrupt.ActionEditAccept:
		tally.Approvals++
		release = override || tally.Approvals >= tally.Required
	case interrupt.ActionReject:
		tally.Rejections++
		switch d.RejectionPolicy {
		case interrupt.PolicyMajority:
			release = override || 2*tally.Rejections > tally.Required
		case interrupt.PolicySingleVeto, "":
			release = true
		default:
			return decision[Resolution]{}, fmt.Errorf("host: unknown rejection policy %q", d.RejectionPolicy)
		}
	default:
		return decision[Resolution]{}, fmt.Errorf("host: unhandled approval action %q", action)
	}
	vote := interrupt.Vote{
		NodeID: in.NodeID, InterruptID: in.ID, Principal: voter, Action: action, ResumeValue: value,
		Eligibility: elig, Override: override && release && action != interrupt.ActionRefine, Tally: tally,
	}
	if release {
		vote.ResumeValue = nil // interrupt.resolved carries it; readers see it in both
	}
	voted, err := runlog.Marshal(vote)
	if err != nil {
		return decision[Resolution]{}, err
	}
	events := []runlog.Event{{Type: interrupt.EventVoted, NodeID: in.NodeID, InterruptID: in.ID, Payload: voted}}
	res.Tally = &tally
	if release {
		events = append(events, resolveEvent(in, value))
		res.Status = interrupt.StatusResolved
	}
	return decision[Resolution]{events: events, answer: seqInto(res)}, nil
}

func seqInto(res Resolution) func(int64) Resolution {
	return func(seq int64) Resolution {
		res.Seq = seq
		return res
	}
}
