package inmem

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Outbound is an in-memory outbound.Store (subscriptions, cursors, attempts, the retry index),
// held to package dynamo's behaviour by the suite of pkg/outbound/storetest, which both run. Safe
// for concurrent use.
type Outbound struct {
	mu       sync.Mutex
	subs     map[[2]string]outbound.Subscription
	cursors  map[[3]string]outbound.Cursor
	attempts map[[2]string][]storedAttempt
	retries  map[outbound.Retry]bool
	// mailed are the addresses each event reached, with the expiry of the mark
	mailed map[outbound.MailedKey]time.Time
	// mailHours count each tenant's messages by hour
	mailHours map[[2]string]int
	// asked are whom each email subscription asked about an interrupt: by tenant, subscription,
	// run and interrupt
	asked map[outbound.AskedKey]storedAsked
	// activities are the Teams activities each teams subscription posted of an interrupt
	activities map[outbound.AskedKey]storedActivity
	// writes counts the calls that change the store.
	writes int
}

// NewOutbound returns an empty store.
func NewOutbound() *Outbound {
	return &Outbound{
		subs: map[[2]string]outbound.Subscription{}, cursors: map[[3]string]outbound.Cursor{},
		attempts: map[[2]string][]storedAttempt{}, retries: map[outbound.Retry]bool{},
	}
}

// storedAttempt is an attempt with the expiry it is kept until.
type storedAttempt struct {
	outbound.Attempt
	expires time.Time
}

// validIDs reports whether every one of ids may be part of a key (runlog.ValidID), as package
// dynamo requires of the tenant, subscription and run ids it makes keys of.
func validIDs(ids ...string) bool {
	for _, id := range ids {
		if !runlog.ValidID(id) {
			return false
		}
	}
	return true
}

