package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// What one sweep may do (docs/engines.md, "Deadlines"). One invocation reads at most MaxSweepRead due
// entries from the cursor on, handles at most MaxSweepEntries of them shared fairly among their
// tenants, and stops short of its own deadline; the next carries on from the cursor.
const (
	// SweepLookBack is how far back the first sweep of a deployment starts: due entries exist
	// only since requests file them, and the schedule starts with the deployment.
	SweepLookBack = time.Hour
	// MaxSweepMinutes bounds the minutes of the due index one sweep reads.
	MaxSweepMinutes = 120
	// MaxSweepRead bounds the due entries one sweep reads: the window its fair share is taken
	// from. A tenant must have this many entries due before another's to delay it.
	MaxSweepRead = 10_000
	// MaxSweepEntries bounds the due entries one sweep handles (each is a read of its run's log
	// and, for an expiry, an append).
	MaxSweepEntries = 2000
	// SweepGrace is how late a due entry, or the commit it stands for, may land: a request files
	// its entry before its commit, at most CommitHorizon before it, and the entry's deadline is
	// never before the commit's time, so an entry due at t and its commit land before
	// t+CommitHorizon. The cursor passes only entries due longer ago than this, and a minute only
	// once it closed (SweepGrace after it ended); an entry whose interrupt the log does not hold
	// stays until it is this far past its deadline.
	SweepGrace = 30 * time.Second
	// MaxSweepDoneBytes bounds the positions past the cursor a sweep remembers as handled (the
	// cursor's Done, kept in one item); one it forgets is handled again, and found done.
	MaxSweepDoneBytes = 200 << 10
	// sweepWorkers handle a sweep's entries at once: an expiry is two round trips, mostly waiting.
	sweepWorkers = 4
	// sweepMargin is left of an invocation's time when the sweep stops.
	sweepMargin = 3 * time.Second
	sweepPage   = 1000
)

// SweepReport is what one sweep did, for its log line.
type SweepReport struct {
	// From and To are the cursor's minute before and after.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Entries is how many due entries it handled; Expired how many of them it wrote an event
	// for (interrupt.expired, interrupt.reminded, interrupt.escalated: the others were
	// resolved, ended, or never committed); Deferred how many due entries it
	// read and left for the next sweep (its budget's fair share went to other tenants).
	Entries  int `json:"entries"`
	Expired  int `json:"expired"`
	Deferred int `json:"deferred"`
	// Kept is how many due entries it read whose interrupt the log does not hold yet, while
	// their commit may still land (SweepGrace): they stay for the next sweep.
	Kept int `json:"kept"`
	// Tenants is how many tenants the entries it read belong to.
	Tenants int `json:"tenants"`
	// CaughtUp is true only when the sweep read every entry due by now and handled them all.
	CaughtUp bool `json:"caughtUp"`
	// LagSeconds is how long past its deadline the oldest entry the sweep found still due was
	// (0 when none was), a kept entry aside: how late the sweep writes an expiry
	// (metrics.SweepLag).
	LagSeconds float64 `json:"lagSeconds"`
}

