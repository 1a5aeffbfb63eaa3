package host

import (
	"context"

	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Delegations read what a delegate holds (delegation.Store): one Query (and a read per copy it
// finds), made only for a caller the rules do not admit in its own right.
type Delegations = delegation.HeldReader

// admit is in.Deciders.Admit for p, who learns the delegations it holds in force now when it
// may not decide in its own right: read once per decision (p.For is non-nil once read, empty
// for a caller who holds none), so that whoever the rules admit pays no read for them.
func (h *Host) admit(ctx context.Context, in *runlog.Interrupt, p *interrupt.Principal) (interrupt.Eligibility, error) {
	e, err := in.Deciders.Admit(*p)
	if err == nil || interrupt.ErrorCode(err) != interrupt.CodeNotEligible || p.Subject == "" || p.For != nil || h.delegations == nil {
		return e, err
	}
	held, herr := delegation.Held(ctx, h.delegations, p.Tenant, p.Subject, h.now())
	if herr != nil {
		return e, herr
	}
	p.For = append([]interrupt.Delegated{}, held...)
	if len(held) == 0 {
		return e, err
	}
	return in.Deciders.Admit(*p)
}

// admitted is admit as a page shows it: the delegation by which p decides in, if it decides
// in another's place, and why it may not, if it may not.
func (h *Host) admitted(ctx context.Context, in *runlog.Interrupt, p *interrupt.Principal) (*interrupt.Delegated, error) {
	e, err := h.admit(ctx, in, p)
	if err != nil {
		return nil, err
	}
	if e = in.Deciders.FreePlace(*p, e, in.Votes); e.OnBehalfOf == "" {
		return nil, nil
	}
	for _, d := range p.For {
		if d.Delegator == e.OnBehalfOf {
			return &d, nil
		}
	}
	return &interrupt.Delegated{Delegator: e.OnBehalfOf, Escalated: true}, nil
}