// CreateSubscription implements outbound.Store.
func (o *Outbound) CreateSubscription(_ context.Context, s outbound.Subscription, limit int) error {
	if !validIDs(s.Tenant, s.ID) {
		return runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	held := 0
	for k := range o.subs {
		if k[0] == s.Tenant {
			held++
		}
	}
	if held >= limit {
		return outbound.ErrLimit
	}
	s.Events = slices.Clone(s.Events)
	o.subs[[2]string{s.Tenant, s.ID}] = s
	o.writes++
	return nil
}

// Subscription implements outbound.Store.
func (o *Outbound) Subscription(_ context.Context, tenant, id string) (outbound.Subscription, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.subs[[2]string{tenant, id}]
	if !ok {
		return outbound.Subscription{}, outbound.ErrNoSubscription
	}
	s.Events = slices.Clone(s.Events)
	return s, nil
}

// DeleteSubscription implements outbound.Store.
func (o *Outbound) DeleteSubscription(_ context.Context, tenant, id string) error {
	if !validIDs(tenant, id) {
		return runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes++
	delete(o.subs, [2]string{tenant, id})
	return nil
}

// Subscriptions implements outbound.Store.
func (o *Outbound) Subscriptions(_ context.Context, tenant string) ([]outbound.Subscription, error) {
	if !validIDs(tenant) {
		return nil, runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []outbound.Subscription
	for k, s := range o.subs {
		if k[0] == tenant {
			s.Events = slices.Clone(s.Events)
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b outbound.Subscription) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Cursor implements outbound.Store.
func (o *Outbound) Cursor(_ context.Context, tenant, subscription, runID string) (outbound.Cursor, error) {
	fresh := outbound.Cursor{Tenant: tenant, Subscription: subscription, RunID: runID}
	if !validIDs(tenant, subscription) || !runlog.ValidRun(runID) {
		return fresh, runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	c, ok := o.cursors[[3]string{tenant, subscription, runID}]
	if !ok {
		return fresh, nil
	}
	return c, nil
}

// SaveCursor implements outbound.Store.
func (o *Outbound) SaveCursor(_ context.Context, c outbound.Cursor, _ time.Time) error {
	if !validIDs(c.Tenant, c.Subscription) || !runlog.ValidRun(c.RunID) {
		return runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	k := [3]string{c.Tenant, c.Subscription, c.RunID}
	if o.cursors[k].Version != c.Version {
		return outbound.ErrCursorMoved
	}
	o.writes++
	c.Version++
	o.cursors[k] = c
	return nil
}

// RecordAttempt implements outbound.Store: the attempts are kept in the order of their time,
// then event id, and one recorded again (the same time and event) is kept once, as package
// dynamo's sort keys do.
func (o *Outbound) RecordAttempt(_ context.Context, tenant, subscription string, a outbound.Attempt, expires time.Time) error {
	if _, _, _, ok := outbound.ParseEventID(a.EventID); !ok || !validIDs(tenant, subscription) {
		return runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes++
	k := [2]string{tenant, subscription}
	stored := storedAttempt{Attempt: a, expires: expires}
	if i, found := slices.BinarySearchFunc(o.attempts[k], stored, byTime); found {
		o.attempts[k][i] = stored
	} else {
		o.attempts[k] = slices.Insert(o.attempts[k], i, stored)
	}
	return nil
}

func byTime(a, b storedAttempt) int {
	if c := a.At.Compare(b.At); c != 0 {
		return c
	}
	return strings.Compare(a.EventID, b.EventID)
}

// Attempts implements outbound.Store: the newest first, none past its expiry.
func (o *Outbound) Attempts(_ context.Context, tenant, subscription string, limit int) ([]outbound.Attempt, error) {
	if !validIDs(tenant, subscription) {
		return nil, runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	all := o.attempts[[2]string{tenant, subscription}]
	out := make([]outbound.Attempt, 0, min(limit, len(all)))
	for i := len(all) - 1; i >= 0 && len(out) < limit; i-- {
		if !expired(all[i].expires) {
			out = append(out, all[i].Attempt)
		}
	}
	return out, nil
}

// Attempted implements outbound.Store: an attempt past its expiry is not kept.
func (o *Outbound) Attempted(_ context.Context, tenant, subscription, eventID string) (bool, error) {
	if _, _, _, ok := outbound.ParseEventID(eventID); !ok || !validIDs(tenant, subscription) {
		return false, runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.ContainsFunc(o.attempts[[2]string{tenant, subscription}], func(s storedAttempt) bool {
		return s.EventID == eventID && !expired(s.expires)
	}), nil
}

type storedAsked struct {
	outbound.Asked
	expires time.Time
}

// RecordAsked implements outbound.Store.
func (o *Outbound) RecordAsked(_ context.Context, tenant, subscription string, a outbound.Asked, expires time.Time) error {
	if !validIDs(tenant, subscription, a.RunID, a.InterruptID) {
		return runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.asked == nil {
		o.asked = map[outbound.AskedKey]storedAsked{}
	}
	o.writes++
	a.To = slices.Clone(a.To)
	o.asked[outbound.AskedKey{Tenant: tenant, Subscription: subscription, RunID: a.RunID, InterruptID: a.InterruptID}] = storedAsked{Asked: a, expires: expires}
	return nil
}

// Asked implements outbound.Store.
func (o *Outbound) Asked(_ context.Context, k outbound.AskedKey) (outbound.Asked, bool, error) {
	if !validIDs(k.Tenant, k.Subscription, k.RunID, k.InterruptID) {
		return outbound.Asked{}, false, runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	a, ok := o.asked[k]
	if !ok || expired(a.expires) {
		return outbound.Asked{}, false, nil
	}
	a.To = slices.Clone(a.To)
	return a.Asked, true, nil
}

// AskedInRun implements outbound.Store.
func (o *Outbound) AskedInRun(_ context.Context, tenant, subscription, runID string) ([]outbound.Asked, error) {
	if !validIDs(tenant, subscription, runID) {
		return nil, runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	out := []outbound.Asked{}
	for k, a := range o.asked {
		if k.Tenant == tenant && k.Subscription == subscription && k.RunID == runID && !expired(a.expires) {
			a.To = slices.Clone(a.To)
			out = append(out, a.Asked)
		}
	}
	slices.SortFunc(out, func(x, y outbound.Asked) int { return strings.Compare(x.InterruptID, y.InterruptID) })
	return out, nil
}

// DropAsked implements outbound.Store.
func (o *Outbound) DropAsked(_ context.Context, k outbound.AskedKey) error {
	if !validIDs(k.Tenant, k.Subscription, k.RunID, k.InterruptID) {
		return runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes++
	delete(o.asked, k)
	return nil
}

// Mailed implements outbound.Store.
func (o *Outbound) Mailed(_ context.Context, k outbound.MailedKey) (bool, error) {
	if _, _, _, ok := outbound.ParseEventID(k.EventID); !ok || !validIDs(k.Tenant, k.Subscription) {
		return false, runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	exp, ok := o.mailed[k]
	return ok && !expired(exp), nil
}

// MarkMailed implements outbound.Store.
func (o *Outbound) MarkMailed(_ context.Context, k outbound.MailedKey, expires time.Time) error {
	if _, _, _, ok := outbound.ParseEventID(k.EventID); !ok || !validIDs(k.Tenant, k.Subscription) {
		return runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mailed == nil {
		o.mailed = map[outbound.MailedKey]time.Time{}
	}
	o.writes++
	o.mailed[k] = expires
	return nil
}

// ScheduleRetry implements outbound.Store.
func (o *Outbound) ScheduleRetry(_ context.Context, r outbound.Retry) error {
	if !validIDs(r.Tenant, r.Subscription) || !runlog.ValidRun(r.RunID) {
		return runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes++
	r.At = r.At.UTC()
	o.retries[r] = true
	return nil
}

// DueRetries implements outbound.Store.
func (o *Outbound) DueRetries(_ context.Context, now time.Time, limit int) ([]outbound.Retry, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []outbound.Retry
	for r := range o.retries {
		if !r.At.After(now) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b outbound.Retry) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.Tenant+"#"+a.Subscription+"#"+a.RunID, b.Tenant+"#"+b.Subscription+"#"+b.RunID)
	})
	return out[:min(limit, len(out))], nil
}

// DropRetry implements outbound.Store.
func (o *Outbound) DropRetry(_ context.Context, r outbound.Retry) error {
	if !validIDs(r.Tenant, r.Subscription) || !runlog.ValidRun(r.RunID) {
		return runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes++
	r.At = r.At.UTC()
	delete(o.retries, r)
	return nil
}

// Writes counts the writes the store took so far (a delete of nothing counts too): a test that
// must write nothing reads it before and after.
func (o *Outbound) Writes() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.writes
}

// TakeMail implements outbound.Store.
func (o *Outbound) TakeMail(_ context.Context, tenant string, at time.Time, limit int) (bool, error) {
	if !validIDs(tenant) {
		return false, runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mailHours == nil {
		o.mailHours = map[[2]string]int{}
	}
	k := [2]string{tenant, at.UTC().Format(outbound.MailHour)}
	if o.mailHours[k] >= limit {
		return false, nil
	}
	o.writes++
	o.mailHours[k]++
	return true, nil
}

type storedActivity struct {
	teams.Posted
	expires time.Time
}

// PutTeamsActivity implements teams.Activities.
func (o *Outbound) PutTeamsActivity(_ context.Context, k outbound.AskedKey, p teams.Posted, expires time.Time) error {
	if !validIDs(k.Tenant, k.Subscription, k.RunID, k.InterruptID) {
		return runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.activities == nil {
		o.activities = map[outbound.AskedKey]storedActivity{}
	}
	o.writes++
	o.activities[k] = storedActivity{Posted: p, expires: expires}
	return nil
}

// TeamsActivity implements teams.Activities.
func (o *Outbound) TeamsActivity(_ context.Context, k outbound.AskedKey) (teams.Posted, bool, error) {
	if !validIDs(k.Tenant, k.Subscription, k.RunID, k.InterruptID) {
		return teams.Posted{}, false, runlog.ErrInvalidKey
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	a, ok := o.activities[k]
	if !ok || expired(a.expires) {
		return teams.Posted{}, false, nil
	}
	return a.Posted, true, nil
}
