package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// DefaultEscalationThreshold is the template's EscalationThreshold default: an agent decision
// less confident than this suspends its node for a person.
const DefaultEscalationThreshold = 0.7

// RunConfig is the answer of configure-run: the run's configurable settings as they stand.
type RunConfig struct {
	RunID               string  `json:"runId"`
	EscalationThreshold float64 `json:"escalationThreshold"`
	Seq                 int64   `json:"seq"`
}

func (c RunConfig) atSeq(seq int64) RunConfig { c.Seq = seq; return c }

// Configure sets the run's escalation threshold (configurable.run.escalationThreshold of the
// spec), committed as run.configured. A run that does not exist yet begins with it; the same
// threshold again changes nothing; an ended run takes no configuration.
func (h *Host) Configure(ctx context.Context, p interrupt.Principal, runID string, threshold float64) (RunConfig, error) {
	if threshold < 0 || threshold > 1 {
		return RunConfig{}, interrupt.Invalid("the configuration is not acceptable",
			interrupt.FieldError{Path: "/escalationThreshold", Message: "must be a number from 0 to 1"})
	}
	k, st, err := h.loadRun(ctx, p, runID)
	if err != nil {
		return RunConfig{}, err
	}
	return commit(ctx, h, k, st, p.Voter(), func(st *runlog.State) (decision[RunConfig], error) {
		if st.Ended != "" {
			return decision[RunConfig]{}, interrupt.Errorf(interrupt.CodeConflict, "run %s is %s", runID, st.Ended)
		}
		answer := RunConfig{RunID: runID, EscalationThreshold: threshold}
		if st.Threshold != nil && *st.Threshold == threshold {
			answer.Seq = st.ThresholdSeq
			return decision[RunConfig]{answer: answer}, nil
		}
		configured, err := runlog.NewEvent(interrupt.EventRunConfigured, "", "", interrupt.Configured{EscalationThreshold: threshold, By: p.Subject})
		if err != nil {
			return decision[RunConfig]{}, err
		}
		return decision[RunConfig]{events: []runlog.Event{configured}, answer: answer}, nil
	})
}

// AgentDecision is what an agent decided at a node, and how sure it was.
type AgentDecision struct {
	NodeID     string          `json:"nodeId"`
	Key        string          `json:"key"`
	AgentID    string          `json:"agentId"`
	Confidence float64         `json:"confidence"`
	Decision   json.RawMessage `json:"decision"`
}

// Decided is the answer of agent-decisions.
type Decided struct {
	RunID       string `json:"runId"`
	NodeID      string `json:"nodeId"`
	Seq         int64  `json:"seq"`
	Escalated   bool   `json:"escalated"`
	InterruptID string `json:"interruptId,omitempty"`
}

// decided is a decision's answer, and whether this call recorded it (else the key was decided
// before, and the answer is that decision's).
type decided struct {
	view    Decided
	created bool
}

func (d decided) atSeq(seq int64) decided { d.view.Seq = seq; return d }

// Decide records an agent's decision as agent.decided. Less confident than the run's threshold
// (run.configured, else the host's), the same commit suspends the node, as the spec requires:
// node.suspended { reason: "low-confidence" } and a low-confidence interrupt, keyed by the
// decision's key, data { agentId, threshold, observed }. The same key again answers the first
// decision and appends nothing. created is false then.
func (h *Host) Decide(ctx context.Context, p interrupt.Principal, runID string, d AgentDecision) (Decided, bool, error) {
	if fields := checkDecision(d); len(fields) > 0 {
		return Decided{}, false, interrupt.Invalid("the decision is not acceptable", fields...)
	}
	k, st, err := h.loadRun(ctx, p, runID,
		runlog.Ref{Kind: runlog.RefDecision, Name: d.Key}, runlog.Ref{Kind: runlog.RefKey, Name: d.Key})
	if err != nil {
		return Decided{}, false, err
	}
	id := newInterruptID()
	res, err := commit(ctx, h, k, st, p.Voter(), func(st *runlog.State) (decision[decided], error) {
		if seq := st.Decided(d.Key); seq > 0 {
			first := Decided{RunID: runID, NodeID: d.NodeID, Seq: seq}
			if in := st.ByKey(d.Key); in != nil && in.RequestedSeq == seq {
				first.NodeID, first.Escalated, first.InterruptID = in.NodeID, true, in.ID
			}
			return decision[decided]{answer: decided{view: first}}, nil
		}
		switch {
		case st.Ended != "":
			return decision[decided]{}, interrupt.Errorf(interrupt.CodeConflict, "run %s is %s", runID, st.Ended)
		case st.ByKey(d.Key) != nil:
			return decision[decided]{}, interrupt.Errorf(interrupt.CodeConflict, "key %q names an interrupt of this run, not a decision", d.Key)
		}
		threshold := *h.cfg.EscalationThreshold
		if st.Threshold != nil {
			threshold = *st.Threshold
		}
		made := interrupt.AgentDecided{NodeID: d.NodeID, Key: d.Key, AgentID: d.AgentID, Confidence: d.Confidence, Threshold: threshold, Decision: d.Decision}
		out := decision[decided]{answer: decided{view: Decided{RunID: runID, NodeID: d.NodeID}, created: true}}
		if d.Confidence >= threshold {
			recorded, err := runlog.NewEvent(interrupt.EventAgentDecided, d.NodeID, "", made)
			out.events = []runlog.Event{recorded}
			return out, err
		}
		if busy := st.LatestAt(d.NodeID); busy != nil && busy.StatusAt(h.now()) == interrupt.StatusPending {
			return decision[decided]{}, interrupt.Errorf(interrupt.CodeConflict, "node %s already waits on interrupt %s", d.NodeID, busy.ID)
		}
		payload, err := runlog.Marshal(map[string]any{
			"kind": interrupt.KindLowConfidence, "key": d.Key,
			"data": map[string]any{"agentId": d.AgentID, "threshold": threshold, "observed": d.Confidence},
		})
		if err != nil {
			return decision[decided]{}, err
		}
		if out.events, err = lowConfidence(made, id); err != nil {
			return decision[decided]{}, err
		}
		out.events = append(out.events, runlog.Event{Type: interrupt.EventRequested, NodeID: d.NodeID, InterruptID: id, Payload: payload})
		out.answer.view.Escalated, out.answer.view.InterruptID = true, id
		return out, nil
	})
	return res.view, res.created, err
}

func checkDecision(d AgentDecision) []interrupt.FieldError {
	var fields []interrupt.FieldError
	if !runlog.ValidID(d.NodeID) {
		fields = append(fields, interrupt.FieldError{Path: "/nodeId", Message: "must match ^[A-Za-z0-9._:-]{1,128}$"})
	}
	if len(d.Key) < 1 || len(d.Key) > 256 {
		fields = append(fields, interrupt.FieldError{Path: "/key", Message: "must be 1 to 256 characters"})
	}
	if len(d.AgentID) < 1 || len(d.AgentID) > 256 {
		fields = append(fields, interrupt.FieldError{Path: "/agentId", Message: "must be 1 to 256 characters"})
	}
	if d.Confidence < 0 || d.Confidence > 1 {
		fields = append(fields, interrupt.FieldError{Path: "/confidence", Message: fmt.Sprintf("must be a number from 0 to 1, not %v", d.Confidence)})
	}
	if len(d.Decision) == 0 {
		fields = append(fields, interrupt.FieldError{Path: "/decision", Message: "decision is required"})
	}
	return fields
}
