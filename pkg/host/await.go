package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// An external-event interrupt joins its provider event in its correlation slot, whichever comes
// first (docs/engines.md, "Webhooks from providers"). The slot is its endpoint's: the request names the
// endpoint (or the tenant holds one), and only that endpoint's events reach the interrupt.
//
//  1. before its commit, the request registers a waiter in the slot (await); if an event is
//     kept there, the request's own commit resolves the interrupt with it;
//  2. after its commit, it confirms the waiter with a write conditional on no event being kept
//     (confirm); an event kept in between makes the write fail, and the request resolves the
//     interrupt with that event itself.
//
// Deliver, the event's write, is ordered with that conditional write: an event written before
// it is seen by the confirmation, and one written after it sees a committed interrupt among the
// waiters. Both sides resolve through the run log's conditional append, so the join happens
// exactly once.

func slotOf(tenant, endpoint string, d interrupt.Data) webhook.Key {
	return webhook.Key{Tenant: tenant, Endpoint: endpoint, EventType: d.EventType, Value: d.Correlation}
}

// sourceOf is the endpoint an external-event interrupt of tenant waits on: named, it must be one
// of the tenant's; omitted, the tenant's only one, or none when it holds none (the interrupt
// then waits for a callback or a resolve by run). Omitted while the tenant holds several, it is
// refused: which one the event comes from is the requester's to say.
func (h *Host) sourceOf(ctx context.Context, tenant, named string) (string, error) {
	if named != "" {
		e, err := h.endpoints.get(ctx, h.endpointStore, named, h.now())
		if errors.Is(err, webhook.ErrNoEndpoint) || (err == nil && e.Tenant != tenant) {
			return "", interrupt.Invalid("the tenant holds no webhook endpoint "+named,
				interrupt.FieldError{Path: "/endpoint", Message: "must name one of the tenant's webhook endpoints"})
		}
		return e.ID, err
	}
	ids, err := h.endpointStore.Endpoints(ctx, tenant)
	if err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", nil
	case 1:
		if _, err := h.endpoints.get(ctx, h.endpointStore, ids[0], h.now()); errors.Is(err, webhook.ErrNoEndpoint) {
			return "", nil // listed while its creation failed or is under way
		} else if err != nil {
			return "", err
		}
		return ids[0], nil
	}
	return "", interrupt.Invalid(fmt.Sprintf("the tenant holds %d webhook endpoints: the request names the one its event comes from", len(ids)),
		interrupt.FieldError{Path: "/endpoint", Message: "is required while the tenant holds more than one webhook endpoint"})
}

// await registers in, the interrupt of runID about to be committed (its id, node, endpoint and
// payload), as a waiter at its endpoint's slot, and resolves it in d's own commit with an event
// already kept, if the event passes the interrupt's resumeSchema.
func (h *Host) await(ctx context.Context, p interrupt.Principal, runID string, in *runlog.Interrupt, d *decision[requested]) error {
	event, err := h.correlations.Wait(ctx, slotOf(p.Tenant, in.Endpoint, in.Payload.Data), webhook.Waiter{RunID: runID, NodeID: in.NodeID, InterruptID: in.ID}, h.now())
	if err != nil || event == nil {
		return err
	}
	value, _, err := h.checkResume(in, p, event.Body)
	if err != nil {
		return nil // the kept event does not fit this interrupt: it waits for another
	}
	resolved, err := resolveEvent(in, value)
	if err != nil {
		return err
	}
	d.events = append(d.events, resolved)
	d.answer.view.Status, d.answer.view.ResumeValue = interrupt.StatusResolved, value
	return nil
}

// confirm confirms a committed external-event interrupt's waiter, and resolves the interrupt
// with an event kept meanwhile.
func (h *Host) confirm(ctx context.Context, p interrupt.Principal, view InterruptView, in *runlog.Interrupt) (InterruptView, error) {
	k := slotOf(p.Tenant, in.Endpoint, in.Payload.Data)
	event, err := h.correlations.Confirm(ctx, k, webhook.Waiter{RunID: view.RunID, NodeID: view.NodeID, InterruptID: view.InterruptID}, h.now())
	if err != nil || event == nil {
		return view, err
	}
	switch outcome, err := h.deliverTo(ctx, k, webhook.Waiter{RunID: view.RunID, NodeID: view.NodeID, InterruptID: view.InterruptID}, event.Body); {
	case err != nil:
		return view, err
	case outcome == waiterResolved, outcome == waiterGone:
		return h.viewNow(ctx, p, view)
	}
	return view, nil
}

// viewNow reads the interrupt of view as the log says it stands now.
func (h *Host) viewNow(ctx context.Context, p interrupt.Principal, view InterruptView) (InterruptView, error) {
	_, st, err := h.loadRun(ctx, p, view.RunID, runlog.Ref{Kind: runlog.RefInterrupt, Name: view.InterruptID})
	if err != nil {
		return view, err
	}
	if in := st.ByID(view.InterruptID); in != nil {
		return h.view(view.RunID, in, h.now()), nil
	}
	return view, nil
}
