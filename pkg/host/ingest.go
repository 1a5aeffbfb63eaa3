package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// Outcomes of an ingested event.
const (
	// OutcomeResolved: the event resolved at least one waiting interrupt.
	OutcomeResolved = "resolved"
	// OutcomeBuffered: nothing waited; the event is kept for interrupts requested later.
	OutcomeBuffered = "buffered"
	// OutcomeDuplicate: a redelivery; nothing changed, and Matched repeats the first answer's.
	OutcomeDuplicate = "duplicate"
	// OutcomeRefused: the event was accepted but can resolve nothing (Detail says why).
	OutcomeRefused = "refused"
)

// Ingested is the answer to a verified provider event: always a 200, so the provider stops
// retrying it.
type Ingested struct {
	EventID string           `json:"eventId"`
	Outcome string           `json:"outcome"`
	Matched []webhook.Waiter `json:"matched"`
	Detail  string           `json:"detail,omitempty"`
}

// Ingest takes one delivery to an endpoint: verifies it on the raw bytes, finds its correlation
// value, keeps it in its correlation slot, and resolves every external-event interrupt of the
// tenant waiting there with the event body as resumeValue. A redelivery answers the first answer
// and changes nothing. Whatever the order in which an event and a request of its interrupt
// arrive, they are joined exactly once (Inbox.Confirm).
func (w *Webhooks) Ingest(ctx context.Context, endpointID string, headers map[string]string, body []byte) (Ingested, error) {
	h := w.h
	e, err := h.endpoints.get(ctx, h.endpointStore, endpointID, h.now())
	if errors.Is(err, webhook.ErrNoEndpoint) {
		return Ingested{}, interrupt.Errorf(interrupt.CodeNotFound, "no webhook endpoint %s", endpointID)
	}
	if err != nil {
		return Ingested{}, err
	}
	secrets, err := w.secrets.Get(ctx, endpointID)
	if err != nil {
		return Ingested{}, err
	}
	now := h.now()
	verifier := webhook.Providers[e.Provider]
	ev, err := verifier.Verify(headers, body, secrets, now)
	if errors.Is(err, webhook.ErrSignature) {
		if secrets, fresh, rerr := w.secrets.Reload(ctx, endpointID); rerr != nil {
			return Ingested{}, rerr
		} else if fresh {
			ev, err = verifier.Verify(headers, body, secrets, now)
		}
	}
	switch {
	case errors.Is(err, webhook.ErrSignature):
		return Ingested{}, interrupt.Errorf(interrupt.CodeSignatureInvalid, "the delivery is not signed with this endpoint's secrets within %s", webhook.Tolerance)
	case err != nil:
		return Ingested{}, interrupt.Invalid("the body is not a " + e.Provider + " event: a JSON object with its id and type")
	}
	// The body is the resumeValue of the interrupts waiting for it, checked against their schemas.
	if fields := interrupt.CheckNumbers(body, ""); fields != nil {
		return Ingested{}, interrupt.Invalid("the body holds a number beyond the host's bounds", fields...)
	}
	d := webhook.Delivery{EndpointID: e.ID, EventID: ev.ID, Body: body, ReceivedAt: now.UTC(), Expires: now.Add(h.cfg.InboxRetention).UTC()}
	value, ok := webhook.Correlate(body, e.Correlation)
	if !ok {
		if first, seen, err := h.recorded(ctx, d); seen || err != nil {
			return first, err
		}
		return h.record(ctx, d, Ingested{EventID: ev.ID, Outcome: OutcomeRefused, Matched: []webhook.Waiter{},
			Detail: "the event carries no correlation value at " + strings.Join(e.Correlation, ", ")})
	}
	k := webhook.Key{Tenant: e.Tenant, Endpoint: e.ID, EventType: ev.Type, Value: value}
	slot, err := h.correlations.Deliver(ctx, k, d, now)
	if err != nil {
		return Ingested{}, err
	}
	if slot.Event == nil { // the write keeps d or finds another live event: never neither
		return Ingested{}, fmt.Errorf("host: the slot of a %s event kept nothing: %w", ev.Type, interrupt.ErrUnavailable)
	}
	kept := slot.Event.Same(d)
	if kept && slot.Event.Answer != nil {
		return duplicate(slot.Event.Answer)
	}
	if !kept {
		if first, seen, err := h.recorded(ctx, d); seen || err != nil {
			return first, err
		}
	}
	res := Ingested{EventID: ev.ID, Outcome: OutcomeBuffered, Matched: []webhook.Waiter{}}
	var done []webhook.Waiter
	refused := 0
	for _, w := range slot.Waiters {
		switch outcome, err := h.deliverTo(ctx, k, w, body); {
		case err != nil:
			return Ingested{}, err
		case outcome == waiterResolved:
			res.Matched = append(res.Matched, w)
			done = append(done, w)
		case outcome == waiterGone:
			done = append(done, w)
		case outcome == waiterRefused:
			refused++
		}
	}
	switch {
	case len(res.Matched) > 0:
		res.Outcome = OutcomeResolved
	case refused > 0:
		res.Outcome, res.Detail = OutcomeRefused, "the event does not match the resumeSchema of the interrupts waiting for it; they wait on"
	case !kept:
		res.Outcome, res.Detail = OutcomeRefused, "an earlier event of this type and correlation ("+slot.Event.EventID+") is kept; interrupts requested later resolve with it"
	}
	if !kept {
		return h.record(ctx, d, res)
	}
	if d.Answer, err = runlog.Marshal(res); err != nil {
		return Ingested{}, err
	}
	return res, h.correlations.Settle(ctx, k, d, done)
}

