// Package interrupt holds the domain of the interrupt host: the kinds of interrupt a run can wait
// on, the events that record them, and the errors every operation speaks. It imports nothing of
// AWS or Lambda so that every other package can share its vocabulary.
package interrupt

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind discriminates an InterruptPayload; it decides the payload's data shape, the legacy event
// type emitted beside interrupt.*, and the run status while the interrupt is pending.
type Kind string

// The eight kinds of the spec's Payload table.
const (
	KindApproval             Kind = "approval"
	KindClarification        Kind = "clarification"
	KindExternalEvent        Kind = "external-event"
	KindCustom               Kind = "custom"
	KindConversationStart    Kind = "conversation.start"
	KindConversationExchange Kind = "conversation.exchange"
	KindConversationClose    Kind = "conversation.close"
	KindLowConfidence        Kind = "low-confidence"
)

// IsConversation reports whether the kind is gated on the host's conversation capability.
func (k Kind) IsConversation() bool {
	return k == KindConversationStart || k == KindConversationExchange || k == KindConversationClose
}

// DecidedByPerson reports whether a person answers interrupts of this kind (an approval, a
// clarification, an escalated agent decision, a conversation's turns), so that a token which
// resolves one is a person's credential, minted only under the rules of docs/design.md ("Who
// may decide"). external-event and custom interrupts are answered by machines.
func (k Kind) DecidedByPerson() bool {
	return k != KindExternalEvent && k != KindCustom
}

// Asked reports whether people are asked to decide an interrupt of this kind, so that it is
// filed in inboxes, told and followed up: a person decides it, and it is not a conversation's
// start or close, which the engine opens and closes (Deciders.Asked).
func (k Kind) Asked() bool {
	return k.DecidedByPerson() && k != KindConversationStart && k != KindConversationClose
}

// WaitingStatus is the RunSnapshot status while an interrupt of this kind is pending.
func (k Kind) WaitingStatus() RunStatus {
	switch k {
	case KindApproval:
		return RunWaitingApproval
	case KindExternalEvent, KindCustom:
		return RunWaitingExternal
	default:
		return RunWaitingInput
	}
}

// LegacyPrefix names the kind-specific event family still emitted beside interrupt.* for
// consumers that have not migrated ("" when the kind has none).
func (k Kind) LegacyPrefix() string {
	switch k {
	case KindApproval:
		return "approval"
	case KindClarification:
		return "clarification"
	default:
		return ""
	}
}

// IsLegacyType reports whether an event type is a legacy alias of interrupt.requested or
// interrupt.resolved, which readers derive rather than the log storing it.
func IsLegacyType(t string) bool {
	switch t {
	case "approval.requested", "approval.resolved", "clarification.requested", "clarification.resolved":
		return true
	}
	return false
}

// Payload is the parsed view of an InterruptPayload that the host acts on. The payload itself is
// kept verbatim as Raw: it is what interrupt.requested records and what inspect returns.
type Payload struct {
	Kind         Kind            `json:"kind"`
	Key          string          `json:"key"`
	Data         Data            `json:"data"`
	ResumeSchema json.RawMessage `json:"resumeSchema,omitempty"`
	TimeoutMs    Integer         `json:"timeoutMs,omitempty"`
}

