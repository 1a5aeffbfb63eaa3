// Package runlog is the run log as a value: the commits a run has made and the fold that turns
// them into the state every decision is taken against. It is pure: reading and appending commits
// is the job of a store (see package dynamo), deciding what to append the job of package host.
package runlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// ErrUnknownOutcome is what a store's Append returns when it sent the commit and cannot say
// whether it was written (the answer was lost, the connection reset, retries ran out after a
// 5xx): the caller reads the log to find out, and may append the same commit again, since the
// sequence number's condition lets only one of the two land.
var ErrUnknownOutcome = errors.New("runlog: the append's outcome is unknown")

// ErrRefused is what a store's Append wraps beside ErrUnknownOutcome when its last attempt was
// refused before it was applied (throttled): had an earlier attempt been applied, that one
// would have found the seq taken, so a read that then finds the seq free proves nothing was
// written.
var ErrRefused = errors.New("runlog: the store refused the append before applying it")

// ErrSeqTaken is what a store returns when another writer committed the same sequence number
// first: the caller re-reads, re-folds and decides again.
var ErrSeqTaken = errors.New("runlog: sequence number already committed")

// TooLargeError is what a store returns for a commit it cannot hold in one write; nothing was
// written. Limit is the store's, in its own accounting (DynamoDB counts attribute names and
// values of an item).
type TooLargeError struct {
	Size, Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("runlog: a commit of %d bytes exceeds the store's limit of %d", e.Size, e.Limit)
}

// ErrClaimed is what a store returns when another run holds a conversation the caller claims.
var ErrClaimed = errors.New("runlog: the conversation belongs to another run")

// Claim says which run of a tenant owns a conversation id, since when. It is written before the
// commit that uses the conversation, so a claim whose run has no such commit is a stale hint.
type Claim struct {
	RunID string
	At    time.Time
}

// ConversationClaim is a run's claim on one of its tenant's conversation ids, as the host asks a
// store to make it (host.Conversations); Claim is the owner the store answers. One value, so
// that the tenant, the conversation, the claiming run and the run it takes over from cannot be
// passed in another order.
type ConversationClaim struct {
	Tenant, ConversationID string
	// RunID claims the conversation, at At.
	RunID string
	At    time.Time
	// TakeOverFrom is the run whose claim this one may replace (a stale one: its run never
	// committed the conversation); "" for none.
	TakeOverFrom string
}

