package inmem

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// slot is a correlation item: the kept event and the waiters in the order they registered.
type slot struct {
	event   *webhook.Delivery
	waiters []webhook.Waiter
}

// CreateEndpoint stores e.
func (l *Store) CreateEndpoint(_ context.Context, e webhook.Endpoint, limit int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := 0
	for _, other := range l.endpoints {
		if other.Tenant == e.Tenant {
			held++
		}
	}
	if held >= limit {
		return webhook.ErrLimit
	}
	e.Correlation = slices.Clone(e.Correlation)
	l.endpoints[e.ID] = e
	return nil
}

// Endpoint reads the endpoint id, or webhook.ErrNoEndpoint.
func (l *Store) Endpoint(_ context.Context, id string) (webhook.Endpoint, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.endpoints[id]
	if !ok {
		return webhook.Endpoint{}, webhook.ErrNoEndpoint
	}
	e.Correlation = slices.Clone(e.Correlation)
	return e, nil
}

// Endpoints lists the ids of tenant's endpoints.
func (l *Store) Endpoints(_ context.Context, tenant string) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for id, e := range l.endpoints {
		if e.Tenant == tenant {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// DeleteEndpoint forgets the endpoint id.
func (l *Store) DeleteEndpoint(_ context.Context, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.endpoints, id)
	return nil
}

// Wait registers w at k and returns the event live there, if any.
func (l *Store) Wait(_ context.Context, k webhook.Key, w webhook.Waiter, now time.Time) (*webhook.Delivery, error) {
	if !runlog.ValidID(k.Tenant) {
		return nil, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.slot(k)
	if !slices.Contains(s.waiters, w) {
		s.waiters = append(s.waiters, w)
	}
	return live(s.event, now), nil
}

// Confirm answers the event live at k, if any; when there is none, w stays registered.
func (l *Store) Confirm(_ context.Context, k webhook.Key, w webhook.Waiter, now time.Time) (*webhook.Delivery, error) {
	if !runlog.ValidID(k.Tenant) {
		return nil, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.slot(k)
	if e := live(s.event, now); e != nil {
		return e, nil
	}
	if !slices.Contains(s.waiters, w) {
		s.waiters = append(s.waiters, w)
	}
	return nil, nil
}

// Deliver keeps d at k unless another live event is kept there, and answers the slot.
func (l *Store) Deliver(_ context.Context, k webhook.Key, d webhook.Delivery, now time.Time) (webhook.Slot, error) {
	if !runlog.ValidID(k.Tenant) {
		return webhook.Slot{}, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.slot(k)
	if live(s.event, now) == nil {
		d.Answer = nil
		s.event = copyDelivery(&d)
	}
	waiters := slices.SortedFunc(slices.Values(s.waiters), func(a, b webhook.Waiter) int { return strings.Compare(a.InterruptID, b.InterruptID) })
	return webhook.Slot{Event: live(s.event, now), Waiters: waiters}, nil
}

// Settle records d's answer on the slot, if d is still the event kept there, and forgets the
// waiters done with.
func (l *Store) Settle(_ context.Context, k webhook.Key, d webhook.Delivery, done []webhook.Waiter) error {
	if !runlog.ValidID(k.Tenant) {
		return runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.slots[k]
	if !ok || s.event == nil || !s.event.Same(d) {
		return nil
	}
	s.event = copyDelivery(&d)
	s.waiters = slices.DeleteFunc(s.waiters, func(w webhook.Waiter) bool { return slices.Contains(done, w) })
	return nil
}

// Recorded is the answer recorded for an event delivered to an endpoint, outside a slot.
func (l *Store) Recorded(_ context.Context, endpointID, eventID string) (json.RawMessage, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.records[[2]string{endpointID, eventID}]), nil
}

// Record keeps the answer given to an event delivered to an endpoint, outside a slot.
func (l *Store) Record(_ context.Context, endpointID, eventID string, answer json.RawMessage, _ time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.records[[2]string{endpointID, eventID}]; !ok {
		l.records[[2]string{endpointID, eventID}] = slices.Clone(answer)
	}
	return nil
}

func (l *Store) slot(k webhook.Key) *slot {
	s, ok := l.slots[k]
	if !ok {
		s = &slot{}
		l.slots[k] = s
	}
	return s
}

func live(d *webhook.Delivery, now time.Time) *webhook.Delivery {
	if !d.Live(now) {
		return nil
	}
	return copyDelivery(d)
}

func copyDelivery(d *webhook.Delivery) *webhook.Delivery {
	c := *d
	c.Body, c.Answer = slices.Clone(d.Body), slices.Clone(d.Answer)
	return &c
}
