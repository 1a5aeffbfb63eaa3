package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

const requestApprovalDoc = "Ask people to approve something and return at once with the interrupt to wait on (get_outcome). " +
	"Who may decide: approvers (principals), approverGroups, approverRoles (every list given must admit a decider); you, the requester, never can. " +
	"Without runId the host makes a new run; with runId, key is required, and the same runId and key answer the same interrupt instead of asking twice. " +
	"url is the page the approvers decide on."

const askQuestionDoc = "Ask people one or more questions (each with an optional JSON Schema its answer must hold to) and return at once with the interrupt to wait on (get_outcome). " +
	"audience names the principals to ask; without it the tenant's people are. The same runId and key answer the same interrupt, as for request_approval."

const getOutcomeDoc = "What became of an interrupt: status pending, resolved, expired, cancelled or completed (its run ended first). " +
	"While pending it waits up to waitMs (at most 25000) for a decision before answering. " +
	"A resolved approval has action, decidedBy and every counted vote; an answered question its answers and answeredBy."

const listPendingDoc = "The interrupts your tenant's runs wait on, a page at a time (pass next back as after)."

// ApprovalRequest is request_approval's input: an approval, as the host's approval payload has
// it, under names an agent reads.
type ApprovalRequest struct {
	Title             string   `json:"title" jsonschema:"what the approvers are asked to approve, in one line"`
	Description       string   `json:"description,omitempty" jsonschema:"what they need to know to decide"`
	ArtifactID        string   `json:"artifactId,omitempty" jsonschema:"the id of what is approved (an invoice number, a pull request); the key when left out"`
	ArtifactType      string   `json:"artifactType,omitempty" jsonschema:"what kind of thing it is (invoice, deployment, payment); action when left out"`
	Actions           []string `json:"actions,omitempty" jsonschema:"what the approvers may do, of accept, reject, refine, edit-accept, ask; accept and reject when left out"`
	Approvers         []string `json:"approvers,omitempty" jsonschema:"the principals who may decide"`
	ApproverGroups    []string `json:"approverGroups,omitempty" jsonschema:"groups whose members may decide"`
	ApproverRoles     []string `json:"approverRoles,omitempty" jsonschema:"roles whose holders may decide"`
	RequiredApprovals int      `json:"requiredApprovals,omitempty" jsonschema:"how many approvals release it; 1 when left out"`
	RejectionPolicy   string   `json:"rejectionPolicy,omitempty" jsonschema:"single-veto (the default: one rejection rejects) or majority"`
	TimeoutMs         int64    `json:"timeoutMs,omitempty" jsonschema:"how long it may wait before it expires, in milliseconds; no deadline when left out"`
	RunID             string   `json:"runId,omitempty" jsonschema:"the run to ask in; a new one when left out"`
	Key               string   `json:"key,omitempty" jsonschema:"the re-entry key: required with runId; the same runId and key answer the same interrupt"`
}

// QuestionRequest is ask_question's input: a clarification.
type QuestionRequest struct {
	Questions []Question `json:"questions" jsonschema:"the questions, each answered on its own"`
	Audience  []string   `json:"audience,omitempty" jsonschema:"the principals to ask; the tenant's people when left out"`
	TimeoutMs int64      `json:"timeoutMs,omitempty" jsonschema:"how long it may wait before it expires, in milliseconds; no deadline when left out"`
	RunID     string     `json:"runId,omitempty" jsonschema:"the run to ask in; a new one when left out"`
	Key       string     `json:"key,omitempty" jsonschema:"the re-entry key: required with runId; the same runId and key answer the same interrupt"`
}

// Question is one question of ask_question.
type Question struct {
	ID       string         `json:"id" jsonschema:"the answer's name in answers"`
	Question string         `json:"question" jsonschema:"the question, as people read it"`
	Schema   map[string]any `json:"schema,omitempty" jsonschema:"a JSON Schema the answer must hold to; any answer when left out"`
}

// Requested is what request_approval and ask_question answer.
type Requested struct {
	RunID       string `json:"runId"`
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
	Status      string `json:"status" jsonschema:"pending, or how it ended when the key was asked before"`
	Created     bool   `json:"created" jsonschema:"false when the same runId and key asked before: nothing was written"`
	URL         string `json:"url" jsonschema:"the page the people asked decide on"`
}