// Data is the union of the kind-specific fields the host itself reads; fields the host only
// stores (titles, prompts, artifacts) stay in the raw payload.
type Data struct {
	Actions                []Action `json:"actions,omitempty"`
	RequiredApprovals      Integer  `json:"requiredApprovals,omitempty"`
	RejectionPolicy        string   `json:"rejectionPolicy,omitempty"`
	OverrideBypassesQuorum bool     `json:"overrideBypassesQuorum,omitempty"`
	ApproversList          []string `json:"approversList,omitempty"`
	ApproverGroupRefs      []string `json:"approverGroupRefs,omitempty"`
	ApproverRoleRefs       []string `json:"approverRoleRefs,omitempty"`
	// Audience is whom to notify, a hint that never grants anything.
	Audience []string `json:"audience,omitempty"`

	Questions     []Question      `json:"questions,omitempty"`
	OutcomeSchema json.RawMessage `json:"outcomeSchema,omitempty"`
	// ConversationID names the conversation of a conversation.* interrupt: one run of the
	// tenant owns it.
	ConversationID string `json:"conversationId,omitempty"`
	// EventType and Correlation name the provider event an external-event interrupt waits for.
	EventType   string `json:"eventType,omitempty"`
	Correlation string `json:"correlation,omitempty"`

	AgentID   string   `json:"agentId,omitempty"`
	Threshold *float64 `json:"threshold,omitempty"`
	Observed  *float64 `json:"observed,omitempty"`
}

// Question is one clarification question; its optional schema constrains the answer.
type Question struct {
	ID     string          `json:"id"`
	Schema json.RawMessage `json:"schema,omitempty"`
}

// Action is one verb of the approval vocabulary.
type Action string

// The approval vocabulary of the spec.
const (
	ActionAccept     Action = "accept"
	ActionReject     Action = "reject"
	ActionRefine     Action = "refine"
	ActionEditAccept Action = "edit-accept"
	ActionAsk        Action = "ask"
)

// Status is the lifecycle of one interrupt as the fold sees it.
type Status string

// Interrupt statuses. Only pending interrupts can be resolved.
const (
	StatusPending   Status = "pending"
	StatusResolved  Status = "resolved"
	StatusExpired   Status = "expired"
	StatusCancelled Status = "cancelled"
)

// RunStatus is the status a RunSnapshot reports.
type RunStatus string

// Run statuses: running when nothing is pending, waiting-* while suspended.
const (
	RunRunning         RunStatus = "running"
	RunWaitingApproval RunStatus = "waiting-approval"
	RunWaitingInput    RunStatus = "waiting-input"
	RunWaitingExternal RunStatus = "waiting-external"
	RunCancelled       RunStatus = "cancelled"
	RunCompleted       RunStatus = "completed"
)

// Event types written to the run log.
const (
	EventRequested     = "interrupt.requested"
	EventResolved      = "interrupt.resolved"
	EventVoted         = "interrupt.voted"
	EventAsked         = "interrupt.asked"
	EventExpired       = "interrupt.expired"
	EventReminded      = "interrupt.reminded"
	EventEscalated     = "interrupt.escalated"
	EventRunCancelled  = "run.cancelled"
	EventRunCompleted  = "run.completed"
	EventAgentDecided  = "agent.decided"
	EventNodeSuspended = "node.suspended"
	EventRunConfigured = "run.configured"
	// EventReceiptRedeemed records the one redemption of an approved call's receipt (Redeemed).
	EventReceiptRedeemed = "receipt.redeemed"
)

// Resolved is the closed payload of interrupt.resolved (and of its legacy aliases).
type Resolved struct {
	NodeID      string          `json:"nodeId"`
	InterruptID string          `json:"interruptId"`
	Kind        Kind            `json:"kind,omitempty"`
	ResumeValue json.RawMessage `json:"resumeValue,omitempty"`
}

// Principal is the authenticated caller of an operation, as the gateway's authorizer vouched
// for it. Tenant scopes every run: a run of another tenant does not exist for this caller.
type Principal struct {
	Subject string
	Tenant  string
	Scopes  []string
	// Groups and Roles are the caller's memberships as its credentials state them now; approval
	// eligibility reads them once, when the caller votes, and records what it found.
	Groups []string
	Roles  []string
	// Token is the id (jti) of the signed token the caller presented, when it came by token.
	Token string
	// Via is how the caller was proven: what the decider model judges beside who it is
	// (Deciders.Accepts, Deciders.Overrides). Zero is no proof the model knows, which decides
	// no more than the weakest.
	Via Via
	// For are the delegations the caller holds in force now, which the host reads when the
	// caller may not decide in its own right (Deciders.Admit).
	For []Delegated
}

