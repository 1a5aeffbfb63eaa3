package host

import (
	"context"
	"errors"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// What one sweep may do (README, "Deadlines"). One invocation is bounded in minutes read,
// entries handled and time; the next carries on from the cursor, oldest minute first.
const (
	// SweepLookBack is how far back the first sweep of a deployment starts: due entries exist
	// only since requests file them, and the schedule starts with the deployment.
	SweepLookBack = time.Hour
	// MaxSweepMinutes bounds the minutes of the due index one sweep reads.
	MaxSweepMinutes = 120
	// MaxSweepEntries bounds the due entries one sweep handles.
	MaxSweepEntries = 500
	// SweepGrace keeps a minute open this long after it ends: a request files its due entry
	// before its commit, so an entry may land in a minute that has just ended.
	SweepGrace = 30 * time.Second
	// sweepMargin is left of an invocation's time when the sweep stops.
	sweepMargin = 3 * time.Second
	sweepPage   = 100
)

// SweepReport is what one sweep did, for its log line.
type SweepReport struct {
	// From and To are the cursor's minute before and after.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Entries is how many due entries it handled; Expired how many interrupt.expired it wrote
	// (the others were resolved, ended, or never committed).
	Entries int `json:"entries"`
	Expired int `json:"expired"`
	// CaughtUp is false when a bound stopped it before the present: the next sweep goes on.
	CaughtUp bool `json:"caughtUp"`
}

// Sweep records interrupt.expired for every interrupt whose deadline has passed, reading only
// the due index's minutes from the cursor's to the present. Each expiry is a conditional
// append, like a resolve: a resolve committed first makes it a no-op, one after it answers 409.
// Two sweeps at once write no expiry twice (the log says it is written), and only one of them
// moves the cursor. The cursor passes a minute only once it is closed (SweepGrace after its
// end) and swept to its end; later minutes are swept again until they close, which costs a
// re-read of their entries and never a second expiry.
func (h *Host) Sweep(ctx context.Context) (SweepReport, error) {
	now := h.cfg.Now().UTC()
	start, err := h.log.SweepCursor(ctx)
	if err != nil {
		return SweepReport{}, err
	}
	cur := start
	if cur.Version == 0 {
		cur.Minute = now.Add(-SweepLookBack).Truncate(time.Minute)
	}
	report := SweepReport{From: cur.Minute}
	present := now.Truncate(time.Minute)
	deadline, bounded := ctx.Deadline()
	moving := true // the minutes swept so far, from the cursor's, are all closed and finished
	err = func() error {
		for m, minutes := cur.Minute, 0; !m.After(present) && minutes < MaxSweepMinutes; m, minutes = m.Add(time.Minute), minutes+1 {
			after := ""
			if m.Equal(cur.Minute) {
				after = cur.After
			}
			for {
				if report.Entries == MaxSweepEntries || (bounded && time.Until(deadline) < sweepMargin) {
					return nil
				}
				limit := min(sweepPage, MaxSweepEntries-report.Entries)
				due, err := h.log.Due(ctx, m, after, limit)
				if err != nil {
					return err
				}
				finished := true
				for _, d := range due {
					if d.Deadline.After(now) {
						finished = false // the rest of the minute is not due yet
						break
					}
					act := h.expire
					if d.Seq > 0 {
						act = h.retain
					}
					written, err := act(ctx, d, now)
					if err != nil {
						return err
					}
					report.Entries++
					if written {
						report.Expired++
					}
					after = d.Position()
					if moving && m.Equal(cur.Minute) && closed(m, now) {
						cur.After = after
					}
				}
				if finished && len(due) == limit {
					continue // a full page: there may be more of the minute (or the budget ends)
				}
				if moving && finished && closed(m, now) {
					cur = runlog.SweepCursor{Minute: m.Add(time.Minute), Version: cur.Version}
				} else {
					moving = false
				}
				break
			}
		}
		return nil
	}()
	report.To = cur.Minute
	report.CaughtUp = err == nil && !cur.Minute.Add(time.Minute).Before(present)
	if cur != start {
		if merr := h.log.MoveSweep(ctx, start, cur); merr != nil && !errors.Is(merr, runlog.ErrSeqTaken) {
			err = errors.Join(err, merr)
		}
	}
	return report, err
}

// closed reports whether minute m can receive no more due entries at now.
func closed(m, now time.Time) bool { return !now.Before(m.Add(time.Minute + SweepGrace)) }

// expiry is the answer of one expiry: whether it wrote interrupt.expired.
type expiry struct{ written bool }

func (e expiry) atSeq(int64) expiry { return expiry{written: true} }

// expire records interrupt.expired for the interrupt d names, if the log still has it pending
// past its deadline; it writes nothing otherwise (d may be stale: resolved, ended, never
// committed).
func (h *Host) expire(ctx context.Context, d runlog.Due, now time.Time) (bool, error) {
	k := runlog.Key{Tenant: d.Tenant, RunID: d.RunID}
	if !k.Valid() {
		return false, nil
	}
	st, err := h.load(ctx, k)
	if err != nil {
		return false, err
	}
	res, err := commit(ctx, h, k, st, "", func(st *runlog.State) (decision[expiry], error) {
		in := st.ByID(d.InterruptID)
		if in == nil || in.Recorded() != interrupt.StatusPending || in.Deadline.IsZero() || in.Deadline.After(now) {
			return decision[expiry]{}, nil
		}
		payload, err := runlog.Marshal(map[string]any{
			"nodeId": in.NodeID, "interruptId": in.ID, "kind": in.Payload.Kind, "deadline": in.Deadline.UTC().Format(runlog.TimeFormat),
		})
		if err != nil {
			return decision[expiry]{}, err
		}
		// An expiry is always written, however large the run: like its end, it closes a wait.
		return decision[expiry]{events: []runlog.Event{{Type: interrupt.EventExpired, NodeID: in.NodeID, InterruptID: in.ID, Payload: payload}}, ends: true}, nil
	})
	return res.written, err
}

// retain gives every commit of the ended run d names the retention expiry, counted from the
// commit that ended it. An ended run takes no more commits, so its log can go whole.
func (h *Host) retain(ctx context.Context, d runlog.Due, _ time.Time) (bool, error) {
	k := runlog.Key{Tenant: d.Tenant, RunID: d.RunID}
	if !k.Valid() {
		return false, nil
	}
	st, err := h.load(ctx, k)
	if err != nil || st.Ended == "" || st.EndedSeq != d.Seq {
		return false, err
	}
	return false, h.log.Retain(ctx, k, st.Seq, st.LastAt.Add(h.cfg.Retention))
}