func (s *Server) requestApproval(ctx context.Context, _ *sdk.CallToolRequest, in ApprovalRequest) (*sdk.CallToolResult, Requested, error) {
	c, err := callerWith(ctx, scopeInterruptsWrite)
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, "request_approval", err)
	}
	runID, key, err := runAndKey(in.RunID, in.Key, "approval")
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, "request_approval", err)
	}
	actions := in.Actions
	if len(actions) == 0 {
		actions = []string{"accept", "reject"}
	}
	data := struct {
		ArtifactID        string   `json:"artifactId"`
		ArtifactType      string   `json:"artifactType"`
		Title             string   `json:"title"`
		Description       string   `json:"description,omitempty"`
		Actions           []string `json:"actions"`
		RequiredApprovals int      `json:"requiredApprovals,omitempty"`
		RejectionPolicy   string   `json:"rejectionPolicy,omitempty"`
		ApproversList     []string `json:"approversList,omitempty"`
		ApproverGroupRefs []string `json:"approverGroupRefs,omitempty"`
		ApproverRoleRefs  []string `json:"approverRoleRefs,omitempty"`
	}{
		ArtifactID: cmp.Or(in.ArtifactID, key), ArtifactType: cmp.Or(in.ArtifactType, "action"), Title: in.Title, Description: in.Description,
		Actions: actions, RequiredApprovals: in.RequiredApprovals, RejectionPolicy: in.RejectionPolicy,
		ApproversList: in.Approvers, ApproverGroupRefs: in.ApproverGroups, ApproverRoleRefs: in.ApproverRoles,
	}
	return s.request(ctx, "request_approval", c, runID, key, interrupt.KindApproval, in.TimeoutMs, data, nil)
}

func (s *Server) askQuestion(ctx context.Context, _ *sdk.CallToolRequest, in QuestionRequest) (*sdk.CallToolResult, Requested, error) {
	c, err := callerWith(ctx, scopeInterruptsWrite)
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, "ask_question", err)
	}
	runID, key, err := runAndKey(in.RunID, in.Key, "question")
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, "ask_question", err)
	}
	var display *interrupt.Display
	if len(in.Audience) > 0 {
		display = &interrupt.Display{Audience: in.Audience}
	}
	data := struct {
		Questions []Question `json:"questions"`
	}{in.Questions}
	return s.request(ctx, "ask_question", c, runID, key, interrupt.KindClarification, in.TimeoutMs, data, display)
}

// request requests the interrupt of kind with data at node key of the run, as request-interrupt
// does: its payload is checked against the host's schema there, and the same key answers the
// interrupt it asked before without writing.
func (s *Server) request(ctx context.Context, tool string, c caller, runID, key string, kind interrupt.Kind, timeoutMs int64, data any, display *interrupt.Display) (*sdk.CallToolResult, Requested, error) {
	payload, err := json.Marshal(struct {
		Kind      interrupt.Kind `json:"kind"`
		Key       string         `json:"key"`
		TimeoutMs int64          `json:"timeoutMs,omitempty"`
		Data      any            `json:"data"`
	}{kind, key, timeoutMs, data})
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, tool, interrupt.Invalid("the request cannot be encoded", interrupt.FieldError{Path: "/", Message: err.Error()}))
	}
	if timeoutMs < 0 {
		return nil, Requested{}, s.toolError(ctx, tool, interrupt.Invalid("timeoutMs is negative", interrupt.FieldError{Path: "/timeoutMs", Message: "must be positive"}))
	}
	view, created, err := s.host.RequestInterrupt(ctx, c.principal, runID, host.Request{NodeID: key, Payload: payload, Display: display})
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, tool, err)
	}
	return nil, Requested{
		RunID: view.RunID, NodeID: view.NodeID, InterruptID: view.InterruptID, Status: string(view.Status),
		Created: created, URL: c.pageURL(view.RunID, view.InterruptID),
	}, nil
}

// OutcomeRequest is get_outcome's input.
type OutcomeRequest struct {
	RunID       string `json:"runId" jsonschema:"the run request_approval or ask_question answered"`
	InterruptID string `json:"interruptId" jsonschema:"the interrupt request_approval or ask_question answered"`
	WaitMs      int64  `json:"waitMs,omitempty" jsonschema:"how long to wait for a decision while it is pending, in milliseconds, at most 25000; 0 answers at once"`
}

