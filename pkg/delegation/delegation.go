// Package delegation is approvers' delegations: a principal names a delegate to decide in
// their place for a period (leave, a trip), and while it is in force the delegate may decide
// what the principal may decide, as the principal's vote (docs/design.md, "Delegation"). The
// decider model judges a delegation (interrupt.Deciders.Admit); this package keeps them, says
// who may set one, and reads what a delegate holds at decision time, in one Query of the delegate's copies.
package delegation

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// ScopeManage sets and ends anyone's delegation: an administrator's, the scope that keeps the
// tenant's contacts (a person sets their own with interrupt.ScopeApprovalsRespond).
const ScopeManage = "contacts:manage"

// Bounds: a delegation lasts at most MaxWindow, its note at most MaxNote characters, a principal
// at most MaxRef; a delegation keeps its last MaxChanges changes.
const (
	MaxWindow  = 90 * 24 * time.Hour
	MaxNote    = 500
	MaxRef     = 256
	MaxChanges = 20
)

// askedKinds are the kinds a delegation may be limited to: those people are asked to decide.
var askedKinds = []interrupt.Kind{interrupt.KindApproval, interrupt.KindClarification, interrupt.KindLowConfidence, interrupt.KindConversationExchange}

// Delegation is Principal's delegation to Delegate from From until Until: the one a principal
// has (one delegate at a time), with who set it, when, and its changes.
type Delegation struct {
	Tenant    string    `json:"-"`
	Principal string    `json:"principal"`
	Delegate  string    `json:"delegate"`
	From      time.Time `json:"from"`
	Until     time.Time `json:"until"`
	// Kinds limit it to interrupts of these kinds; none: every kind.
	Kinds []interrupt.Kind `json:"kinds,omitempty"`
	Note  string           `json:"note,omitempty"`
	// Groups and Roles are the principal's memberships as their credentials stated them when
	// they set it themself: what the delegate may decide through them. One an administrator
	// set carries none, and passes on only what names the principal.
	Groups []string `json:"groups,omitempty"`
	Roles  []string `json:"roles,omitempty"`
	// SetBy and SetAt say who set it and when; EndedBy and EndedAt who ended it (DELETE) and
	// when, if anyone did.
	SetBy   string    `json:"setBy"`
	SetAt   time.Time `json:"setAt"`
	EndedBy string    `json:"endedBy,omitempty"`
	EndedAt time.Time `json:"endedAt,omitzero"`
	// Changes are its last MaxChanges changes, oldest first: the record of who set what, when.
	Changes []Change `json:"changes,omitempty"`
	// Version orders its writes: 1 for the first, one more for each change (Store.PutDelegation).
	Version int64 `json:"version"`
}

// Change is one change of a principal's delegation.
type Change struct {
	At       time.Time `json:"at"`
	By       string    `json:"by"`
	What     string    `json:"what"` // "set" or "ended"
	Delegate string    `json:"delegate"`
	Until    time.Time `json:"until"`
}

// InForce reports whether the delegation lets its delegate decide at now: not ended, and now
// within [From, Until).
func (d Delegation) InForce(now time.Time) bool {
	return d.EndedAt.IsZero() && !now.Before(d.From) && now.Before(d.Until)
}

// Held is the delegation as the decider model judges it.
func (d Delegation) Held() interrupt.Delegated {
	return interrupt.Delegated{Delegator: d.Principal, Groups: d.Groups, Roles: d.Roles, Kinds: d.Kinds, Until: d.Until}
}

// Errors of a Store.
var (
	// ErrNotFound: the principal has no delegation.
	ErrNotFound = errors.New("delegation: not found")
	// ErrConflict: the delegation changed since it was read (its version is not the one the
	// write expected); read it again.
	ErrConflict = errors.New("delegation: changed since read")
)

// Store keeps a tenant's delegations. Each method is safe for concurrent use; a tenant that is
// not a valid id answers runlog.ErrInvalidKey.
type Store interface {
	// Delegation is principal's delegation, in force or not, or ErrNotFound.
	Delegation(ctx context.Context, tenant, principal string) (Delegation, error)
	// PutDelegation writes d as d.Principal's, if its delegation's version is still
	// d.Version-1 (none for 1), else ErrConflict. prev is the delegation d replaces (its
	// delegate's read no longer finds it), zero for none.
	PutDelegation(ctx context.Context, d Delegation, prev Delegation) error
	// HeldBy are the delegations whose delegate is delegate now, in force or not, by
	// principal: the one Query of a decision by a delegate.
	HeldBy(ctx context.Context, tenant, delegate string) ([]Delegation, error)
	// Delegations are the tenant's, by principal.
	Delegations(ctx context.Context, tenant string) ([]Delegation, error)
}

// Recorder records a tenant's event (host.Host.RecordTenantEvent).
type Recorder interface {
	RecordTenantEvent(ctx context.Context, tenant, by, typ string, payload any) error
}

