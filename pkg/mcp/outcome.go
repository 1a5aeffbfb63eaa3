package mcp

import (
	"cmp"
	"encoding/json"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// outcomeOf is what get_outcome answers of the host's reading of an interrupt. Who decided is
// the host's record (the releasing vote's principal, the resolving commit's author); the
// decider's own decidedBy, an opaque label, stays in resumeValue.
func outcomeOf(o host.Outcome) Outcome {
	out := Outcome{RunID: o.RunID, NodeID: o.NodeID, InterruptID: o.InterruptID, Kind: string(o.Kind), Status: string(o.Status)}
	if o.Status == interrupt.StatusCancelled && o.RunEnded == interrupt.RunCompleted {
		out.Status = "completed"
	}
	for _, v := range o.Votes {
		out.Votes = append(out.Votes, Vote{Principal: v.Principal, Action: string(v.Action), Feedback: decisionOf(v.ResumeValue).Feedback})
	}
	if o.Status != interrupt.StatusResolved {
		return out
	}
	out.ResumeValue = decode(o.ResumeValue)
	d := decisionOf(o.ResumeValue)
	switch o.Kind {
	case interrupt.KindApproval:
		out.Action, out.Feedback = d.Action, d.Feedback
		out.DecidedBy = o.ResolvedBy
		if n := len(o.Votes); n > 0 {
			out.DecidedBy = o.Votes[n-1].Principal
		}
		out.DecidedBy = cmp.Or(out.DecidedBy, d.DecidedBy)
	case interrupt.KindClarification:
		out.Answers, out.AnsweredBy = d.Answers, cmp.Or(o.ResolvedBy, d.DecidedBy)
	}
	return out
}

// decision is what get_outcome reads of a resume value: an approval's decision, or a
// clarification's answers and the label of who answered.
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

// decode is a JSON value as the tool's structured output carries it.
func decode(value json.RawMessage) any {
	var v any
	if len(value) == 0 || json.Unmarshal(value, &v) != nil {
		return nil
	}
	return v
}
