// Package channel is what every chat channel shares (the channels are its sub-packages:
// channel/slack, channel/teams): who a click from a chat account may decide as. A chat account
// proves a person of the chat service, not a principal: the tenant's contacts map accounts to
// principals, and a click decides only as an approver the request names, or as the delegate of
// one, whose contact names that account (docs/design.md, "Channels", "Delegation").
package channel

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// ContactReader reads one contact of a tenant (contacts.Store).
type ContactReader interface {
	Contact(ctx context.Context, tenant, kind, ref string) (contacts.Contact, error)
}

// DelegationReader reads a principal's delegation (delegation.Store), answering
// delegation.ErrNotFound for one who has none.
type DelegationReader interface {
	Delegation(ctx context.Context, tenant, principal string) (delegation.Delegation, error)
}

// maxReads bounds the contacts and delegations one click reads at once.
const maxReads = 8

// Clickers are the principals a click from a chat account may decide d's interrupt as: those
// of its approversList, and the delegate of each whose delegation is not ended (delegations
// nil: none), whose contact names the account (owns). Only their contacts and delegations are
// read, at most twice the list's length, concurrently. None means the account decides nothing;
// more than one, that a click cannot say which person it is. Whether a delegation is in force,
// and reaches the interrupt, is the host's to judge when the click is cast.
func Clickers(ctx context.Context, c ContactReader, delegations DelegationReader, tenant string, d interrupt.Deciders, owns func(contacts.Contact) bool) ([]string, error) {
	var refs []string
	for _, r := range d.Rules {
		if r.Kind == interrupt.RefPrincipal {
			refs = r.Refs
		}
	}
	refs, err := withDelegates(ctx, delegations, tenant, refs)
	if err != nil {
		return nil, err
	}
	found := make([]bool, len(refs))
	errs := make([]error, len(refs))
	var wg sync.WaitGroup
	limit := make(chan struct{}, maxReads)
	for i, ref := range refs {
		if !(contacts.Key{Kind: contacts.KindPrincipal, Ref: ref}).Valid() {
			continue
		}
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			ct, err := c.Contact(ctx, tenant, contacts.KindPrincipal, ref)
			if err != nil && !errors.Is(err, contacts.ErrNotFound) {
				errs[i] = err
			}
			found[i] = err == nil && owns(ct)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var who []string
	for i, ok := range found {
		if ok && !slices.Contains(who, refs[i]) {
			who = append(who, refs[i])
		}
	}
	return who, nil
}

// withDelegates is refs and, after them, the delegate of each whose delegation is not ended
// (one read each, concurrently), each once.
func withDelegates(ctx context.Context, delegations DelegationReader, tenant string, refs []string) ([]string, error) {
	if delegations == nil {
		return refs, nil
	}
	delegates := make([]string, len(refs))
	errs := make([]error, len(refs))
	var wg sync.WaitGroup
	limit := make(chan struct{}, maxReads)
	for i, ref := range refs {
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			del, err := delegations.Delegation(ctx, tenant, ref)
			switch {
			case errors.Is(err, delegation.ErrNotFound):
			case err != nil:
				errs[i] = err
			case del.EndedAt.IsZero():
				delegates[i] = del.Delegate
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := slices.Clone(refs)
	for _, d := range delegates {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// Refusal is what a chat tells a clicker the host refused their click with, in words: err is
// the host's (an *interrupt.Error), closed says how a closed request ended ("accepted by bob";
// "" says nothing more), voted is the vote that already fills the clicker's place, if known.
// ok is false for an error of the host's own (a store's), which no words excuse: the channel
// answers it as a failure.
func Refusal(err error, closed string, voted *interrupt.Vote) (words string, ok bool) {
	var e *interrupt.Error
	if !errors.As(err, &e) {
		return "", false
	}
	switch e.Code {
	case interrupt.CodeExpired:
		return "This request passed its deadline without a decision; nothing was recorded.", true
	case interrupt.CodeAlreadyResolved:
		if closed != "" {
			return "This request is closed (" + closed + "); nothing was recorded.", true
		}
		return "This request is closed; nothing was recorded.", true
	case interrupt.CodeNotFound:
		return "This request no longer exists; nothing was recorded.", true
	case interrupt.CodeAlreadyVoted:
		if voted != nil {
			return "You (" + voted.Principal + ") already voted " + string(voted.Action) + " on this request; a vote counts once.", true
		}
		return "You already voted on this request; a vote counts once.", true
	case interrupt.CodeNotEligible, interrupt.CodeForbidden, interrupt.CodeValidation, interrupt.CodeConflict:
		return strings.TrimSuffix(e.Message, ".") + "; nothing was recorded.", true
	}
	return "", false
}
