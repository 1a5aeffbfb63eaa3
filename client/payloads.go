package client

import (
	"encoding/json"
	"fmt"
	"time"
)

// Data is one kind's data of an InterruptPayload, typed: Approval, Clarification,
// ExternalEvent, Custom, LowConfidence and the conversation's turns, each marshalling to exactly
// the shape the host's schema admits (schemas/v2/suspend-request.schema.json; the host's tests
// hold each to it). Payload makes the InterruptPayload Request takes of it.
type Data interface{ kind() string }

// Payload is d as Request takes it: {kind, key, timeoutMs?, resumeSchema?, data}. key is the
// re-entry key (the same key again answers the same interrupt); timeout 0 sets no deadline.
func Payload(d Data, key string, timeout time.Duration, resumeSchema json.RawMessage) (json.RawMessage, error) {
	if key == "" {
		return nil, fmt.Errorf("interrupt host: a payload needs its re-entry key")
	}
	out := struct {
		Kind         string          `json:"kind"`
		Key          string          `json:"key"`
		TimeoutMs    int64           `json:"timeoutMs,omitempty"`
		ResumeSchema json.RawMessage `json:"resumeSchema,omitempty"`
		Data         Data            `json:"data"`
	}{d.kind(), key, timeout.Milliseconds(), resumeSchema, d}
	return json.Marshal(out)
}

// Approval asks people to decide on an artifact: Actions of accept, reject, refine,
// edit-accept and ask; a quorum of RequiredApprovals (default 1) under RejectionPolicy
// (single-veto, the default, or majority); who may decide, by principal, group and role
// (each field that is set must admit a decider); whom to notify (Audience: a hint).
type Approval struct {
	ArtifactID             string          `json:"artifactId"`
	ArtifactType           string          `json:"artifactType"`
	Title                  string          `json:"title"`
	Description            string          `json:"description,omitempty"`
	ArtifactData           json.RawMessage `json:"artifactData,omitempty"`
	Actions                []string        `json:"actions"`
	RequiredApprovals      int             `json:"requiredApprovals,omitempty"`
	RejectionPolicy        string          `json:"rejectionPolicy,omitempty"`
	OverrideBypassesQuorum bool            `json:"overrideBypassesQuorum,omitempty"`
	ApproversList          []string        `json:"approversList,omitempty"`
	ApproverGroupRefs      []string        `json:"approverGroupRefs,omitempty"`
	ApproverRoleRefs       []string        `json:"approverRoleRefs,omitempty"`
	Audience               []string        `json:"audience,omitempty"`
}

func (Approval) kind() string { return "approval" }

// Clarification asks people questions, each answered as its Schema says (any JSON without one).
type Clarification struct {
	Questions []Question `json:"questions"`
}

// Question is one question of a Clarification.
type Question struct {
	ID       string          `json:"id"`
	Question string          `json:"question"`
	Schema   json.RawMessage `json:"schema,omitempty"`
}

func (Clarification) kind() string { return "clarification" }

// ExternalEvent waits for a provider's event of EventType whose payload carries Correlation.
type ExternalEvent struct {
	EventType   string `json:"eventType"`
	Correlation string `json:"correlation"`
}

func (ExternalEvent) kind() string { return "external-event" }

// Custom is an interrupt of the engine's own kind, resolved by whoever the engine lets.
type Custom struct {
	CustomKind string          `json:"customKind"`
	Payload    json.RawMessage `json:"payload,omitempty"`
}

func (Custom) kind() string { return "custom" }

// LowConfidence escalates an agent's decision whose confidence (Observed) fell below Threshold.
type LowConfidence struct {
	AgentID   string  `json:"agentId"`
	Threshold float64 `json:"threshold"`
	Observed  float64 `json:"observed"`
}

func (LowConfidence) kind() string { return "low-confidence" }

// ConversationStart, ConversationExchange and ConversationClose are a conversation's turns
// (the host's conversation capability).
type ConversationStart struct {
	ConversationID string `json:"conversationId"`
}

func (ConversationStart) kind() string { return "conversation.start" }

// ConversationExchange is one turn: Prompt, answered as OutcomeSchema says.
type ConversationExchange struct {
	ConversationID string          `json:"conversationId"`
	Prompt         string          `json:"prompt"`
	OutcomeSchema  json.RawMessage `json:"outcomeSchema,omitempty"`
}

func (ConversationExchange) kind() string { return "conversation.exchange" }

// ConversationClose ends a conversation.
type ConversationClose struct {
	ConversationID string `json:"conversationId"`
}

func (ConversationClose) kind() string { return "conversation.close" }

// Decision is an approval's resume value, typed: the action, who decided and when, their
// comment, and what the action carries (the refine feedback, the edited data).
type Decision struct {
	Action             string          `json:"action"`
	DecidedBy          string          `json:"decidedBy,omitempty"`
	DecidedAt          string          `json:"decidedAt,omitempty"`
	Feedback           string          `json:"feedback,omitempty"`
	RefineFeedback     *RefineFeedback `json:"refineFeedback,omitempty"`
	EditedArtifactData json.RawMessage `json:"editedArtifactData,omitempty"`
}

// RefineFeedback says what should change, and where: the whole artifact, a section, or items.
type RefineFeedback struct {
	Scope       string   `json:"scope"`
	SectionPath string   `json:"sectionPath,omitempty"`
	ItemIDs     []string `json:"itemIds,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Text        string   `json:"text,omitempty"`
}

// Answers is a clarification's resume value: each question's answer by its id, and who answered
// and when (DecidedBy as the answerer sent it, else the host fills in the authenticated caller,
// as for a Decision).
type Answers struct {
	Answers   map[string]json.RawMessage `json:"answers"`
	DecidedBy string                     `json:"decidedBy,omitempty"`
	DecidedAt string                     `json:"decidedAt,omitempty"`
}

// Decode reads a resume value (an Outcome's, a Resolution's) into the caller's type: a
// Decision, Answers, or the engine's own. An external event's resume value is the provider's
// event body as it was signed (a Stripe event, a GitHub delivery...): decode it into that
// provider's type.
func Decode[T any](resumeValue json.RawMessage) (T, error) {
	var v T
	if len(resumeValue) == 0 {
		return v, fmt.Errorf("interrupt host: no resume value to decode")
	}
	err := json.Unmarshal(resumeValue, &v)
	return v, err
}