// Via is a kind of proof of who a caller is. The proofs differ in what they prove (a JWT and a
// session carry a person's groups and roles; a signed link and a chat click prove a person and
// nothing of their memberships) and in how deliberate the act is (a JWT's call and a signed-in
// page's confirmed form are; a link, which scanners follow, and a click in a chat are not), and
// the decider model judges both (docs/design.md, "Proofs").
type Via string

// The proofs the host accepts of a decider.
const (
	// ViaJWT is a JWT the gateway's authorizer and the function verified: an engine's or a
	// person's, judged alike.
	ViaJWT Via = "jwt"
	// ViaSession is the approval page's or the console's session: the person signed in with the
	// deployment's identity provider, their ID token's groups and roles.
	ViaSession Via = "session"
	// ViaLink is a signed link minted for one interrupt (and maybe one principal).
	ViaLink Via = "link"
	// ViaChat is a click in a chat app: the member a tenant's contact names.
	ViaChat Via = "chat"
)

// Deliberate reports whether a proof is of a deliberate act, as an override must be: a JWT's
// call or a signed-in page's form, never a link or a chat click.
func (v Via) Deliberate() bool { return v == ViaJWT || v == ViaSession }

// Memberships reports whether a proof carries the person's groups and roles, so that a rule
// binding by them can admit the person.
func (v Via) Memberships() bool { return v == ViaJWT || v == ViaSession }

// Scopes the host's rules read, beside those that open routes (docs/engines.md, "The API").
const (
	// ScopeApprovalsRespond lets a caller decide as itself, and mint a token for itself.
	ScopeApprovalsRespond = "approvals:respond"
	// ScopeTokensDelegate lets trusted tooling (a team's own mailer) mint tokens that decide as
	// a named person, and receive them in subscription deliveries.
	ScopeTokensDelegate = "tokens:delegate"
	// ScopeAgentsAsk is the one scope of the agents' sign-in (a person through the MCP clients'
	// app client): it opens the MCP endpoint alone, where its holder asks people as themself, in
	// runs it began, and reads what it asked; no REST route takes it (docs/operations.md,
	// "Who may do what").
	ScopeAgentsAsk = "agents:ask"
)

// Holds reports whether the caller's credentials grant scope.
func (p Principal) Holds(scope string) bool { return slices.Contains(p.Scopes, scope) }

// Credential is the identity an Idempotency-Key is scoped to: the token that authenticates the
// call, or the subject of its JWT. A key is one credential's, so the keys of a person's mail link
// and of the same person's own calls never meet.
func (p Principal) Credential() string {
	if p.Token != "" {
		return "token:" + p.Token
	}
	return "sub:" + p.Subject
}

// Voter is the identity under which the principal's votes are counted: its subject, or for a
// token without one, the token itself.
func (p Principal) Voter() string {
	if p.Subject == "" && p.Token != "" {
		return "token:" + p.Token
	}
	return p.Subject
}

// Rejection policies of an approval.
const (
	PolicySingleVeto = "single-veto"
	PolicyMajority   = "majority"
)

// Ref kinds a host can advertise for approver eligibility.
const (
	RefPrincipal = "principal"
	RefGroup     = "group"
	RefRole      = "role"
)

// Eligibility is why a voter could vote: recorded with the vote, never resolved again.
type Eligibility struct {
	// Via is "open" (the approval names no approvers), "principal", "group" or "role".
	Via string `json:"via"`
	// Ref is the approversList entry, group ref or role ref that admitted the voter.
	Ref string `json:"ref,omitempty"`
	// Also are the other eligibility fields that bound the approval, each with the ref through
	// which it admitted the voter: every field that binds must admit.
	Also []Admission `json:"also,omitempty"`
	// OnBehalfOf is the delegator whose place admitted the voter (Deciders.Admit), whose vote
	// it casts: the vote records it (Vote.OnBehalfOf).
	OnBehalfOf string `json:"-"`
}

