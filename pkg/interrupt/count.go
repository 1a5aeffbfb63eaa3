package interrupt

import (
	"cmp"
	"fmt"
	"slices"
)

// Counted is what one approval vote does under the model: the tally after it, whether it
// releases the gate, and why when it is not the quorum's doing.
type Counted struct {
	Tally    Tally
	Released bool
	// Override is a release by an override principal's vote alone (Overrides).
	Override bool
	// Eligibility is what admitted the vote: Admit's, or for a delegate whose first place was
	// taken, the place it fills (OnBehalfOf).
	Eligibility Eligibility
	// Reason is ReasonQuorumUnreachable when a rejection released the gate because the quorum
	// could no longer be met; "" otherwise.
	Reason string
}

// Count judges one vote of p (accept, edit-accept, reject or refine), votes being those counted
// so far, after Admit let p decide (e, what it found): one vote per place and per person (a
// delegate's vote fills its delegator's place, e.OnBehalfOf; a second vote of a place, or of a
// person, is already_voted, whatever it says); the tally after it against the quorum; whether
// it releases the gate under the rejection policy (release); an override principal proven by
// a deliberate act, voting in its own right, releases it alone where the request allows
// (Overrides); and a rejection that leaves the quorum out of reach of those who may still vote
// releases it at once (Unreachable), rather than wait for votes that cannot come. overrides are
// the deployment's override principals.
func (d Deciders) Count(p Principal, e Eligibility, action Action, votes []Vote, overrides []string) (Counted, error) {
	voter := p.Voter()
	voted := func(who string) *Vote {
		if i := slices.IndexFunc(votes, func(v Vote) bool { return v.By(who) }); i >= 0 {
			return &votes[i]
		}
		return nil
	}
	e = d.FreePlace(p, e, votes)
	slot := cmp.Or(e.OnBehalfOf, voter)
	for _, who := range []string{slot, voter} {
		if prior := voted(who); prior != nil {
			if prior.OnBehalfOf != "" {
				return Counted{}, Errorf(CodeAlreadyVoted, "%s already voted %s for %s", prior.Principal, prior.Action, prior.OnBehalfOf)
			}
			return Counted{}, Errorf(CodeAlreadyVoted, "%s already voted %s", prior.Principal, prior.Action)
		}
	}
	override := e.OnBehalfOf == "" && d.Overrides(p, overrides)
	tally, released, err := release(d.Policy, d.Tally(votes), action, override)
	if err != nil {
		return Counted{}, err
	}
	c := Counted{Tally: tally, Released: released, Override: override && released && action != ActionRefine, Eligibility: e}
	// Only a rejection can leave the quorum out of reach (an approval adds what it takes away).
	votedOrVoting := func(who string) bool { return who == slot || voted(who) != nil }
	releasesAlone := func(who string) bool { return d.Bypass && slices.Contains(overrides, who) }
	if !released && action == ActionReject && d.Unreachable(tally.Approvals, votedOrVoting, releasesAlone) {
		c.Released, c.Reason = true, ReasonQuorumUnreachable
	}
	return c, nil
}

// FreePlace is where a vote of p, whom Admit admitted by e, goes given votes, those counted so
// far: e itself, unless it is a delegate's place already filled while another place p holds
// is free (Admit takes the first place the rules admit, not knowing the votes). Every surface
// asks it with Admit, so the page, a chat click and a resolve name the same place.
func (d Deciders) FreePlace(p Principal, e Eligibility, votes []Vote) Eligibility {
	taken := func(who string) bool { return slices.ContainsFunc(votes, func(v Vote) bool { return v.By(who) }) }
	if e.OnBehalfOf == "" || !taken(e.OnBehalfOf) || taken(p.Voter()) {
		return e
	}
	if other, ok := d.admitFor(p, taken); ok {
		return other
	}
	return e
}

// Tally counts votes, those counted so far, against the quorum: the one count of an approval's
// votes, which the log's fold and Count read.
func (d Deciders) Tally(votes []Vote) Tally {
	t := Tally{Required: max(d.Quorum, 1)}
	for _, v := range votes {
		switch v.Action {
		case ActionAccept, ActionEditAccept:
			t.Approvals++
		case ActionReject:
			t.Rejections++
		}
	}
	return t
}

// release counts one vote into tally and says whether it releases the gate: refine at once;
// accept and edit-accept once they reach the quorum; reject at once under single-veto (the
// default), past half the quorum under majority; an override at once.
func release(policy string, tally Tally, action Action, override bool) (Tally, bool, error) {
	switch action {
	case ActionRefine:
		return tally, true, nil
	case ActionAccept, ActionEditAccept:
		tally.Approvals++
		return tally, override || tally.Approvals >= tally.Required, nil
	case ActionReject:
		tally.Rejections++
		switch policy {
		case PolicyMajority:
			return tally, override || 2*tally.Rejections > tally.Required, nil
		case PolicySingleVeto, "":
			return tally, true, nil
		}
		return tally, false, fmt.Errorf("interrupt: unknown rejection policy %q", policy)
	}
	return tally, false, fmt.Errorf("interrupt: unhandled approval action %q", action)
}