// record records d's change as the tenant's event typ: after the change is written, so an
// event never tells of a change not made. A failure to record is the caller's error (503),
// the change standing: a PUT again records the next version's, a DELETE again this one's. Two
// changes of one principal at once may record their events out of order: a receiver keeps the
// highest version it has seen of each principal's (DelegationChanged.Version).
func (b Book) record(ctx context.Context, typ string, d Delegation, by string) error {
	if b.Events == nil {
		return nil
	}
	return b.Events.RecordTenantEvent(ctx, d.Tenant, by, typ, interrupt.DelegationChanged{
		Principal: d.Principal, Delegate: d.Delegate, From: d.From, Until: d.Until, Kinds: d.Kinds, Note: d.Note, By: by, Version: d.Version,
	})
}

// Request is the body of PUT /delegations/{principal}.
type Request struct {
	Delegate string           `json:"delegate"`
	From     *time.Time       `json:"from,omitempty"`
	Until    time.Time        `json:"until"`
	Kinds    []interrupt.Kind `json:"kinds,omitempty"`
	Note     string           `json:"note,omitempty"`
}

// Book is the delegations' service: who may set and end which, the rules a delegation keeps,
// and what a delegate holds now.
type Book struct {
	Store Store
	// Events record each change as the tenant's event (delegation.set, delegation.ended:
	// host.Host.RecordTenantEvent), which subscriptions receive; nil records none.
	Events Recorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (b Book) now() time.Time {
	if b.Now != nil {
		return b.Now().UTC()
	}
	return time.Now().UTC()
}

// mayKeep reports whether caller may set or end principal's delegation: principal themself
// (a person who may respond), or an administrator.
func mayKeep(caller interrupt.Principal, principal string) error {
	switch {
	case caller.Holds(ScopeManage):
		return nil
	case caller.Subject == principal && caller.Subject != "" && caller.Holds(interrupt.ScopeApprovalsRespond):
		return nil
	}
	return interrupt.Errorf(interrupt.CodeForbidden, "only %s, or an administrator (%s), may change %s's delegation", principal, ScopeManage, principal)
}

// validRef reports whether ref can be a principal: 1 to MaxRef characters, no control
// characters.
func validRef(ref string) bool {
	return ref != "" && utf8.RuneCountInString(ref) <= MaxRef && !strings.ContainsFunc(ref, unicode.IsControl)
}

// Set makes r principal's delegation, replacing any, as caller: by principal themself, whose
// memberships it records, or by an administrator. 400 for a delegation to oneself, to a
// principal who has delegated for an overlapping time, of a window already past or longer
// than MaxWindow, or of an unknown kind.
func (b Book) Set(ctx context.Context, caller interrupt.Principal, principal string, r Request) (Delegation, error) {
	if err := mayKeep(caller, principal); err != nil {
		return Delegation{}, err
	}
	now := b.now()
	from := now
	if r.From != nil && r.From.After(now) {
		from = r.From.UTC() // a from already past begins now: its past decided nothing
	}
	until := r.Until.UTC()
	var fields []interrupt.FieldError
	bad := func(path, msg string) { fields = append(fields, interrupt.FieldError{Path: path, Message: msg}) }
	switch {
	case !validRef(principal):
		bad("/principal", "must be a principal of 1 to 256 characters")
	case !validRef(r.Delegate):
		bad("/delegate", "must be a principal of 1 to 256 characters")
	case r.Delegate == principal:
		bad("/delegate", "a principal cannot delegate to themself")
	case r.Delegate == caller.Subject:
		// An administrator names delegates; making themself one would let them decide
		// whatever anyone decides by one call of their own.
		bad("/delegate", "an administrator cannot name themself another's delegate: "+principal+" may, or another administrator")
	}
	switch {
	case r.Until.IsZero():
		bad("/until", "is required: a delegation ends")
	case !until.After(now):
		bad("/until", "is already past")
	case !until.After(from):
		bad("/until", "must be after from")
	case until.Sub(from) > MaxWindow:
		bad("/until", "must be at most 90 days after from")
	case from.After(now.Add(MaxWindow)):
		bad("/from", "must be at most 90 days from now")
	}
	for i, k := range r.Kinds {
		if !slices.Contains(askedKinds, k) {
			bad("/kinds/"+strconv.Itoa(i), "must be a kind people are asked to decide: approval, clarification, low-confidence or conversation.exchange")
		}
	}
	if utf8.RuneCountInString(r.Note) > MaxNote || strings.ContainsFunc(r.Note, func(c rune) bool { return unicode.IsControl(c) && c != '\n' }) {
		bad("/note", "must be at most 500 characters, no control characters but new lines")
	}
	if len(fields) > 0 {
		return Delegation{}, interrupt.Invalid("the delegation is not acceptable", fields...)
	}
	switch theirs, err := b.Store.Delegation(ctx, caller.Tenant, r.Delegate); {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return Delegation{}, err
	case theirs.EndedAt.IsZero() && theirs.From.Before(until) && from.Before(theirs.Until):
		return Delegation{}, interrupt.Invalid("the delegation is not acceptable", interrupt.FieldError{Path: "/delegate",
			Message: r.Delegate + " has delegated to " + theirs.Delegate + " until " + theirs.Until.Format(time.RFC3339) + ", a time this one overlaps"})
	}
	prev, err := b.Store.Delegation(ctx, caller.Tenant, principal)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Delegation{}, err
	}
	d := Delegation{
		Tenant: caller.Tenant, Principal: principal, Delegate: r.Delegate, From: from, Until: until,
		Kinds: slices.Clone(r.Kinds), Note: r.Note, SetBy: caller.Subject, SetAt: now, Version: prev.Version + 1,
		Changes: changed(prev.Changes, Change{At: now, By: caller.Subject, What: "set", Delegate: r.Delegate, Until: until}),
	}
	if caller.Subject == principal {
		d.Groups, d.Roles = slices.Clone(caller.Groups), slices.Clone(caller.Roles)
	}
	if err := b.Store.PutDelegation(ctx, d, prev); err != nil {
		return Delegation{}, conflict(err)
	}
	return d, b.record(ctx, interrupt.EventDelegationSet, d, caller.Subject)
}

