package host

import (
	"context"
	"encoding/json"
	"time"

	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// Endpoints keep the webhook endpoints of tenants (README, "Webhooks from providers"). The
// webhook-endpoints operations use them, and so do ingest (an event's endpoint) and an
// external-event request (the endpoint it names, or the tenant's only one).
type Endpoints interface {
	// CreateEndpoint stores e unless its tenant holds limit endpoints already
	// (webhook.ErrLimit), a bound that holds however many create at once.
	CreateEndpoint(ctx context.Context, e webhook.Endpoint, limit int) error
	// Endpoint answers webhook.ErrNoEndpoint for an endpoint it does not hold.
	Endpoint(ctx context.Context, id string) (webhook.Endpoint, error)
	// Endpoints lists the ids of tenant's endpoints, in no order; one may be listed while its
	// creation is under way, and so not be readable yet (or ever).
	Endpoints(ctx context.Context, tenant string) ([]string, error)
	DeleteEndpoint(ctx context.Context, id string) error
}

// Inbox is the storage that joins providers' events with the external-event interrupts waiting
// for them: one correlation slot per (tenant, endpoint, event type, correlation value), and
// answers to events kept outside a slot. Every slot write is a single conditional write; every
// waiter is re-validated against its run's log. Ingest and external-event requests use it.
type Inbox interface {
	// Wait registers w at k and returns the event live there, if any.
	Wait(ctx context.Context, k webhook.Key, w webhook.Waiter, now time.Time) (*webhook.Delivery, error)
	// Confirm writes w again unless an event is live at k, and then returns that event; the
	// write is ordered with every Deliver, so a waiter and an event never miss each other.
	Confirm(ctx context.Context, k webhook.Key, w webhook.Waiter, now time.Time) (*webhook.Delivery, error)
	// Deliver keeps d at k unless another live event is kept there, and answers the slot as it
	// stands after the write.
	Deliver(ctx context.Context, k webhook.Key, d webhook.Delivery, now time.Time) (webhook.Slot, error)
	// Settle records d's answer (d.Answer) on the slot, if d is the event kept there, and forgets
	// the waiters done with.
	Settle(ctx context.Context, k webhook.Key, d webhook.Delivery, done []webhook.Waiter) error
	// Recorded and Record keep the answer to an event that no slot keeps; the first stays.
	Recorded(ctx context.Context, endpointID, eventID string) (json.RawMessage, error)
	Record(ctx context.Context, endpointID, eventID string, answer json.RawMessage, expires time.Time) error
}
