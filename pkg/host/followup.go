package host

import (
	"context"
	"slices"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// followUp is how an interrupt of kind is followed up: the request's reminders and escalation,
// each the deployment's default when the request leaves it out; nil for none. A follow-up the
// request gives for a kind no person decides, or that is out of bounds, is refused.
func (h *Host) followUp(payload interrupt.Payload, asked interrupt.FollowUp) (*interrupt.FollowUp, error) {
	kind := payload.Kind
	if fields := asked.Check(""); len(fields) > 0 {
		return nil, interrupt.Invalid("reminders or escalation are not acceptable", fields...)
	}
	if !kind.Asked() {
		if asked.Reminders != nil || asked.Escalation != nil {
			return nil, interrupt.Invalid("only an interrupt a person decides is followed up",
				interrupt.FieldError{Path: "/reminders", Message: "must be omitted, as escalation must, for a " + string(kind) + " interrupt"})
		}
		return nil, nil
	}
	f := interrupt.FollowUp{Reminders: asked.Reminders, Escalation: asked.Escalation}
	if f.Reminders == nil {
		f.Reminders = h.cfg.FollowUp.Reminders
	}
	if f.Escalation == nil {
		f.Escalation = h.cfg.FollowUp.Escalation
	}
	if f.Reminders == nil && f.Escalation == nil {
		return nil, nil
	}
	if e := f.Escalation; e != nil && e.Delegate {
		// A handed place is judged as its approver named, with no memberships: it decides
		// only an approval whose deciders are named principals bound by no group or role.
		d := interrupt.NewDeciders(payload, nil, "", h.refKinds())
		if kind != interrupt.KindApproval || !d.Named() || d.Memberships() {
			return nil, interrupt.Invalid("reminders or escalation are not acceptable", interrupt.FieldError{Path: "/escalation/delegate",
				Message: "hands the places of the approvers approversList names on: only for an approval that names them and is bound by no group or role"})
		}
	}
	return &f, nil
}

// scheduleFollowUps files the due entries of an interrupt's first reminder and its escalation,
// before its commit (as its deadline's is: the sweep walks time forward, and an entry filed
// after the commit by something that may lag could land behind it). None falls at or past the
// interrupt's deadline: it would find it expired.
func (h *Host) scheduleFollowUps(ctx context.Context, k runlog.Key, id string, timeoutMs int64, f interrupt.FollowUp, at time.Time) error {
	var deadline time.Time
	if timeoutMs > 0 {
		deadline = at.Add(time.Duration(timeoutMs) * time.Millisecond)
	}
	file := func(d runlog.Due) error {
		if !deadline.IsZero() && !d.Deadline.Before(deadline) {
			return nil
		}
		return h.deadlines.Schedule(ctx, d)
	}
	if r := f.Reminders; r != nil {
		if err := file(runlog.Due{Tenant: k.Tenant, RunID: k.RunID, InterruptID: id, Deadline: at.Add(ms(r.AfterMs)), Nudge: runlog.NudgeRemind, Reminder: 1}); err != nil {
			return err
		}
	}
	if e := f.Escalation; e != nil {
		return file(runlog.Due{Tenant: k.Tenant, RunID: k.RunID, InterruptID: id, Deadline: at.Add(ms(e.AfterMs)), Nudge: runlog.NudgeEscalate})
	}
	return nil
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// nudge records the follow-up d stands for, if the interrupt is still pending and it was not
// recorded yet: interrupt.reminded to those who have not decided (and the next reminder's due
// entry, before the commit), or interrupt.escalated to the refs the escalation names. It writes
// nothing otherwise (d may be stale: resolved, expired, ended, recorded by an overlapping sweep).
func (h *Host) nudge(ctx context.Context, d runlog.Due, now time.Time) (swept, error) {
	k, st, err := h.dueRun(ctx, d)
	if err != nil || st == nil {
		return settled, err
	}
	res, err := commit(ctx, h, k, st, "", func(st *runlog.State) (decision[expiry], error) {
		in := st.ByID(d.InterruptID)
		switch {
		case in == nil:
			return decision[expiry]{answer: expiry{swept: unheld(d, now)}}, nil
		case in.StatusAt(now) != interrupt.StatusPending || in.FollowUp == nil:
			return decision[expiry]{answer: expiry{swept: settled}}, nil
		}
		f := *in.FollowUp
		switch {
		case d.Nudge == runlog.NudgeRemind && f.Reminders != nil && in.Reminded < d.Reminder && d.Reminder <= f.Reminders.Count:
			ev, err := runlog.NewEvent(interrupt.EventReminded, in.NodeID, in.ID, interrupt.Reminded{
				NodeID: in.NodeID, InterruptID: in.ID, Reminder: d.Reminder, Recipients: in.Deciders.Undecided(func(p string) bool { return in.Voted(p) != nil }),
			})
			dec := decision[expiry]{events: []runlog.Event{ev}}
			if d.Reminder < f.Reminders.Count {
				// The next is filed ahead of now whatever the sweep's lag: one filed behind its
				// cursor would never be walked, and every reminder after it would be lost.
				next := d
				next.Reminder = d.Reminder + 1
				next.Deadline = maxTime(d.Deadline.Add(ms(f.Reminders.EveryMs)), now.Add(ms(interrupt.MinFollowUpMs)))
				if in.Deadline.IsZero() || next.Deadline.Before(in.Deadline) {
					dec.prepare = append(dec.prepare, func(ctx context.Context, _ *decision[expiry], _ time.Time) error {
						return h.deadlines.Schedule(ctx, next)
					})
				}
			}
			return dec, err
		case d.Nudge == runlog.NudgeEscalate && f.Escalation != nil && !in.Escalated:
			ev, err := runlog.NewEvent(interrupt.EventEscalated, in.NodeID, in.ID, interrupt.Escalated{
				NodeID: in.NodeID, InterruptID: in.ID, To: slices.Clone(f.Escalation.To), Handed: handOn(in, f.Escalation, now),
			})
			return decision[expiry]{events: []runlog.Event{ev}}, err
		}
		return decision[expiry]{answer: expiry{swept: settled}}, nil
	})
	return res.swept, err
}

// handOn are the places an escalation that delegates hands on at now: each approver
// approversList names who has not voted, and is neither the requester nor the agent, to each
// principal the escalation goes to (a group or role is told, as without delegate). None when
// the escalation does not delegate.
func handOn(in *runlog.Interrupt, e *interrupt.Escalation, now time.Time) []interrupt.Handing {
	if !e.Delegate {
		return nil
	}
	var out []interrupt.Handing
	for _, r := range in.Deciders.Rules {
		if r.Kind != interrupt.RefPrincipal {
			continue
		}
		for _, who := range r.Refs {
			if who == in.Deciders.Requester || who == in.Deciders.Agent || in.Voted(who) != nil {
				continue
			}
			for _, to := range e.To {
				h := interrupt.Handing{Principal: who, To: to.Ref, At: now.UTC()}
				if to.Kind == interrupt.RefPrincipal && to.Ref != who && to.Ref != in.Deciders.Requester && !slices.Contains(out, h) {
					out = append(out, h)
				}
			}
		}
	}
	return out
}
