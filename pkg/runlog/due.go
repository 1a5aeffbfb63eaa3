package runlog

import (
	"fmt"
	"slices"
	"time"
)

// Due is an entry of the due index: an interrupt with a deadline, filed under the minute of
// its deadline so that the expiry sweep reads only the minutes that have passed. It is written
// before the commit that requests the interrupt, so it may name an interrupt that never was, or
// that was resolved since: the sweep re-validates every entry against the run's log.
type Due struct {
	Tenant      string
	RunID       string
	InterruptID string
	Deadline    time.Time
	// Seq, on a retention entry (InterruptID ""), is the commit that ended the run: the sweep
	// gives every commit of the run the same expiry, the retention period after it.
	Seq int64
	// Nudge, on a follow-up entry, is what falls due then: NudgeRemind (reminder number
	// Reminder, from 1) or NudgeEscalate; on a receipt's entry NudgeReceipt; "" for the
	// interrupt's own deadline.
	Nudge    string
	Reminder int
}

// The follow-ups a due entry may stand for (Due.Nudge). NudgeReceipt falls due once the
// receipt of an approved call expired (Deadline just past its expiry): a run made for the
// approval (Event.EndsRun) whose receipt was never redeemed completes then.
const (
	NudgeRemind   = "remind"
	NudgeEscalate = "escalate"
	NudgeReceipt  = "receipt"
)

// Minute is the bucket the entry is filed under.
func (d Due) Minute() time.Time { return d.Deadline.UTC().Truncate(time.Minute) }

// Position orders entries within a minute by deadline, then by run and interrupt: a sweep that
// stops inside a minute resumes after the last position it handled.
func (d Due) Position() string {
	if d.Seq > 0 {
		return fmt.Sprintf("%013d#%s#%s#r%020d", d.Deadline.UnixMilli(), d.Tenant, d.RunID, d.Seq)
	}
	p := fmt.Sprintf("%013d#%s#%s#%s", d.Deadline.UnixMilli(), d.Tenant, d.RunID, d.InterruptID)
	switch d.Nudge {
	case NudgeRemind:
		p += fmt.Sprintf("#remind%02d", d.Reminder)
	case NudgeEscalate:
		p += "#escalate"
	case NudgeReceipt:
		p += "#receipt"
	}
	return p
}

// SweepCursor is where the expiry sweep goes on: the minute it has not finished, and the
// position in that minute after which it has not looked. Version orders moves: two sweeps that
// overlap cannot both move it from the same place.
type SweepCursor struct {
	Minute  time.Time
	After   string
	Version int64
	// Done lists, in position order, entries past After the sweep handled already: the cursor
	// cannot pass them yet (an entry before them is left, or they are too recent to exclude one
	// filed late), and the next sweep need not handle them again.
	Done []string
}

// Equal reports whether c and o are the same cursor.
func (c SweepCursor) Equal(o SweepCursor) bool {
	return c.Minute.Equal(o.Minute) && c.After == o.After && c.Version == o.Version && slices.Equal(c.Done, o.Done)
}
