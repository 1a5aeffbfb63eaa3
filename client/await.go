package client

import (
	"context"
	"encoding/json"
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
	// Event is the event that ended it.
	Event Event
}

// Await waits for the outcome of the interrupt most recently requested at nodeID. The run's
// event log is the source of truth, read with the events cursor; a Receiver r (may be nil)
// wakes Await as soon as a delivery of the run arrives, and without one Await polls every
// PollInterval. It returns when the interrupt ended, or with ctx's error.
func (c *Client) Await(ctx context.Context, runID, nodeID string, r *Receiver) (Outcome, error) {
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
		latest  string // the interrupt last requested at the node
		outcome = map[string]Outcome{}
		ended   *Outcome
	)
	for {
		page, err := c.Events(ctx, runID, after)
		if err != nil && !IsCode(err, "not_found") {
			return Outcome{}, err
		}
		for _, e := range page.Events {
			switch e.Type {
			case "interrupt.requested":
				if e.NodeID == nodeID {
					latest = e.InterruptID
				}
			case "interrupt.resolved":
				var p struct {
					ResumeValue json.RawMessage `json:"resumeValue"`
				}
				_ = json.Unmarshal(e.Payload, &p)
				outcome[e.InterruptID] = Outcome{NodeID: e.NodeID, InterruptID: e.InterruptID, Status: "resolved", ResumeValue: p.ResumeValue, Event: e}
			case "interrupt.expired":
				outcome[e.InterruptID] = Outcome{NodeID: e.NodeID, InterruptID: e.InterruptID, Status: "expired", Event: e}
			case "run.cancelled", "run.completed":
				ended = &Outcome{NodeID: nodeID, Status: e.Type[len("run."):], Event: e}
			}
		}
		if latest != "" {
			if o, ok := outcome[latest]; ok {
				return o, nil
			}
		}
		if ended != nil && latest != "" {
			o := *ended
			o.InterruptID = latest
			return o, nil
		}
		if len(page.Events) > 0 {
			after = page.Next
			continue // read to the end of the log before waiting
		}
		select {
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		case <-wake:
		case <-time.After(interval):
		}
	}
}