// Sweep records interrupt.expired for every interrupt whose deadline has passed, reading only
// the due index's minutes from the cursor's to the present. Each expiry is a conditional
// append, like a resolve: a resolve committed first makes it a no-op, one after it answers 409.
// Two sweeps at once write no expiry twice (the log says it is written), and only one of them
// moves the cursor.
//
// An entry leaves only once the log shows there is nothing left for it to do: its interrupt
// closed, its follow-up recorded, or, for an interrupt the log does not hold, its commit past
// landing (SweepGrace after the entry's deadline). A request files its entry before its commit,
// and a commit held by throttling or lost answers may land after a sweep has read the entry.
//
// No tenant can hold the others back: the entries due are read first (a window of at most
// MaxSweepRead, in deadline order), and the budget is dealt among their tenants in turn, one
// entry each, oldest first, so a tenant with thousands due costs another tenant's entry at most
// one place per round. The cursor then passes the handled entries in order, up to the first one
// left or due within SweepGrace (which may still be joined by an entry filed late), and lists
// those after it that were handled, so the next sweep does not handle them again.
func (h *Host) Sweep(ctx context.Context) (SweepReport, error) {
	now := h.now().UTC()
	start, err := h.deadlines.SweepCursor(ctx)
	if err != nil {
		return SweepReport{}, err
	}
	cur := start
	if cur.Version == 0 {
		cur.Minute = now.Add(-SweepLookBack).Truncate(time.Minute)
	}
	report := SweepReport{From: cur.Minute, To: cur.Minute}
	window, through, complete, err := h.dueWindow(ctx, cur, now)
	if err != nil {
		return report, err
	}
	before := make([]bool, len(window))
	for i, d := range window {
		_, before[i] = slices.BinarySearch(cur.Done, d.Position())
	}
	picked, tenants := fairShare(window, before, MaxSweepEntries)
	report.Tenants = tenants
	outcomes, err := h.handle(ctx, window, picked, now)
	done := make([]bool, len(window))
	var lag time.Duration
	for i, o := range outcomes {
		switch o {
		case wrote, settled:
			report.Entries++
			done[i] = true
			if o == wrote {
				report.Expired++
			}
		case kept:
			report.Kept++
		case unswept:
			done[i] = before[i]
			if !before[i] {
				report.Deferred++
			}
		}
		if !before[i] && o != kept {
			lag = max(lag, now.Sub(window[i].Deadline))
		}
	}
	report.LagSeconds = lag.Seconds()
	h.metrics.Duration(metrics.SweepLag, lag)
	cur = passed(cur, window, done, through, now)
	report.To = cur.Minute
	report.CaughtUp = err == nil && complete && report.Deferred == 0
	if !cur.Equal(start) {
		if merr := h.deadlines.MoveSweep(ctx, start, cur); merr != nil && !errors.Is(merr, runlog.ErrSeqTaken) {
			err = errors.Join(err, merr)
		}
	}
	return report, err
}

// dueWindow reads the entries due by now from cursor c on, in position order across minutes, at
// most MaxSweepRead. through is the first minute it did not read to its end (every minute
// before it was read whole); complete tells whether it read every entry due by now.
func (h *Host) dueWindow(ctx context.Context, c runlog.SweepCursor, now time.Time) (window []runlog.Due, through time.Time, complete bool, err error) {
	present := now.Truncate(time.Minute)
	for m, minutes := c.Minute, 0; !m.After(present); m, minutes = m.Add(time.Minute), minutes+1 {
		if minutes == MaxSweepMinutes {
			return window, m, false, nil
		}
		after := ""
		if m.Equal(c.Minute) {
			after = c.After
		}
		for {
			if len(window) == MaxSweepRead {
				return window, m, false, nil
			}
			limit := min(sweepPage, MaxSweepRead-len(window))
			due, err := h.deadlines.Due(ctx, m, after, limit)
			if err != nil {
				return nil, m, false, err
			}
			for _, d := range due {
				if d.Deadline.After(now) {
					return window, m, true, nil // the rest of the minute is not due yet
				}
				window = append(window, d)
				after = d.Position()
			}
			if len(due) < limit {
				break
			}
		}
	}
	return window, present.Add(time.Minute), true, nil
}

// fairShare picks at most budget of window's entries not done before, dealing one to each
// tenant in turn (in the order of their oldest entry), each tenant's oldest first. It answers
// the indexes picked, in the order to handle them, and how many tenants the window holds.
func fairShare(window []runlog.Due, before []bool, budget int) ([]int, int) {
	var order []string
	queues := map[string][]int{}
	left := 0
	for i, d := range window {
		if _, ok := queues[d.Tenant]; !ok {
			order = append(order, d.Tenant)
			queues[d.Tenant] = nil
		}
		if !before[i] {
			queues[d.Tenant] = append(queues[d.Tenant], i)
			left++
		}
	}
	picked := make([]int, 0, min(budget, left))
	for len(picked) < budget && len(picked) < left {
		for _, t := range order {
			if q := queues[t]; len(q) > 0 && len(picked) < budget {
				picked = append(picked, q[0])
				queues[t] = q[1:]
			}
		}
	}
	return picked, len(order)
}

// swept is what the sweep made of one due entry.
type swept int

