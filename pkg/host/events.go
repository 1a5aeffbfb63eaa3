package host

import (
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// lowConfidence are the events that precede a low-confidence interrupt's interrupt.requested,
// whichever operation escalated it: the agent's decision, and the node suspended on it.
func lowConfidence(decided interrupt.AgentDecided, interruptID string) ([]runlog.Event, error) {
	d, err := runlog.NewEvent(interrupt.EventAgentDecided, decided.NodeID, "", decided)
	if err != nil {
		return nil, err
	}
	s, err := runlog.NewEvent(interrupt.EventNodeSuspended, decided.NodeID, interruptID,
		interrupt.Suspended{NodeID: decided.NodeID, Reason: interrupt.ReasonLowConfidence, InterruptID: interruptID})
	if err != nil {
		return nil, err
	}
	return []runlog.Event{d, s}, nil
}
