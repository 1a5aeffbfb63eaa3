// Package webhook verifies the signed events SaaS providers post to the host and reads what the
// host needs from them: the event's id and type, and its correlation value. Each provider is
// one small Verifier; another provider is one more file and its tests.
package webhook

import (
	"crypto/hmac"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/schema"
)

// Tolerance is how far a delivery's signed timestamp may be from now, either way: a captured
// delivery cannot be replayed later than this.
const Tolerance = 300 * time.Second

// ErrSignature refuses a delivery whose signature, signed timestamp or signature headers are not
// what its provider sends with one of the endpoint's secrets.
var ErrSignature = errors.New("webhook: the signature is not valid")

// ErrEvent refuses a verified delivery whose body is not an event the provider sends (not a JSON
// object, or without the id or type it always carries).
var ErrEvent = errors.New("webhook: the body is not a provider event")

// Event is what a verified delivery says of itself.
type Event struct {
	// ID identifies the event at its provider: a redelivery carries the same.
	ID string
	// Type is the provider's event type, matched against an interrupt's data.eventType.
	Type string
}

// Verifier checks one provider's signature on the raw body with any of the endpoint's secrets,
// then reads the event. headers are the request's, names lowercased.
type Verifier interface {
	Verify(headers map[string]string, body []byte, secrets []string, now time.Time) (Event, error)
	// CheckSecret refuses a secret the provider would never issue, when an endpoint is set up.
	CheckSecret(secret string) error
	// Correlation is where the provider's events carry a correlation value by default.
	Correlation() []string
}

// Providers are the providers an endpoint may name, by name.
var Providers = map[string]Verifier{
	"stripe":            Stripe{},
	"standard-webhooks": StandardWebhooks{},
}

// withinTolerance reads a Unix-seconds timestamp and checks it against now.
func withinTolerance(ts string, now time.Time) bool {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || strings.HasPrefix(ts, "+") {
		return false
	}
	d := now.Sub(time.Unix(sec, 0))
	return d <= Tolerance && d >= -Tolerance
}

// anyEqual compares every candidate MAC with every expected one, in constant time each, and does
// all the comparisons whatever matches, so timing tells nothing about which secret or signature.
func anyEqual(expected, candidates [][]byte) bool {
	ok := false
	for _, e := range expected {
		for _, c := range candidates {
			if hmac.Equal(e, c) {
				ok = true
			}
		}
	}
	return ok
}

// eventOf reads the id and type of a provider's JSON event body; id is "" when the provider
// carries it in a header instead.
func eventOf(body []byte, needID bool) (Event, error) {
	var e struct {
		ID   any `json:"id"`
		Type any `json:"type"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return Event{}, ErrEvent
	}
	id, _ := e.ID.(string)
	typ, _ := e.Type.(string)
	if typ == "" || (needID && id == "") {
		return Event{}, ErrEvent
	}
	return Event{ID: id, Type: typ}, nil
}

// Correlate finds an event's correlation value: the first of pointers (JSON Pointers into the
// body) that resolves to a non-empty string, or to a number (its text as written).
func Correlate(body []byte, pointers []string) (string, bool) {
	var doc any
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return "", false
	}
	for _, p := range pointers {
		if !ValidPointer(p) {
			continue
		}
		v, _ := schema.Resolve(doc, p)
		switch v := v.(type) {
		case string:
			if v != "" {
				return v, true
			}
		case json.Number:
			return v.String(), true
		}
	}
	return "", false
}

// ValidPointer reports whether p is a JSON Pointer (RFC 6901) that names a member below the root.
func ValidPointer(p string) bool {
	if !strings.HasPrefix(p, "/") || len(p) > 512 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return false
		}
	}
	return true
}

// Endpoint is where one provider account of a tenant posts its events: /webhooks/<ID>. Its
// secrets are kept apart, in a secret store, and never read back through the API.
type Endpoint struct {
	ID       string `json:"id"`
	Tenant   string `json:"-"`
	Provider string `json:"provider"`
	// Correlation lists the JSON Pointers tried, in order, for an event's correlation value.
	Correlation []string  `json:"correlation"`
	CreatedAt   time.Time `json:"createdAt"`
}

// Key names the correlation item that joins the events of one type and correlation value that
// one endpoint of a tenant receives with the external-event interrupts that wait on that
// endpoint for them. The endpoint is part of the key so that whoever holds one endpoint's
// secret can neither answer nor pre-seed a wait on another (docs/engines.md, "Webhooks from providers").
type Key struct {
	Tenant, Endpoint, EventType, Value string
}

// Waiter is an external-event interrupt registered at a Key, written before the commit that
// requests it (and so possibly never committed: it is re-validated against the run's log).
type Waiter struct {
	RunID       string `json:"runId"`
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
}

// Delivery is an accepted event as the correlation item keeps it: until Expires, a request of a
// matching interrupt is resolved with its body.
type Delivery struct {
	EndpointID string          `json:"endpointId"`
	EventID    string          `json:"eventId"`
	Body       json.RawMessage `json:"body"`
	ReceivedAt time.Time       `json:"receivedAt"`
	Expires    time.Time       `json:"expires"`
	// Answer is the answer given to the delivery, once it was fully handled: a redelivery gets
	// it again.
	Answer json.RawMessage `json:"answer,omitempty"`
}

// Same reports whether d and o are one delivery: one event, from one endpoint.
func (d Delivery) Same(o Delivery) bool {
	return d.EndpointID == o.EndpointID && d.EventID == o.EventID
}

// Slot is a correlation item as read: the event it keeps (nil when none is live) and the
// interrupts registered there.
type Slot struct {
	Event   *Delivery
	Waiters []Waiter
}

// ErrLimit refuses an endpoint to a tenant that holds as many as it may.
var ErrLimit = errors.New("webhook: the tenant holds as many endpoints as it may")

// ErrNoEndpoint is what a store answers for an endpoint it does not hold.
var ErrNoEndpoint = errors.New("webhook: no such endpoint")

// Live reports whether d is a kept event at now.
func (d *Delivery) Live(now time.Time) bool { return d != nil && now.Before(d.Expires) }