// Key names one run's log: runs are scoped by tenant, so the same run id in two tenants names
// two unrelated logs.
type Key struct {
	Tenant string
	RunID  string
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// ValidID reports whether s may name a tenant, a run or a node. Tenant and run ids become parts
// of a store's keys ("<tenant>#run#<runId>"), so they exclude the separator '#' and anything a
// URL or a log line would mangle.
func ValidID(s string) bool { return idPattern.MatchString(s) }

// ErrInvalidKey is what a store answers for a key it would not name one run by.
var ErrInvalidKey = errors.New("runlog: tenant and run id must be ids (ValidID)")

// Valid reports whether k names exactly one run of one tenant, or the tenant's own log
// (TenantLog): a store refuses any other key.
func (k Key) Valid() bool { return ValidID(k.Tenant) && ValidRun(k.RunID) }

// ValidRun reports whether a store may key a run's records (its log, a subscription's cursor
// of it) by runID: a run's id, or the tenant's own log's.
func ValidRun(runID string) bool { return ValidID(runID) || runID == TenantLog }

// TenantLog is the run id of a tenant's own log: the events of the tenant rather than of a run
// (a delegation set or ended), kept and delivered as a run's are (subscriptions, their
// cursors and retries). No engine can name it ('~' is no id's: ValidID), so no API call reads
// or writes it, and the read models index none of it (docs/design.md, "Tenant events").
const TenantLog = "~tenant"

// Tenantwide reports whether k is a tenant's own log (TenantLog).
func (k Key) Tenantwide() bool { return k.RunID == TenantLog }

// Event is one entry of a commit as stored. InterruptID is carried beside the payload because
// interrupt.requested records the InterruptPayload verbatim, which has no room for it.
type Event struct {
	Type        string          `json:"type"`
	NodeID      string          `json:"nodeId,omitempty"`
	InterruptID string          `json:"interruptId,omitempty"`
	Payload     json.RawMessage `json:"payload"`
	// Endpoint is, on an external-event interrupt's request, the webhook endpoint whose events
	// may resolve it ("" for none: a callback or resolve-by-run does). The host's own record,
	// never part of the event as it leaves the host.
	Endpoint string `json:"endpoint,omitempty"`
	// Display is, on an interrupt's request, how people are shown it (interrupt.Display), and
	// FollowUp how it is followed up while it waits (interrupt.FollowUp); the host's own
	// records, as Endpoint is.
	Display  *interrupt.Display  `json:"display,omitempty"`
	FollowUp *interrupt.FollowUp `json:"followUp,omitempty"`
	// ToolCall is, on an approval's request, the call it asks people to allow
	// (interrupt.ToolCall): the host's own record, as Display is.
	ToolCall *interrupt.ToolCall `json:"toolCall,omitempty"`
	// RefKinds are, on an interrupt's request, the ref kinds the host enforced then: the rule
	// of who decides it (interrupt.NewDeciders) is the one in force when it was asked. None in
	// a request recorded before they were kept: interrupt.DefaultRefKinds.
	RefKinds []string `json:"refKinds,omitempty"`
	// EndsRun is, on an interrupt's request, set when the run was made for it (the MCP
	// endpoint's own run): the host completes the run once the interrupt is closed and its
	// receipt, if any, redeemed or expired, since no one else would end it. False in a request
	// recorded before it was kept.
	EndsRun bool `json:"endsRun,omitempty"`
	// decoded is Payload as the Go value its writer encoded it from (NewEvent, Requested), so
	// that the fold of the writer's own commit does not parse what was just encoded. A store
	// never keeps it: an event read back is parsed.
	decoded any
}

// NewEvent is an event of type typ about nodeID (and interruptID, "" for none) whose payload is
// p, encoded: the one way an event is built from its typed payload (interrupt.Resolved,
// interrupt.Vote, interrupt.Asked, ...).
func NewEvent(typ, nodeID, interruptID string, p any) (Event, error) {
	raw, err := Marshal(p)
	if err != nil {
		return Event{}, err
	}
	return Event{Type: typ, NodeID: nodeID, InterruptID: interruptID, Payload: raw, decoded: p}, nil
}

// With is what the host records of a request beside its payload (Event's Endpoint, Display,
// FollowUp, ToolCall, RefKinds and EndsRun).
type With struct {
	Endpoint string
	Display  *interrupt.Display
	FollowUp *interrupt.FollowUp
	ToolCall *interrupt.ToolCall
	RefKinds []string
	EndsRun  bool
}

// Requested is the interrupt.requested event of interrupt id at nodeID: raw is the
// InterruptPayload verbatim, p what it parsed to, with the host's record of it.
func Requested(nodeID, id string, with With, p interrupt.Payload, raw json.RawMessage) Event {
	return Event{
		Type: interrupt.EventRequested, NodeID: nodeID, InterruptID: id, Payload: raw,
		Endpoint: with.Endpoint, Display: with.Display, FollowUp: with.FollowUp, ToolCall: with.ToolCall, RefKinds: with.RefKinds,
		EndsRun: with.EndsRun, decoded: p,
	}
}

// Commit is the unit of appending: all of its events become visible together or not at all.
// ID is random per attempt to append, so that a writer whose put was retried by the SDK can
// recognise its own commit instead of mistaking it for a rival's.
type Commit struct {
	Seq    int64
	ID     string
	At     time.Time
	Events []Event
	// Idem is the Idempotency-Key of the request that made the commit, if it had one.
	Idem *Idem
	// By is who made the commit: the authenticated caller's subject, "token:<jti>" for the
	// bearer of a token minted without a principal, "" for the host's own commits (the sweep, a
	// provider's event). The rules of who may decide read it: nobody decides what they
	// requested (docs/design.md, "Who may decide"). Commits written before it was kept have none.
	By string
}

// StreamRecord is a commit as the table's stream carries it, with its run: what every consumer
// of the stream takes (the deliveries, the read models).
type StreamRecord struct {
	Key    Key
	Commit Commit
	// Rewrite marks a commit written over an expired one: a new run of a retired id, whose
	// cursors (the old run's) no longer say anything.
	Rewrite bool
	// Redriven marks a commit read back from the table for a batch the stream gave up on
	// (package dynamostream's Redriver), long after it was made: a subscription made since
	// then did not exist when the stream first brought it, so it does not meet the run there.
	Redriven bool
}

// Stored is c as a store keeps it: its events without the Go values their writer encoded them
// from, so that a read parses them as a read from any other store does.
func (c Commit) Stored() Commit {
	c.Events = slices.Clone(c.Events)
	for i := range c.Events {
		c.Events[i].decoded = nil
	}
	return c
}

// Idem records a request's Idempotency-Key with the commit it made, so a retry finds the
// original answer in the log itself: atomically with the commit, and from any process.
type Idem struct {
	// Key is the Idempotency-Key scoped to its caller.
	Key string
	// Fingerprint identifies the request the key was first used with.
	Fingerprint string
	// Response is the answer given, as JSON, without the resume value its commit holds.
	Response json.RawMessage
	// Value is the commit's resume value, filled in by the fold (never stored with the key).
	Value json.RawMessage `json:"-"`
}

// Envelope is an event as clients read it.
type Envelope struct {
	Seq         int64           `json:"seq"`
	Index       int             `json:"index"`
	Type        string          `json:"type"`
	RunID       string          `json:"runId"`
	NodeID      string          `json:"nodeId,omitempty"`
	InterruptID string          `json:"interruptId,omitempty"`
	At          string          `json:"at"`
	Payload     json.RawMessage `json:"payload"`
}

// TimeFormat is how every timestamp leaves the host: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Size is what the commit adds to its run's log, in bytes of events and idempotency record: what
// the in-memory store bounds one commit by, standing in for DynamoDB's item limit.
func (c Commit) Size() int {
	n := len(c.By)
	for _, e := range c.Events {
		n += len(e.Type) + len(e.NodeID) + len(e.InterruptID) + len(e.Payload)
	}
	if c.Idem != nil {
		n += len(c.Idem.Key) + len(c.Idem.Fingerprint) + len(c.Idem.Response)
	}
	return n
}
