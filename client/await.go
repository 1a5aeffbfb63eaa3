package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Outcome is how an interrupt ended: resolved (with the resume value), expired past its
// deadline, or ended with its run (cancelled or completed).
type Outcome struct {
	NodeID      string
	InterruptID string
	// Status is "resolved", "expired", "cancelled" or "completed".
	Status      string
	ResumeValue json.RawMessage
	// Votes are an approval's counted votes, in order, each with its resume value (the one
	// that released it is also ResumeValue).
	Votes []Vote
	// Event is the event that ended it.
	Event Event
}

// DecidedBy is who decided a resolved approval, as the host recorded it: the principal of the
// vote that released it, never the decidedBy label its resume value holds. "" for another kind
// (its events name no decider) and an outcome that is no resolution.
func (o Outcome) DecidedBy() string {
	if o.Status != "resolved" || len(o.Votes) == 0 {
		return ""
	}
	return o.Votes[len(o.Votes)-1].Principal
}

// Vote is one counted vote of an approval (interrupt.voted).
type Vote struct {
	Principal   string          `json:"principal"`
	Action      string          `json:"action"`
	ResumeValue json.RawMessage `json:"resumeValue,omitempty"`
}

// What an await answers, beside an outcome, when the interrupt ended without a resolution
// (the Outcome says how and when), and at once when there is nothing to wait for.
var (
	// ErrExpired: the interrupt passed its deadline unresolved.
	ErrExpired = errors.New("interrupt host: the interrupt expired")
	// ErrCancelled and ErrCompleted: its run ended first.
	ErrCancelled = errors.New("interrupt host: the interrupt's run was cancelled")
	ErrCompleted = errors.New("interrupt host: the interrupt's run completed")
	// ErrNoSuchRun: the run does not exist (for the caller's tenant).
	ErrNoSuchRun = errors.New("interrupt host: no such run")
	// ErrNotRequested: the run's log holds no request of that node or interrupt, so nothing
	// would ever end it.
	ErrNotRequested = errors.New("interrupt host: no such interrupt in the run")
)

// Await waits for the outcome of the interrupt most recently requested at nodeID, as
// AwaitInterrupt does for one named by its id.
func (c *Client) Await(ctx context.Context, runID, nodeID string, r *Receiver) (Outcome, error) {
	return c.await(ctx, runID, r, func(e Event) bool { return e.NodeID == nodeID }, "node "+nodeID)
}

// AwaitInterrupt waits for the outcome of interrupt interruptID (Request's InterruptID). The
// run's event log is the source of truth, read with the events cursor; a Receiver r (may be
// nil) wakes it as soon as a delivery of the run arrives, and without one it polls every
// PollInterval. It answers the outcome once the interrupt ended: resolved with a nil error;
// expired, or ended with its run, with ErrExpired, ErrCancelled or ErrCompleted beside it. It
// answers ErrNoSuchRun or ErrNotRequested at once when there is nothing to wait for, and ctx's
// error when ctx ends first (give it a deadline to bound the wait).
func (c *Client) AwaitInterrupt(ctx context.Context, runID, interruptID string, r *Receiver) (Outcome, error) {
	return c.await(ctx, runID, r, func(e Event) bool { return e.InterruptID == interruptID }, "interrupt "+interruptID)
}

// AwaitAny waits until one of the run's interrupts interruptIDs ended, as AwaitInterrupt does
// for one, and answers it (when several have, whichever is found first); an id the run never
// requested is ErrNotRequested at once. Each id is awaited on its own reading of the log.
func (c *Client) AwaitAny(ctx context.Context, runID string, interruptIDs []string, r *Receiver) (Outcome, error) {
	found, err := c.awaitSet(ctx, runID, interruptIDs, r, 1)
	if len(found) == 0 {
		return Outcome{}, err
	}
	return found[0], endedErr(found[0].Status)
}

