package host

import (
	"context"
	"encoding/json"
	"time"

	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// Endpoints keep the webhook endpoints of tenants (docs/engines.md, "Webhooks from providers"). The
// webhook-endpoints operations use them, and so do ingest (an event's endpoint) and an
// external-event request (the endpoint it names, or the tenant's only one).
type Endpoints interface {
	// CreateEndpoint stores e unless its tenant holds limit endpoints already
	// (webhook.ErrLimit), a bound that holds however many create at once. e.ID is new (the
	// caller draws it at random): what an id already held does is not said.
	CreateEndpoint(ctx context.Context, e webhook.Endpoint, limit int) error
	// Endpoint answers webhook.ErrNoEndpoint for an endpoint it does not hold.
	Endpoint(ctx context.Context, id string) (webhook.Endpoint, error)
	// Endpoints lists the ids of tenant's endpoints, in no order (none for a tenant with none);
	// one may be listed while its creation is under way, and so not be readable yet (or ever).
	Endpoints(ctx context.Context, tenant string) ([]string, error)
	// DeleteEndpoint forgets the endpoint and gives its place in its tenant's limit back; one it
	// does not hold is no error.
	DeleteEndpoint(ctx context.Context, id string) error
}

// Correlations are the storage that joins providers' events with the external-event interrupts waiting
// for them: one correlation slot per (tenant, endpoint, event type, correlation value), and
// answers to events kept outside a slot. Every slot write is a single conditional write; every
// waiter is re-validated against its run's log. Ingest and external-event requests use it. A
// slot key whose tenant is not an id (runlog.ValidID) answers runlog.ErrInvalidKey.
type Correlations interface {
	// Wait registers w at k (again is no error) and returns the event live there, or nil.
	Wait(ctx context.Context, k webhook.Key, w webhook.Waiter, now time.Time) (*webhook.Delivery, error)
	// Confirm writes w again unless an event is live at k, and then returns that event (nil when
	// none is); the write is ordered with every Deliver, so a waiter and an event never miss
	// each other.
	Confirm(ctx context.Context, k webhook.Key, w webhook.Waiter, now time.Time) (*webhook.Delivery, error)
	// Deliver keeps d at k unless another live event is kept there, and answers the slot as it
	// stands after the write: d delivered again finds itself kept, with its answer if settled.
	Deliver(ctx context.Context, k webhook.Key, d webhook.Delivery, now time.Time) (webhook.Slot, error)
	// Settle records d's answer (d.Answer) on the slot, if d is the event kept there, and forgets
	// the waiters done with; a slot that keeps another event, or none, is left as it is, with no
	// error.
	Settle(ctx context.Context, k webhook.Key, d webhook.Delivery, done []webhook.Waiter) error
	// Recorded is the answer Record kept for an event that no slot keeps, nil when none is.
	Recorded(ctx context.Context, endpointID, eventID string) (json.RawMessage, error)
	// Record keeps answer for the event until expires at least, unless one is kept already: the
	// first stays, and recording again is no error.
	Record(ctx context.Context, endpointID, eventID string, answer json.RawMessage, expires time.Time) error
}
