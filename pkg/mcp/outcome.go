package mcp

import (
	"context"
	"encoding/json"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// reading is get_outcome's reading of a run's log, on from where the last read ended: each
// poll reads only the commits appended since.
type reading struct {
	after     int64
	requested bool
	ended     string // the run's end, "cancelled" or "completed", if it ended
	votes     []Vote
	out       Outcome
}

// readOn reads the run's log to its end and says what became of the interrupt. An interrupt
// the run never requested is not_found, as a run that does not exist is.
func (r *reading) readOn(ctx context.Context, h Host, p interrupt.Principal, runID, interruptID string) error {
	for {
		page, err := h.Events(ctx, p, runID, r.after, 0, interrupt.ModeDebug)
		if err != nil {
			return err
		}
		for _, e := range page.Events {
			r.fold(e, interruptID)
		}
		if page.Next == r.after {
			break
		}
		r.after = page.Next
	}
	if !r.requested {
		return interrupt.Errorf(interrupt.CodeNotFound, "run %s requested no interrupt %s", runID, interruptID)
	}
	if r.out.Status == "pending" && r.ended != "" {
		r.out.Status = r.ended
	}
	r.out.Votes = r.votes
	return nil
}

// fold takes one event of the log into the outcome of the interrupt interruptID.
func (r *reading) fold(e runlog.Envelope, interruptID string) {
	switch e.Type {
	case interrupt.EventRunCancelled:
		r.ended = "cancelled"
	case interrupt.EventRunCompleted:
		r.ended = "completed"
	}
	if e.InterruptID != interruptID {
		return
	}
	switch e.Type {
	case interrupt.EventRequested:
		var p struct {
			Kind string `json:"kind"`
		}
		_ = json.Unmarshal(e.Payload, &p)
		r.requested = true
		r.out = Outcome{RunID: e.RunID, NodeID: e.NodeID, InterruptID: e.InterruptID, Kind: p.Kind, Status: "pending"}
	case interrupt.EventVoted:
		var v interrupt.Vote
		if json.Unmarshal(e.Payload, &v) == nil {
			r.votes = append(r.votes, Vote{Principal: v.Principal, Action: string(v.Action), Feedback: decisionOf(v.ResumeValue).Feedback})
		}
	case interrupt.EventExpired:
		r.out.Status = "expired"
	case interrupt.EventResolved:
		var res interrupt.Resolved
		_ = json.Unmarshal(e.Payload, &res)
		r.out.Status = "resolved"
		_ = json.Unmarshal(res.ResumeValue, &r.out.ResumeValue)
		d := decisionOf(res.ResumeValue)
		switch interrupt.Kind(r.out.Kind) {
		case interrupt.KindApproval:
			r.out.Action, r.out.DecidedBy, r.out.Feedback = d.Action, d.DecidedBy, d.Feedback
			// The vote that released the gate carries no value of its own: the resolution does.
			if n := len(r.votes); n > 0 && r.votes[n-1].Feedback == "" {
				r.votes[n-1].Feedback = d.Feedback
			}
		case interrupt.KindClarification:
			r.out.Answers, r.out.AnsweredBy = d.Answers, d.DecidedBy
		}
	}
}

// decision is what get_outcome reads of a resume value: an approval's decision, or a
// clarification's answers and who answered.
type decision struct {
	Action    string         `json:"action"`
	DecidedBy string         `json:"decidedBy"`
	Feedback  string         `json:"feedback"`
	Answers   map[string]any `json:"answers"`
}

func decisionOf(value json.RawMessage) decision {
	var d decision
	if len(value) > 0 {
		_ = json.Unmarshal(value, &d)
	}
	return d
}