// Admission is one eligibility field's admission of a voter.
type Admission struct {
	Via string `json:"via"`
	Ref string `json:"ref"`
}

// Tally counts an approval's votes.
type Tally struct {
	Approvals  int `json:"approvals"`
	Rejections int `json:"rejections"`
	Required   int `json:"required"`
}

// Vote is a counted approval vote, as interrupt.voted records it.
type Vote struct {
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
	Principal   string `json:"principal"`
	// OnBehalfOf is the delegator whose vote a delegate cast: the vote fills the delegator's
	// place (Slot), as their own would have.
	OnBehalfOf string `json:"onBehalfOf,omitempty"`
	Action     Action `json:"action"`
	// ResumeValue is left out of a vote that releases the gate: the interrupt.resolved of the
	// same commit carries it, and readers see it in both (runlog.Commit.Envelopes).
	ResumeValue json.RawMessage `json:"resumeValue,omitempty"`
	Eligibility Eligibility     `json:"eligibility"`
	// Override is set when a configured override principal released the gate alone.
	Override bool `json:"override,omitempty"`
	// Reason says why a vote that would not have released the gate by itself did:
	// ReasonQuorumUnreachable.
	Reason string `json:"reason,omitempty"`
	Tally  Tally  `json:"tally"`
	// Standing is set on the vote of a tenant's policy that approved a call at once: which of
	// its standing approvals the call's arguments matched (Eligibility.Via is EligiblePolicy).
	Standing *StandingMatch `json:"standing,omitempty"`
}

// Slot is whose place the vote fills: the delegator's where a delegate cast it, else its
// principal's. One vote a place, one vote a person (Deciders.Count).
func (v Vote) Slot() string { return cmp.Or(v.OnBehalfOf, v.Principal) }

// By reports whether the vote is who's: cast by them or in their place.
func (v Vote) By(who string) bool { return v.Principal == who || v.OnBehalfOf == who }

// EligiblePolicy is the Eligibility.Via of a policy's own vote: no person was asked, the call
// matched one of the policy's standing approvals (Vote.Standing).
const EligiblePolicy = "policy"

// StandingMatch is the standing approval of a policy a call matched: its place in the policy's
// list, and what the administrators wrote of it.
type StandingMatch struct {
	Index       int    `json:"index"`
	Description string `json:"description"`
}

// PolicyPrincipal is the principal a policy's vote is recorded as: "policy:<tool>@<version>",
// which no person's principal from a JWT is.
func PolicyPrincipal(r PolicyRef) string { return fmt.Sprintf("policy:%s@%d", r.Tool, r.Version) }

// Ask is an approver's question on an approval (action ask), as the host shows it to every
// approver of the interrupt: who asked, when, and what. The engine reads the same in
// interrupt.asked.
type Ask struct {
	Principal string    `json:"principal"`
	At        time.Time `json:"at"`
	Question  string    `json:"question"`
}

