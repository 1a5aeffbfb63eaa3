package interrupt

import (
	"slices"
	"time"
)

// Delegated is a delegation a caller holds when it decides: Delegator named the caller to
// decide in their place until Until (docs/design.md, "Delegation"). The host reads the ones in
// force for the caller at decision time (Principal.For) and the model judges them (Admit): the
// caller may decide what Delegator may decide, as Delegator's vote. Nothing passes on: a
// delegate's own delegations are never read for what it holds for others.
type Delegated struct {
	Delegator string
	// Groups and Roles are the delegator's memberships as their credentials stated them when
	// they set the delegation; one an administrator set carries none, and passes on what names
	// the delegator alone.
	Groups []string
	Roles  []string
	// Kinds limit it to interrupts of these kinds; none: every kind.
	Kinds []Kind
	Until time.Time
	// Escalated marks a hand-over an escalation made of one interrupt (Deciders.Handed), not
	// a person's delegation.
	Escalated bool
}

// covers reports whether the delegation reaches an interrupt of kind k.
func (d Delegated) covers(k Kind) bool { return len(d.Kinds) == 0 || slices.Contains(d.Kinds, k) }

// Handing is one approver's place an escalation handed to one of its targets (an
// interrupt.escalated with delegate): from At, To decides in Principal's place, as Principal's
// vote, on this interrupt alone.
type Handing struct {
	Principal string    `json:"principal"`
	To        string    `json:"to"`
	At        time.Time `json:"at"`
}

// delegations are what p may decide for others on this interrupt: the delegations it holds
// (p.For) and the places the interrupt's escalation handed it, in that order.
func (d Deciders) delegations(p Principal) []Delegated {
	out := slices.Clone(p.For)
	for _, h := range d.Handed {
		if h.To == p.Subject {
			out = append(out, Delegated{Delegator: h.Principal, Escalated: true})
		}
	}
	return out
}

// admitFor is Admit for a delegate: the first delegation that reaches the interrupt whose
// delegator the rules admit, judged as the delegator with the memberships the delegation
// recorded, its eligibility naming the delegator (OnBehalfOf). A delegate never decides what
// its delegator requested, nor what the delegator's own delegations hold (they are not read).
// taken, when set, skips the places already voted in (Count's second look).
func (d Deciders) admitFor(p Principal, taken func(string) bool) (Eligibility, bool) {
	for _, del := range d.delegations(p) {
		if del.Delegator == "" || del.Delegator == p.Subject || del.Delegator == d.Requester || !del.covers(d.Kind) ||
			(taken != nil && taken(del.Delegator)) {
			continue
		}
		as := Principal{Subject: del.Delegator, Tenant: p.Tenant, Via: p.Via}
		if p.Via.Memberships() {
			// The delegator's memberships pass on only to a proof that could carry memberships
			// (a JWT, a session): a link or a click decides only what names the delegator.
			as.Groups, as.Roles = del.Groups, del.Roles
		}
		// An open approval admits the delegate in their own right (Admit), so a delegation
		// is never the reason for an "open" admission.
		if e, err := d.admitSelf(as); err == nil && e.Via != "open" {
			e.OnBehalfOf = del.Delegator
			return e, true
		}
	}
	return Eligibility{}, false
}
