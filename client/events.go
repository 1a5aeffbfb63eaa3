package client

// The types of a run's events, as Event.Type and a subscription's events name them. A
// test of the host's repository holds them to the host's own list, so a type the host adds
// is added here in the same change.
const (
	EventRequested              = "interrupt.requested"
	EventResolved               = "interrupt.resolved"
	EventApprovalRequested      = "approval.requested"
	EventApprovalResolved       = "approval.resolved"
	EventClarificationRequested = "clarification.requested"
	EventClarificationResolved  = "clarification.resolved"
	EventVoted                  = "interrupt.voted"
	EventAsked                  = "interrupt.asked"
	EventExpired                = "interrupt.expired"
	EventReminded               = "interrupt.reminded"
	EventEscalated              = "interrupt.escalated"
	EventRunCancelled           = "run.cancelled"
	EventRunCompleted           = "run.completed"
	EventAgentDecided           = "agent.decided"
	EventNodeSuspended          = "node.suspended"
	EventRunConfigured          = "run.configured"
	EventReceiptRedeemed        = "receipt.redeemed"
	// The tenant's own events (their runId is TenantLog): a delegation set or ended.
	EventDelegationSet   = "delegation.set"
	EventDelegationEnded = "delegation.ended"
)

// TenantLog is the runId of the tenant's own events (delegation.*), which no run can have.
const TenantLog = "~tenant"

// EventTypes is every event type, in the order the published schema lists them: what a
// subscription may name beside "*".
var EventTypes = []string{
	EventRequested, EventResolved,
	EventApprovalRequested, EventApprovalResolved, EventClarificationRequested, EventClarificationResolved,
	EventVoted, EventAsked, EventExpired, EventReminded, EventEscalated, EventRunCancelled, EventRunCompleted,
	EventAgentDecided, EventNodeSuspended, EventRunConfigured, EventReceiptRedeemed,
	EventDelegationSet, EventDelegationEnded,
}