const (
	// unswept: not handled by this sweep (its budget or time ran out, or an entry failed).
	unswept swept = iota
	// kept: the log does not hold the entry's interrupt, and the commit that files it may still
	// land; the entry stays for the next sweep.
	kept
	// settled: the log shows nothing left to do (the interrupt closed, the follow-up recorded,
	// a newer entry standing for it), or the entry's commit can no longer land.
	settled
	// wrote: the sweep wrote the entry's event.
	wrote
)

// unheld is the verdict on an entry whose interrupt the log does not hold at now: kept while
// the commit that files it may still land, settled once it is SweepGrace past its deadline
// (CommitHorizon).
func unheld(d runlog.Due, now time.Time) swept {
	if now.Sub(d.Deadline) < SweepGrace {
		return kept
	}
	return settled
}

// handle expires (or retains) the picked entries of window, sweepWorkers at a time, until the
// invocation nears its deadline or an entry fails, and tells what it made of each. A run's
// entries go to one worker, in due order: two of a run due in one sweep (a reminder and an
// escalation) commit in the order they fell due, and neither loses the conditional put to the
// other; one that fails leaves the rest of its run to the next sweep.
func (h *Host) handle(ctx context.Context, window []runlog.Due, picked []int, now time.Time) (outcomes []swept, err error) {
	outcomes = make([]swept, len(window))
	deadline, bounded := ctx.Deadline()
	runs := byRun(window, picked)
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
	)
	more := func() bool { return err == nil && !(bounded && time.Until(deadline) < sweepMargin) }
	take := func() ([]int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next == len(runs) || !more() {
			return nil, false
		}
		next++
		return runs[next-1], true
	}
	for range min(sweepWorkers, len(runs)) {
		wg.Go(func() {
			for entries, ok := take(); ok; entries, ok = take() {
				for _, i := range entries {
					d := window[i]
					act := h.expire
					switch {
					case d.Seq > 0:
						act = h.retain
					case d.Nudge == runlog.NudgeReceipt:
						act = h.lapse
					case d.Nudge != "":
						act = h.nudge
					}
					o, aerr := act(ctx, d, now)
					mu.Lock()
					if aerr != nil {
						err = errors.Join(err, aerr)
					} else {
						outcomes[i] = o
					}
					stop := aerr != nil || !more()
					mu.Unlock()
					if stop {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	return outcomes, err
}

// byRun groups the picked entries of window by run, each group in picked's order (its due
// order: the fair share deals a tenant's entries oldest first), the groups in the order of
// their first entry.
func byRun(window []runlog.Due, picked []int) [][]int {
	at := map[runlog.Key]int{}
	var runs [][]int
	for _, i := range picked {
		k := runlog.Key{Tenant: window[i].Tenant, RunID: window[i].RunID}
		g, ok := at[k]
		if !ok {
			g = len(runs)
			at[k] = g
			runs = append(runs, nil)
		}
		runs[g] = append(runs[g], i)
	}
	return runs
}

// passed moves cursor c over the handled entries of window in order, up to the first entry
// not handled or due within SweepGrace of now, and over whole minutes only once closed; past the
// last entry, over the closed minutes before through, which were read whole. The entries past
// it that are done, now or before, become its Done.
func passed(c runlog.SweepCursor, window []runlog.Due, done []bool, through, now time.Time) runlog.SweepCursor {
	known := slices.Clone(c.Done)
	for i, ok := range done {
		if ok {
			known = append(known, window[i].Position())
		}
	}
	c = advance(runlog.SweepCursor{Minute: c.Minute, After: c.After, Version: c.Version}, window, done, through, now)
	slices.Sort(known)
	known = slices.Compact(known)
	floor := c.After
	if floor == "" {
		floor = fmt.Sprintf("%013d", c.Minute.UnixMilli())
	}
	size := 0
	for _, p := range known {
		if p > floor && size+len(p) <= MaxSweepDoneBytes {
			c.Done = append(c.Done, p)
			size += len(p)
		}
	}
	return c
}

// advance is passed's move of the cursor, without its Done.
func advance(c runlog.SweepCursor, window []runlog.Due, done []bool, through, now time.Time) runlog.SweepCursor {
	for i, d := range window {
		for d.Minute().After(c.Minute) && closed(c.Minute, now) {
			c = runlog.SweepCursor{Minute: c.Minute.Add(time.Minute), Version: c.Version}
		}
		if d.Minute().After(c.Minute) || !done[i] || now.Sub(d.Deadline) < SweepGrace {
			return c
		}
		c.After = d.Position()
	}
	for c.Minute.Before(through) && closed(c.Minute, now) {
		c = runlog.SweepCursor{Minute: c.Minute.Add(time.Minute), Version: c.Version}
	}
	return c
}

// closed reports whether minute m can receive no more due entries at now.
func closed(m, now time.Time) bool { return !now.Before(m.Add(time.Minute + SweepGrace)) }

// expiry is the answer of one entry's commit: what the sweep made of the entry.
type expiry struct{ swept swept }

func (e expiry) atSeq(int64) expiry { return expiry{swept: wrote} }

// expire records interrupt.expired for the interrupt d names, if the log still has it pending
// past its deadline; it writes nothing otherwise (d may be stale: resolved, ended, of an attempt
// whose commit lost, or of a commit not landed yet).
func (h *Host) expire(ctx context.Context, d runlog.Due, now time.Time) (swept, error) {
	k, st, err := h.dueRun(ctx, d)
	if err != nil || st == nil {
		return settled, err
	}
	res, err := commit(ctx, h, k, st, "", func(st *runlog.State) (decision[expiry], error) {
		in := st.ByID(d.InterruptID)
		switch {
		case in == nil:
			return decision[expiry]{answer: expiry{swept: unheld(d, now)}}, nil
		case in.Recorded() != interrupt.StatusPending || in.Deadline.IsZero() || in.Deadline.After(now):
			// Closed, or its deadline is another entry's: the attempt that committed it filed
			// one for the deadline the log holds.
			return decision[expiry]{answer: expiry{swept: settled}}, nil
		}
		expired, err := runlog.NewEvent(interrupt.EventExpired, in.NodeID, in.ID, interrupt.Expired{
			NodeID: in.NodeID, InterruptID: in.ID, Kind: in.Payload.Kind, Deadline: in.Deadline.UTC().Format(runlog.TimeFormat),
		})
		if err != nil {
			return decision[expiry]{}, err
		}
		// An expiry is always written, however large the run: like its end, it closes a wait.
		return decision[expiry]{events: []runlog.Event{expired}, ends: true}, nil
	})
	return res.swept, err
}

// dueRun is the run a due entry names and its state; no state for an entry whose key is no
// run's (the sweep passes it over).
func (h *Host) dueRun(ctx context.Context, d runlog.Due) (runlog.Key, *runlog.State, error) {
	k := runlog.Key{Tenant: d.Tenant, RunID: d.RunID}
	if !k.Valid() {
		return k, nil, nil
	}
	st, err := h.load(ctx, k)
	if err != nil {
		return k, nil, err
	}
	return k, st, nil
}

// retainBudget bounds the items one due entry of an ended run gives their expiry: a run of any
// length is retained over as many sweeps as it takes, each entry re-filing the next.
const retainBudget = 1000

// retain gives every item of the ended run d names (its commits, checkpoint and archive) the
// retention expiry, counted from the commit that ended it. An ended run takes no more commits, so
// its log can go whole. Past retainBudget items, it files the entry again a minute on, for the
// sweep to go on there.
//
// A retention entry is filed after the commit that ended its run, so the log always holds what
// it stands for.
func (h *Host) retain(ctx context.Context, d runlog.Due, now time.Time) (swept, error) {
	k := runlog.Key{Tenant: d.Tenant, RunID: d.RunID}
	if !k.Valid() {
		return settled, nil
	}
	st, err := h.load(ctx, k)
	if err != nil || st.Ended == "" || st.EndedSeq != d.Seq {
		return settled, err
	}
	more, err := h.deadlines.Retain(ctx, k, st.LastAt.Add(h.cfg.Retention), retainBudget)
	if err != nil || !more {
		return settled, err
	}
	next := d
	next.Deadline = now.Add(time.Minute).Truncate(time.Millisecond)
	return settled, h.deadlines.Schedule(ctx, next)
}
