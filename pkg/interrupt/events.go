package interrupt

import (
	"encoding/json"
	"slices"
	"time"
)

// Events is every event type of a run as its readers see it (list-events, deliveries, a
// subscription's events), in the order of the published schema's enum: the one list that
// subscriptions, the legacy aliases and the schema are held to (TestEventTypes).
var Events = []string{
	EventRequested, EventResolved,
	"approval.requested", "approval.resolved", "clarification.requested", "clarification.resolved",
	EventVoted, EventAsked, EventExpired, EventReminded, EventEscalated, EventRunCancelled, EventRunCompleted,
	EventAgentDecided, EventNodeSuspended, EventRunConfigured, EventReceiptRedeemed,
	EventDelegationSet, EventDelegationEnded,
}

// TenantEvents are the tenant's own events: a subscription gets them by naming them ("*" does
// not).
var TenantEvents = []string{EventDelegationSet, EventDelegationEnded}

// The tenant's events: its own log's (runlog.TenantLog), delivered to subscriptions as a run's.
const (
	// EventDelegationSet records a principal's delegation set or replaced (DelegationChanged).
	EventDelegationSet = "delegation.set"
	// EventDelegationEnded records a principal's delegation ended at once (DelegationChanged).
	EventDelegationEnded = "delegation.ended"
)

// DelegationChanged is the payload of delegation.set and delegation.ended: the principal's
// delegation as it stands after the change, and who changed it.
type DelegationChanged struct {
	Principal string    `json:"principal"`
	Delegate  string    `json:"delegate"`
	From      time.Time `json:"from"`
	Until     time.Time `json:"until"`
	Kinds     []Kind    `json:"kinds,omitempty"`
	Note      string    `json:"note,omitempty"`
	// By is who set or ended it: the principal, or an administrator.
	By string `json:"by"`
	// Version is the delegation's version the change made.
	Version int64 `json:"version"`
}

// IsEvent reports whether t is one of Events.
func IsEvent(t string) bool { return slices.Contains(Events, t) }

// Mode is a stream mode of list-events (docs/design.md, "Stream modes").
type Mode string

// The stream modes. Every event the host writes is durable and appears in ModeDebug; ModeUpdates
// holds the state updates only.
const (
	ModeUpdates Mode = "updates"
	ModeDebug   Mode = "debug"
)

// Detail are the event types that are debug detail rather than state updates: the steps inside
// a decision (an approval's counted votes and asks, an agent's decision record) and the
// follow-ups of a wait (its reminders and escalation), after which the
// run's snapshot (status, current node, pending interrupts) and configuration are what they were.
// The event that changes them (interrupt.resolved, node.suspended) is an update of its own.
var Detail = []string{EventVoted, EventAsked, EventAgentDecided, EventReminded, EventEscalated, EventReceiptRedeemed}

// Includes reports whether the stream mode m carries events of type t; the zero Mode carries
// every event, as ModeDebug does.
func (m Mode) Includes(t string) bool {
	return m != ModeUpdates || !slices.Contains(Detail, t)
}

// The typed payloads of the events the host writes, beside Resolved and Vote: one type per
// event, the shape its writers build and its readers decode (schemas/v2/run-event-payloads
// .schema.json defines each, TestEventPayloads holds them to it).

// Asked is the payload of interrupt.asked: an approver's ask, recorded without exiting.
type Asked struct {
	NodeID      string          `json:"nodeId"`
	InterruptID string          `json:"interruptId"`
	Principal   string          `json:"principal"`
	ResumeValue json.RawMessage `json:"resumeValue"`
}

// Expired is the payload of interrupt.expired.
type Expired struct {
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
	Kind        Kind   `json:"kind,omitempty"`
	// Deadline is the deadline passed, as every timestamp leaves the host.
	Deadline string `json:"deadline"`
}

// Ended is the payload of run.cancelled and run.completed.
type Ended struct {
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
}

// Configured is the payload of run.configured.
type Configured struct {
	EscalationThreshold float64 `json:"escalationThreshold"`
	By                  string  `json:"by"`
}

// AgentDecided is the payload of agent.decided: an agent's decision with the confidence it had
// and the threshold it was held to. Key and Decision are set when the agent-decisions operation
// recorded it; a low-confidence interrupt requested directly records the rest.
type AgentDecided struct {
	NodeID     string          `json:"nodeId,omitempty"`
	Key        string          `json:"key,omitempty"`
	AgentID    string          `json:"agentId"`
	Confidence float64         `json:"confidence"`
	Threshold  float64         `json:"threshold"`
	Decision   json.RawMessage `json:"decision,omitempty"`
}

// ReasonLowConfidence is why a node is suspended by a decision less confident than its run's
// threshold.
const ReasonLowConfidence = "low-confidence"

// Suspended is the payload of node.suspended.
type Suspended struct {
	NodeID      string `json:"nodeId"`
	Reason      string `json:"reason"`
	InterruptID string `json:"interruptId,omitempty"`
}
