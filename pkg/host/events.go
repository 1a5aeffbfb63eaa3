package host

import (
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// event is an event of type typ about nodeID (and interruptID, "" for none) with payload p: the
// one way the host builds the events it writes, from their typed payloads (interrupt.Asked,
// interrupt.Expired, ...).
func event(typ, nodeID, interruptID string, p any) (runlog.Event, error) {
	raw, err := runlog.Marshal(p)
	if err != nil {
		return runlog.Event{}, err
	}
	return runlog.Event{Type: typ, NodeID: nodeID, InterruptID: interruptID, Payload: raw}, nil
}

// lowConfidence are the events that precede a low-confidence interrupt's interrupt.requested,
// whichever operation escalated it: the agent's decision, and the node suspended on it.
func lowConfidence(decided interrupt.AgentDecided, interruptID string) ([]runlog.Event, error) {
	d, err := event(interrupt.EventAgentDecided, decided.NodeID, "", decided)
	if err != nil {
		return nil, err
	}
	s, err := event(interrupt.EventNodeSuspended, decided.NodeID, interruptID,
		interrupt.Suspended{NodeID: decided.NodeID, Reason: interrupt.ReasonLowConfidence, InterruptID: interruptID})
	if err != nil {
		return nil, err
	}
	return []runlog.Event{d, s}, nil
}