// Display is how, and to whom, people are shown an interrupt beyond its payload (which is
// closed): given by the request as a host member, kept with the interrupt, and used by the
// approval page, the inbox and mail.
type Display struct {
	// RequesterName names who asks as people know it ("Accounts payable"), beside the principal
	// that requested.
	RequesterName string `json:"requesterName,omitempty"`
	// ArtifactURL is where the artifact can be read in full: an https URL.
	ArtifactURL string `json:"artifactUrl,omitempty"`
	// Audience are the principals to ask, for a kind whose payload names no audience (a
	// clarification, a low-confidence escalation, a conversation's exchange): a notification
	// hint, as an approval's audience is, never a grant.
	Audience []string `json:"audience,omitempty"`
	// Title and Description are what a kind whose payload has neither (a clarification) is
	// called and what its people need to know, as an approval's data.title and description
	// are: every surface shows them so (Interrupt titles, the page, mail, Slack, the inbox).
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// Display bounds: a name fits a line, a URL what browsers and mail clients keep, an audience a
// team, a title a line (as runlog.MaxTitle), a description a few paragraphs.
const (
	MaxRequesterName  = 200
	MaxArtifactURLLen = 2048
	MaxAudience       = 100
	maxAudienceRef    = 256
	MaxDisplayTitle   = 200
	MaxDescription    = 4000
)

// Check says what is wrong with d, at the JSON Pointer at: a name, title or description that is
// empty, too long or holds control characters; a URL that is not an absolute https URL of a host, carries
// credentials, or is too long; an audience of more than MaxAudience refs, or a ref that is
// empty, too long or holds control characters.
func (d Display) Check(at string) []FieldError {
	var out []FieldError
	if len(d.Audience) > MaxAudience {
		out = append(out, FieldError{Path: at + "/audience", Message: fmt.Sprintf("must name at most %d principals", MaxAudience)})
	}
	for i, ref := range d.Audience {
		if ref == "" || utf8.RuneCountInString(ref) > maxAudienceRef || strings.ContainsFunc(ref, unicode.IsControl) {
			out = append(out, FieldError{Path: fmt.Sprintf("%s/audience/%d", at, i), Message: fmt.Sprintf("must be a principal of 1 to %d characters without control characters", maxAudienceRef)})
		}
	}
	if n := d.RequesterName; n != "" {
		if utf8.RuneCountInString(n) > MaxRequesterName || strings.TrimSpace(n) == "" || strings.ContainsFunc(n, unicode.IsControl) {
			out = append(out, FieldError{Path: at + "/requesterName", Message: fmt.Sprintf("must be a name of 1 to %d characters without control characters", MaxRequesterName)})
		}
	}
	if t := d.Title; t != "" && (utf8.RuneCountInString(t) > MaxDisplayTitle || strings.TrimSpace(t) == "" || strings.ContainsFunc(t, unicode.IsControl)) {
		out = append(out, FieldError{Path: at + "/title", Message: fmt.Sprintf("must be a line of 1 to %d characters without control characters", MaxDisplayTitle)})
	}
	if t := d.Description; t != "" && (utf8.RuneCountInString(t) > MaxDescription || strings.TrimSpace(t) == "" ||
		strings.ContainsFunc(t, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' })) {
		out = append(out, FieldError{Path: at + "/description", Message: fmt.Sprintf("must be 1 to %d characters without control characters but new lines", MaxDescription)})
	}
	if raw := d.ArtifactURL; raw != "" {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || len(raw) > MaxArtifactURLLen || strings.ContainsFunc(raw, unicode.IsSpace) {
			out = append(out, FieldError{Path: at + "/artifactUrl", Message: fmt.Sprintf("must be an absolute https URL of at most %d bytes, without credentials", MaxArtifactURLLen)})
		}
	}
	return out
}

// ReasonQuorumUnreachable is why a rejection released an approval whose quorum the listed
// approvers who had not voted could no longer reach: it is rejected rather than left waiting.
const ReasonQuorumUnreachable = "quorum-unreachable"

// Integer is a JSON integer as JSON Schema counts one: any number with an integral value, so
// 1.0 is 1 (as the published schemas accept it), while 1.5 and numbers past int64 are errors.
type Integer int64

// UnmarshalJSON reads an integral JSON number exactly, without rounding through float64. A
// number beyond the bounds of CheckNumbers is no int64 and is refused before it is parsed,
// which would cost what its magnitude costs.
func (n *Integer) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	r := new(big.Rat)
	ok := b[0] != '"' && CheckNumbers(b, "") == nil
	if ok {
		_, ok = r.SetString(string(b))
	}
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return &json.UnmarshalTypeError{Value: "number " + string(b), Type: reflect.TypeFor[Integer]()}
	}
	*n = Integer(r.Num().Int64())
	return nil
}
