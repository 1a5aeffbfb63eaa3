package outbound

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
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
			return fmt.Errorf("%w: the delegation of %q: %w", ErrStore, r.Ref, err)
		case !del.InForce(now):
			continue
		}
		if in == nil {
			if in = runlog.RequestedIn(c, e.InterruptID); in == nil && d.Log != nil {
				st, err := d.standing(ctx, tenant, e.RunID)
				if err != nil {
					return fmt.Errorf("%w: the run: %w", ErrStore, err)
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
		// Nobody decides in a place that decides nothing: not the requester's, not the agent's
		// an escalation checks, nor what the delegate requested.
		if r.Ref == in.RequestedBy || r.Ref == in.Deciders.Agent || del.Delegate == in.RequestedBy || (len(del.Kinds) > 0 && !slices.Contains(del.Kinds, in.Payload.Kind)) || slices.Contains(n.Audience, stand) {
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

// standInLinks gives each stand-in of n the proof its delegator's link gives: a signed link of
// its own (a token deciding as the delegate, which the host judges, delegation and all, when it
// is used) where the delegator's is signed, else a place on the plain link, which signs them in.
// The delegate's link lasts as long as the delegator's.
func (l Links) standInLinks(ctx context.Context, s Subscription, c runlog.Commit, e runlog.Envelope, n *Notice) error {
	for _, si := range n.StandIns {
		stand := Recipient{Kind: interrupt.RefPrincipal, Ref: si.Delegate}
		i := slices.IndexFunc(n.Links, func(k Link) bool { return k.Principal != "" && k.Principal == si.For })
		if i < 0 || l.Keys == nil {
			if j := slices.IndexFunc(n.Links, func(k Link) bool { return k.Principal == "" }); j >= 0 {
				n.Links[j].For = append(slices.Clone(n.Links[j].For), stand)
			}
			continue
		}
		theirs := n.Links[i]
		exp, err := time.Parse(runlog.TimeFormat, theirs.ExpiresAt)
		if err != nil {
			return fmt.Errorf("outbound: the link of %q: %w", si.For, err)
		}
		claims := token.Claims{
			Tenant: s.Tenant, RunID: e.RunID, NodeID: e.NodeID, InterruptID: e.InterruptID,
			Intent: token.IntentResolve, Sub: si.Delegate, IssuedAt: c.At.UnixMilli(), ExpiresAt: exp.UnixMilli(),
		}
		claims.JTI = linkID(claims)
		tok, claims, err := token.Sign(ctx, l.Keys, claims)
		if err != nil {
			return err
		}
		n.Links = append(n.Links, Link{Principal: si.Delegate, URL: strings.TrimSuffix(l.BaseURL, "/") + "/approve/" + tok, ExpiresAt: time.UnixMilli(claims.ExpiresAt).UTC().Format(runlog.TimeFormat), For: []Recipient{stand}})
	}
	return nil
}