// AwaitAll waits until every one of the run's interrupts interruptIDs ended and answers their
// outcomes by id; each outcome's Status says how it ended (no ErrExpired and the like: several
// may have). An id the run never requested is ErrNotRequested at once.
func (c *Client) AwaitAll(ctx context.Context, runID string, interruptIDs []string, r *Receiver) (map[string]Outcome, error) {
	all, err := c.awaitSet(ctx, runID, interruptIDs, r, len(interruptIDs))
	if err != nil {
		return nil, err
	}
	out := map[string]Outcome{}
	for _, o := range all {
		out[o.InterruptID] = o
	}
	return out, nil
}

// awaitSet waits until want of the interrupts ids ended, answering the outcomes it found.
func (c *Client) awaitSet(ctx context.Context, runID string, ids []string, r *Receiver, want int) ([]Outcome, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: no interrupt named", ErrNotRequested)
	}
	type result struct {
		o   Outcome
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan result, len(ids))
	for _, id := range ids {
		go func() {
			o, err := c.AwaitInterrupt(ctx, runID, id, r)
			if err != nil && o.Status != "" {
				err = nil // ended without a resolution: its Status says so
			}
			results <- result{o, err}
		}()
	}
	var out []Outcome
	for range ids {
		res := <-results
		if res.err != nil {
			return out, res.err
		}
		if out = append(out, res.o); len(out) == want {
			return out, nil
		}
	}
	return out, nil
}

// await waits for the outcome of the last interrupt requested that is requested says it is.
func (c *Client) await(ctx context.Context, runID string, r *Receiver, requested func(Event) bool, what string) (Outcome, error) {
	var wake <-chan struct{}
	if r != nil {
		ch, stop := r.watch(runID)
		defer stop()
		wake = ch
	}
	interval := c.PollInterval
	if interval <= 0 {
		interval = time.Second
	}
	if r != nil {
		interval *= 30 // deliveries wake it; polling only covers a delivery that never came
	}
	var (
		after   int64
		latest  string // the interrupt last requested that requested names
		node    string
		outcome = map[string]Outcome{}
		votes   = map[string][]Vote{}
		ended   *Outcome
	)
	for {
		page, err := c.Events(ctx, runID, after)
		if IsCode(err, "not_found") {
			return Outcome{}, fmt.Errorf("%w: %s", ErrNoSuchRun, runID)
		}
		if err != nil {
			return Outcome{}, err
		}
		for _, e := range page.Events {
			switch e.Type {
			case EventRequested:
				if requested(e) {
					latest, node = e.InterruptID, e.NodeID
				}
			case EventResolved:
				var p struct {
					ResumeValue json.RawMessage `json:"resumeValue"`
				}
				_ = json.Unmarshal(e.Payload, &p)
				outcome[e.InterruptID] = Outcome{NodeID: e.NodeID, InterruptID: e.InterruptID, Status: "resolved", ResumeValue: p.ResumeValue, Event: e}
			case EventVoted:
				var v Vote
				if json.Unmarshal(e.Payload, &v) == nil {
					votes[e.InterruptID] = append(votes[e.InterruptID], v)
				}
			case EventExpired:
				outcome[e.InterruptID] = Outcome{NodeID: e.NodeID, InterruptID: e.InterruptID, Status: "expired", Event: e}
			case EventRunCancelled, EventRunCompleted:
				ended = &Outcome{Status: e.Type[len("run."):], Event: e}
			}
		}
		if len(page.Events) > 0 {
			after = page.Next
			continue // read to the end of the log before answering or waiting
		}
		switch o, ok := outcome[latest]; {
		case latest == "":
			return Outcome{}, fmt.Errorf("%w: %s of run %s", ErrNotRequested, what, runID)
		case ok:
			o.Votes = votes[latest]
			return o, endedErr(o.Status)
		case ended != nil:
			o := *ended
			o.NodeID, o.InterruptID, o.Votes = node, latest, votes[latest]
			return o, endedErr(o.Status)
		}
		select {
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		case <-wake:
		case <-time.After(interval):
		}
	}
}

// endedErr is the error an outcome of status comes with: none for a resolution.
func endedErr(status string) error {
	return map[string]error{"expired": ErrExpired, "cancelled": ErrCancelled, "completed": ErrCompleted}[status]
}
