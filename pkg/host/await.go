package host

import (
	"context"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// An external-event interrupt joins its provider event in its correlation slot, whichever comes
// first (README, "Webhooks from providers"):
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

func slotOf(tenant string, d interrupt.Data) webhook.Key {
	return webhook.Key{Tenant: tenant, EventType: d.EventType, Value: d.Correlation}
}

// await registers the interrupt about to be committed as a waiter, and resolves it in d's own
// commit with an event already kept, if the event passes the interrupt's resumeSchema.
func (h *Host) await(ctx context.Context, p interrupt.Principal, runID, nodeID, id string, payload interrupt.Payload, d *decision[requested]) error {
	event, err := h.log.Wait(ctx, slotOf(p.Tenant, payload.Data), webhook.Waiter{RunID: runID, NodeID: nodeID, InterruptID: id}, h.cfg.Now())
	if err != nil || event == nil {
		return err
	}
	in := &runlog.Interrupt{ID: id, NodeID: nodeID, Payload: payload}
	value, _, err := h.checkResume(in, p, event.Body)
	if err != nil {
		return nil // the kept event does not fit this interrupt: it waits for another
	}
	d.events = append(d.events, resolveEvent(in, value))
	d.answer.view.Status, d.answer.view.ResumeValue = interrupt.StatusResolved, value
	return nil
}

// confirm confirms a committed external-event interrupt's waiter, and resolves the interrupt
// with an event kept meanwhile.
func (h *Host) confirm(ctx context.Context, p interrupt.Principal, view InterruptView, payload interrupt.Payload) (InterruptView, error) {
	k := slotOf(p.Tenant, payload.Data)
	event, err := h.log.Confirm(ctx, k, webhook.Waiter{RunID: view.RunID, NodeID: view.NodeID, InterruptID: view.InterruptID}, h.cfg.Now())
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
	_, st, err := h.loadRun(ctx, p, view.RunID)
	if err != nil {
		return view, err
	}
	if in := st.ByID(view.InterruptID); in != nil {
		return h.view(view.RunID, in, h.cfg.Now()), nil
	}
	return view, nil
}
