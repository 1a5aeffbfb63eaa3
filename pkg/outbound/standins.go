package outbound

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// DelegationReader reads a principal's delegation (delegation.Store), answering
// delegation.ErrNotFound for one who has none.
type DelegationReader interface {
	Delegation(ctx context.Context, tenant, principal string) (delegation.Delegation, error)
}

// StandIn is a delegate a notice reaches in its delegator's place: who, for whom, until when.
type StandIn struct {
	Delegate, For string
	Until         time.Time
}

// standIns adds to n's audience, after it, the delegate of each principal of it whose
// delegation is in force now and reaches the interrupt (its kind, not requested by the
// delegate), as a principal of its own, once; and says for whom each is reached (n.StandIns),
// for the mail to tell them. One read per principal of the audience; a run read only where a
// delegation is in force and the event does not carry its request.
func (d *Deliverer) standIns(ctx context.Context, tenant string, c runlog.Commit, e runlog.Envelope, n *Notice) error {
	if d.Delegations == nil || e.InterruptID == "" {
		return nil
	}
	now := d.now()
	var in *runlog.Interrupt
	for _, r := range slices.Clone(n.Audience) {
		if r.Kind != interrupt.RefPrincipal {
			continue
		}
		del, err := d.Delegations.Delegation(ctx, tenant, r.Ref)
		switch {
		case errors.Is(err, delegation.ErrNotFound):
			continue
		case err != nil:
			return fmt.Errorf("%w: the delegation of %q: %w", errStore, r.Ref, err)
		case !del.InForce(now):
			continue
		}
		if in == nil {
			if in = runlog.RequestedIn(c, e.InterruptID); in == nil && d.Log != nil {
				st, err := d.standing(ctx, tenant, e.RunID)
				if err != nil {
					return fmt.Errorf("%w: the run: %w", errStore, err)
				}
				if st != nil {
					in = st.ByID(e.InterruptID)
				}
			}
			if in == nil {
				return nil
			}
		}
		stand := Recipient{Kind: interrupt.RefPrincipal, Ref: del.Delegate}
		if del.Delegate == in.RequestedBy || (len(del.Kinds) > 0 && !slices.Contains(del.Kinds, in.Payload.Kind)) || slices.Contains(n.Audience, stand) {
			continue
		}
		n.Audience = append(n.Audience, stand)
		n.StandIns = append(n.StandIns, StandIn{Delegate: del.Delegate, For: r.Ref, Until: del.Until})
	}
	return nil
}

// standInFor is the stand-in a mail to the principals of refs reaches, if it reaches one
// delegate alone.
func standInFor(n Notice, refs []Recipient) *StandIn {
	if len(refs) != 1 || refs[0].Kind != interrupt.RefPrincipal {
		return nil
	}
	for i, s := range n.StandIns {
		if s.Delegate == refs[0].Ref {
			return &n.StandIns[i]
		}
	}
	return nil
}
