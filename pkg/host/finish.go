package host

import (
	"context"
	"encoding/json"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// A run the MCP endpoint made for an agent that named none (Request.EndsRun) has no one else to
// end it: the host completes it once nothing of it is open, in the commit that closes the last
// of it, so that retention applies to it as to any ended run (docs/design.md, "Agents over
// MCP"). Its interrupts are open while pending, and an accepted call's while its receipt may
// still be redeemed. The rule is finishing's, and commit asks it of every commit, whichever
// surface closes an interrupt (a resolve, a token, the page, Slack, the sweep's expiry, a
// provider's event, a redemption); the sweep asks it again once a receipt expired unredeemed
// (lapse).

// endedByHost is the label the host's own end of a run carries (interrupt.Ended.By): no principal
// ended it.
const endedByHost = "host"

// Why the host completed a run it made (interrupt.Ended.Reason).
const (
	reasonClosed   = "its interrupt closed"
	reasonRedeemed = "its receipt was redeemed"
	reasonLapsed   = "its receipt expired"
)

// finishing is what the commit of events does to a run the host completes (runlog.Interrupt.
// EndsRun), st being the run before it: why the commit completes the run ("" when it does not),
// and the interrupts it accepts with a call, whose receipts need an entry in the due index at
// their expiry (lapse), since nothing else would happen then.
func finishing(st *runlog.State, events []runlog.Event, now time.Time) (why string, receipts []*runlog.Interrupt, err error) {
	if st.Ended != "" {
		return "", nil, nil
	}
	done := map[string]bool{}
	for _, e := range events {
		in := st.ByID(e.InterruptID)
		switch {
		case e.Type == interrupt.EventRunCancelled, e.Type == interrupt.EventRunCompleted:
			return "", nil, nil
		case in == nil || !in.EndsRun:
		case e.Type == interrupt.EventExpired:
			done[in.ID], why = true, reasonClosed
		case e.Type == interrupt.EventReceiptRedeemed:
			done[in.ID], why = true, reasonRedeemed
		case e.Type == interrupt.EventResolved:
			done[in.ID] = true
			if in.ToolCall == nil {
				why = reasonClosed
				break
			}
			var r interrupt.Resolved
			if err := json.Unmarshal(e.Payload, &r); err != nil {
				return "", nil, err
			}
			if in.ToolCall.Approved(r.ResumeValue) == nil {
				why = reasonClosed
				break
			}
			receipts = append(receipts, in)
		}
	}
	if why == "" || len(receipts) > 0 || open(st, done, now) {
		return "", receipts, nil
	}
	return why, receipts, nil
}

// open reports whether the run holds anything still open besides the interrupts done: an
// interrupt the log records pending (a checkpoint keeps every one), or the approved call of an
// interrupt the host completes its run for, unredeemed, whose receipt may still be redeemed at
// now (runlog.State.OpenReceipts, which a checkpoint keeps too, the interrupt archived or not).
func open(st *runlog.State, done map[string]bool, now time.Time) bool {
	for _, in := range st.Held() {
		if !done[in.ID] && in.Recorded() == interrupt.StatusPending {
			return true
		}
	}
	for id, expires := range st.OpenReceipts() {
		if !done[id] && now.UnixMilli() <= expires.UnixMilli() {
			return true
		}
	}
	return false
}

// lapsed reports whether the receipt of in's approved call no longer redeems at now, as
// RedeemReceipt judges it: past its expiry, to the millisecond.
func lapsed(in *runlog.Interrupt, now time.Time) bool {
	return now.UnixMilli() > in.DecidedAt().Add(in.ToolCall.ReceiptTTL()).UnixMilli()
}

// completion is the run.completed of a run the host completes, saying why.
func completion(why string) (runlog.Event, error) {
	return runlog.NewEvent(interrupt.EventRunCompleted, "", "", interrupt.Ended{By: endedByHost, Reason: why})
}

// finish makes d complete the run it closes the last of (finishing), and file the due entry of
// every receipt it grants. Ending is exactly once: the run.completed is in the commit that
// closes the last of the run, and an ended run takes no more commits.
func finish[T answer[T]](h *Host, k runlog.Key, st *runlog.State, d *decision[T]) error {
	why, receipts, err := finishing(st, d.events, h.now())
	if err != nil {
		return err
	}
	for _, in := range receipts {
		d.prepare = append(d.prepare, func(ctx context.Context, _ *decision[T], at time.Time) error {
			return h.deadlines.Schedule(ctx, receiptDue(k, in, at))
		})
	}
	if why == "" {
		return nil
	}
	ended, err := completion(why)
	if err != nil {
		return err
	}
	d.events, d.ends = append(d.events, ended), true
	return nil
}

// receiptDue is the due entry of the receipt of in's call, accepted by a commit at: due just
// past the receipt's expiry (the resolution's time and the call's receipt life), when it no
// longer redeems.
func receiptDue(k runlog.Key, in *runlog.Interrupt, at time.Time) runlog.Due {
	expires := time.UnixMilli(at.Add(in.ToolCall.ReceiptTTL()).UnixMilli())
	return runlog.Due{Tenant: k.Tenant, RunID: k.RunID, InterruptID: in.ID, Deadline: expires.Add(time.Millisecond).UTC(), Nudge: runlog.NudgeReceipt}
}

// lapse completes the run of the receipt d names once the receipt expired unredeemed, if the
// host completes that run and nothing else of it is open. It writes nothing otherwise: the
// redemption, or the commit that closed the last of the run, completed it; or the entry is of
// an acceptance whose commit lost its race (the one that landed filed its own) or has not
// landed yet (kept within SweepGrace, as an expiry's entry is).
func (h *Host) lapse(ctx context.Context, d runlog.Due, now time.Time) (swept, error) {
	k := runlog.Key{Tenant: d.Tenant, RunID: d.RunID}
	if !k.Valid() {
		return settled, nil
	}
	st, err := h.load(ctx, k, runlog.Ref{Kind: runlog.RefInterrupt, Name: d.InterruptID}, runlog.Ref{Kind: runlog.RefReceipt, Name: d.InterruptID})
	if err != nil {
		return settled, err
	}
	res, err := commit(ctx, h, k, st, "", func(st *runlog.State) (decision[expiry], error) {
		in := st.ByID(d.InterruptID)
		switch {
		case in == nil, in.Recorded() == interrupt.StatusPending:
			return decision[expiry]{answer: expiry{swept: unheld(d, now)}}, nil
		case st.Ended != "", !in.EndsRun, in.ApprovedCall() == nil, st.Redeemed(in.ID) != nil, !lapsed(in, now),
			open(st, map[string]bool{in.ID: true}, now):
			return decision[expiry]{answer: expiry{swept: settled}}, nil
		}
		ended, err := completion(reasonLapsed)
		return decision[expiry]{events: []runlog.Event{ended}, ends: true}, err
	})
	return res.swept, err
}