// recorded is the answer recorded for d outside a slot, as a duplicate's, if there is one.
func (h *Host) recorded(ctx context.Context, d webhook.Delivery) (Ingested, bool, error) {
	answer, err := h.correlations.Recorded(ctx, d.EndpointID, d.EventID)
	if err != nil || answer == nil {
		return Ingested{}, false, err
	}
	res, err := duplicate(answer)
	return res, true, err
}

// record keeps the answer to an event that no slot keeps, so a redelivery gets it again.
func (h *Host) record(ctx context.Context, d webhook.Delivery, res Ingested) (Ingested, error) {
	answer, err := runlog.Marshal(res)
	if err != nil {
		return Ingested{}, err
	}
	return res, h.correlations.Record(ctx, d.EndpointID, d.EventID, answer, d.Expires)
}

func duplicate(first json.RawMessage) (Ingested, error) {
	var res Ingested
	if err := json.Unmarshal(first, &res); err != nil {
		return res, err
	}
	res.Outcome, res.Detail = OutcomeDuplicate, ""
	return res, nil
}

// What an event did to one waiter.
type waiterOutcome int

const (
	// waiterResolved: the event resolved it.
	waiterResolved waiterOutcome = iota
	// waiterGone: it no longer waits (resolved, expired, ended) or waits for something else.
	waiterGone
	// waiterRefused: it waits on, for an event its resumeSchema accepts.
	waiterRefused
	// waiterAhead: its request has not committed (yet, or ever): its own Confirm joins them.
	waiterAhead
)

// deliverTo resolves waiter w with the event body, re-validated against its run's log.
func (h *Host) deliverTo(ctx context.Context, k webhook.Key, w webhook.Waiter, body json.RawMessage) (waiterOutcome, error) {
	p := interrupt.Principal{Tenant: k.Tenant}
	var ahead bool
	_, err := h.resolve(ctx, p, resolveAim{runID: w.RunID, ref: runlog.Ref{Kind: runlog.RefInterrupt, Name: w.InterruptID}, find: func(st *runlog.State) (*runlog.Interrupt, error) {
		in := st.ByID(w.InterruptID)
		if in == nil {
			ahead = true
			return nil, interrupt.Errorf(interrupt.CodeNotFound, "interrupt %s is not in its run's log", w.InterruptID)
		}
		d := in.Payload.Data
		if in.NodeID != w.NodeID || in.Payload.Kind != interrupt.KindExternalEvent || in.Endpoint != k.Endpoint || d.EventType != k.EventType || d.Correlation != k.Value {
			return nil, interrupt.Errorf(interrupt.CodeConflict, "interrupt %s waits for another event", in.ID)
		}
		if status := in.StatusAt(h.now()); status != interrupt.StatusPending {
			return nil, interrupt.Errorf(interrupt.CodeAlreadyResolved, "interrupt %s is %s", in.ID, status)
		}
		return in, nil
	}}, nil, body)
	switch code := interrupt.ErrorCode(err); {
	case err == nil:
		return waiterResolved, nil
	case ahead || code == interrupt.CodeNotFound:
		return waiterAhead, nil
	case code == interrupt.CodeValidation:
		return waiterRefused, nil
	case code == interrupt.CodeAlreadyResolved, code == interrupt.CodeConflict, code == interrupt.CodePayloadTooLarge:
		return waiterGone, nil
	default:
		return 0, err
	}
}

// EndpointTTL is how long a function trusts an endpoint it read: a delivery to an endpoint
// deleted since is accepted for at most this long by a warm function.
const EndpointTTL = time.Minute

// endpointCache keeps the endpoints ingestion reads, so that a delivery costs no read of its
// endpoint on a warm function. Safe for concurrent use.
type endpointCache struct {
	mu sync.Mutex
	m  map[string]cachedEndpoint
}

type cachedEndpoint struct {
	e  webhook.Endpoint
	at time.Time
}

func (c *endpointCache) forget(id string) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}

func (c *endpointCache) get(ctx context.Context, l Endpoints, id string, now time.Time) (webhook.Endpoint, error) {
	c.mu.Lock()
	hit, ok := c.m[id]
	c.mu.Unlock()
	if ok && now.Sub(hit.at) < EndpointTTL {
		return hit.e, nil
	}
	e, err := l.Endpoint(ctx, id)
	if err != nil {
		return e, err
	}
	c.mu.Lock()
	if len(c.m) >= 1024 {
		clear(c.m)
	}
	c.m[id] = cachedEndpoint{e: e, at: now}
	c.mu.Unlock()
	return e, nil
}
