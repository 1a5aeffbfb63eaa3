package inmem

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/interrupthost/interrupthost/pkg/outbound"
)

// Outbound is an in-memory outbound.Store (subscriptions, cursors, attempts, the retry index),
// held to package dynamo's behaviour by the contract test in package outbound. Safe for
// concurrent use.
type Outbound struct {
	mu       sync.Mutex
	subs     map[[2]string]outbound.Subscription
	cursors  map[[3]string]outbound.Cursor
	attempts map[[2]string][]outbound.Attempt
	retries  map[outbound.Retry]bool
	// writes counts the calls that change the store.
	writes int
}

// NewOutbound returns an empty store.
func NewOutbound() *Outbound {
	return &Outbound{
		subs: map[[2]string]outbound.Subscription{}, cursors: map[[3]string]outbound.Cursor{},
		attempts: map[[2]string][]outbound.Attempt{}, retries: map[outbound.Retry]bool{},
	}
}

// CreateSubscription implements outbound.Store.
func (o *Outbound) CreateSubscription(_ context.Context, s outbound.Subscription, limit int) error {
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
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes++
	delete(o.subs, [2]string{tenant, id})
	return nil
}

// Subscriptions implements outbound.Store.
func (o *Outbound) Subscriptions(_ context.Context, tenant string) ([]outbound.Subscription, error) {
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
	o.mu.Lock()
	defer o.mu.Unlock()
	c, ok := o.cursors[[3]string{tenant, subscription, runID}]
	if !ok {
		return outbound.Cursor{Tenant: tenant, Subscription: subscription, RunID: runID}, nil
	}
	return c, nil
}

// SaveCursor implements outbound.Store.
func (o *Outbound) SaveCursor(_ context.Context, c outbound.Cursor, _ time.Time) error {
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

// RecordAttempt implements outbound.Store.
func (o *Outbound) RecordAttempt(_ context.Context, tenant, subscription string, a outbound.Attempt, _ time.Time) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes++
	k := [2]string{tenant, subscription}
	o.attempts[k] = append(o.attempts[k], a)
	return nil
}

// Attempts implements outbound.Store.
func (o *Outbound) Attempts(_ context.Context, tenant, subscription string, limit int) ([]outbound.Attempt, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	all := o.attempts[[2]string{tenant, subscription}]
	out := make([]outbound.Attempt, 0, min(limit, len(all)))
	for i := len(all) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, all[i])
	}
	return out, nil
}

// Attempted implements outbound.Store.
func (o *Outbound) Attempted(_ context.Context, tenant, subscription, eventID string) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.ContainsFunc(o.attempts[[2]string{tenant, subscription}], func(a outbound.Attempt) bool { return a.EventID == eventID }), nil
}

// ScheduleRetry implements outbound.Store.
func (o *Outbound) ScheduleRetry(_ context.Context, r outbound.Retry) error {
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