// Outcome is what get_outcome answers.
type Outcome struct {
	RunID       string `json:"runId"`
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
	Kind        string `json:"kind"`
	Status      string `json:"status" jsonschema:"pending, resolved, expired, cancelled or completed (its run ended first)"`
	// Action, DecidedBy and Feedback are an approval's decision (the vote that released it).
	Action    string `json:"action,omitempty" jsonschema:"a decided approval's action: accept, reject, refine or edit-accept"`
	DecidedBy string `json:"decidedBy,omitempty" jsonschema:"who decided, as recorded"`
	Feedback  string `json:"feedback,omitempty" jsonschema:"the decider's comment"`
	Votes     []Vote `json:"votes,omitempty" jsonschema:"an approval's counted votes, in order"`
	// Answers and AnsweredBy are an answered question's.
	Answers     map[string]any `json:"answers,omitempty" jsonschema:"an answered question's answers, by question id"`
	AnsweredBy  string         `json:"answeredBy,omitempty" jsonschema:"who answered"`
	ResumeValue any            `json:"resumeValue,omitempty" jsonschema:"the resume value as recorded"`
	URL         string         `json:"url" jsonschema:"the page the people asked decide on"`
}

// Vote is one counted vote of an approval.
type Vote struct {
	Principal string `json:"principal"`
	Action    string `json:"action"`
	Feedback  string `json:"feedback,omitempty"`
}

func (s *Server) getOutcome(ctx context.Context, _ *sdk.CallToolRequest, in OutcomeRequest) (*sdk.CallToolResult, Outcome, error) {
	c, err := callerWith(ctx, scopeRunsRead)
	if err == nil && in.WaitMs < 0 {
		err = interrupt.Invalid("waitMs is negative", interrupt.FieldError{Path: "/waitMs", Message: "must be 0 to 25000"})
	}
	if err != nil {
		return nil, Outcome{}, s.toolError(ctx, "get_outcome", err)
	}
	wait := min(time.Duration(in.WaitMs)*time.Millisecond, MaxWait)
	deadline := time.Now().Add(wait)
	var r reading
	for {
		if err := r.readOn(ctx, s.host, c.principal, in.RunID, in.InterruptID); err != nil {
			return nil, Outcome{}, s.toolError(ctx, "get_outcome", err)
		}
		left := time.Until(deadline)
		if r.out.Status != "pending" || left <= 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil, Outcome{}, s.toolError(ctx, "get_outcome", ctx.Err())
		case <-time.After(min(s.poll, left)):
		}
	}
	r.out.URL = c.pageURL(r.out.RunID, r.out.InterruptID)
	return nil, r.out, nil
}

// PendingRequest is list_pending's input.
type PendingRequest struct {
	After string `json:"after,omitempty" jsonschema:"the next of the page before; the first page when left out"`
	Limit int    `json:"limit,omitempty" jsonschema:"about how many to answer, 1 to 100; 25 when left out"`
}

// PendingPage is what list_pending answers.
type PendingPage struct {
	Interrupts []Pending `json:"interrupts"`
	Next       string    `json:"next,omitempty" jsonschema:"pass it back as after for the next page; none on the last"`
}

// Pending is one interrupt a run waits on.
type Pending struct {
	RunID       string   `json:"runId"`
	NodeID      string   `json:"nodeId"`
	InterruptID string   `json:"interruptId"`
	Key         string   `json:"key"`
	Kind        string   `json:"kind"`
	Title       string   `json:"title,omitempty"`
	RequestedAt string   `json:"requestedAt"`
	ExpiresAt   string   `json:"expiresAt,omitempty"`
	WaitingOn   []string `json:"waitingOn,omitempty" jsonschema:"whom it waits on: principal:alice, group:finance, role:manager, anyone"`
	URL         string   `json:"url"`
}

func (s *Server) listPending(ctx context.Context, _ *sdk.CallToolRequest, in PendingRequest) (*sdk.CallToolResult, PendingPage, error) {
	c, err := callerWith(ctx, scopeRunsRead)
	if err == nil && (in.Limit < 0 || in.Limit > 100) {
		err = interrupt.Invalid("limit is out of range", interrupt.FieldError{Path: "/limit", Message: "must be 1 to 100"})
	}
	if err != nil {
		return nil, PendingPage{}, s.toolError(ctx, "list_pending", err)
	}
	limit := in.Limit
	if limit == 0 {
		limit = 25
	}
	page, err := s.host.PendingInterrupts(ctx, c.principal, in.After, limit)
	if err != nil {
		return nil, PendingPage{}, s.toolError(ctx, "list_pending", err)
	}
	out := PendingPage{Interrupts: []Pending{}, Next: page.Next}
	for _, p := range page.Interrupts {
		out.Interrupts = append(out.Interrupts, Pending{
			RunID: p.RunID, NodeID: p.NodeID, InterruptID: p.InterruptID, Key: p.Key, Kind: string(p.Kind), Title: p.Title,
			RequestedAt: p.RequestedAt, ExpiresAt: p.ExpiresAt, WaitingOn: p.WaitingOn, URL: c.pageURL(p.RunID, p.InterruptID),
		})
	}
	return nil, out, nil
}