// End ends principal's delegation at once, as caller (principal or an administrator): its
// delegate decides nothing more in principal's place; votes already cast stand. Ending one
// already ended answers it as it is and records its delegation.ended again (a retry after the
// event failed to record: the tenant's events are at least once, a version's event perhaps
// twice). 404 when it has none, or one that lapsed without being ended.
func (b Book) End(ctx context.Context, caller interrupt.Principal, principal string) (Delegation, error) {
	if err := mayKeep(caller, principal); err != nil {
		return Delegation{}, err
	}
	d, err := b.Get(ctx, caller, principal)
	if err != nil {
		return Delegation{}, err
	}
	now := b.now()
	switch {
	case !d.EndedAt.IsZero():
		return d, b.record(ctx, interrupt.EventDelegationEnded, d, d.EndedBy)
	case !now.Before(d.Until):
		return Delegation{}, interrupt.Errorf(interrupt.CodeNotFound, "%s has no delegation in force or to come", principal)
	}
	prev := d
	d.EndedBy, d.EndedAt, d.Version = caller.Subject, now, d.Version+1
	d.Changes = changed(d.Changes, Change{At: now, By: caller.Subject, What: "ended", Delegate: d.Delegate, Until: d.Until})
	if err := b.Store.PutDelegation(ctx, d, prev); err != nil {
		return Delegation{}, conflict(err)
	}
	return d, b.record(ctx, interrupt.EventDelegationEnded, d, caller.Subject)
}

// Get is principal's delegation, as caller may read it (principal or an administrator).
func (b Book) Get(ctx context.Context, caller interrupt.Principal, principal string) (Delegation, error) {
	if err := mayKeep(caller, principal); err != nil {
		return Delegation{}, err
	}
	d, err := b.Store.Delegation(ctx, caller.Tenant, principal)
	if errors.Is(err, ErrNotFound) {
		return Delegation{}, interrupt.Errorf(interrupt.CodeNotFound, "%s has no delegation", principal)
	}
	return d, err
}

// List are the caller's tenant's delegations: an administrator's list.
func (b Book) List(ctx context.Context, caller interrupt.Principal) ([]Delegation, error) {
	if !caller.Holds(ScopeManage) {
		return nil, interrupt.Errorf(interrupt.CodeForbidden, "the tenant's delegations are an administrator's (%s) to list", ScopeManage)
	}
	return b.Store.Delegations(ctx, caller.Tenant)
}

// HeldReader reads what a delegate holds (Store.HeldBy), all a decision needs of the store.
type HeldReader interface {
	HeldBy(ctx context.Context, tenant, delegate string) ([]Delegation, error)
}

// Held are the delegations delegate holds in force at now, as the decider model judges them
// (interrupt.Principal.For): one Query of the delegate's copies, and one read of each
// delegator's item a copy names (none for a caller who holds none).
func Held(ctx context.Context, s HeldReader, tenant, delegate string, now time.Time) ([]interrupt.Delegated, error) {
	if delegate == "" {
		return nil, nil
	}
	all, err := s.HeldBy(ctx, tenant, delegate)
	if err != nil {
		return nil, err
	}
	var out []interrupt.Delegated
	for _, d := range all {
		if d.Delegate == delegate && d.InForce(now) {
			out = append(out, d.Held())
		}
	}
	return out, nil
}

// changed is changes with c, the last MaxChanges of them.
func changed(changes []Change, c Change) []Change {
	out := append(slices.Clone(changes), c)
	if len(out) > MaxChanges {
		out = out[len(out)-MaxChanges:]
	}
	return out
}

// conflict is a store's error as the API answers it: a lost race is 409.
func conflict(err error) error {
	if errors.Is(err, ErrConflict) {
		return interrupt.Errorf(interrupt.CodeConflict, "the delegation changed meanwhile; read it and try again")
	}
	return err
}
