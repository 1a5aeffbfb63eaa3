package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

const requestApprovalDoc = "Ask people to approve something and return at once with the interrupt to wait on (get_outcome). " +
	"Who may decide: approvers (principals), approverGroups, approverRoles; name at least one of them (every list given must admit a decider); you, the requester, never can. " +
	"Without runId the host makes a new run and completes it once nothing in it is open (the interrupt closed; an approved call's receipt redeemed or expired); with runId, key is required, and the same runId and key answer the same interrupt instead of asking twice. " +
	"With toolCall {name, arguments}, the approvers see the exact call and may edit its arguments; an accepted outcome answers the call as approved and a receipt for it. " +
	"When the tenant has a policy for toolCall's tool (or a default policy), the policy says who decides, requiredApprovals, rejectionPolicy, actions, timeoutMs and toolCall.receiptTtlMs: leave them all out (a request naming any is refused, naming the policy), and say only what the call is (title, description). " +
	"url is the page the approvers decide on."

const askQuestionDoc = "Ask people one or more questions (each with an optional JSON Schema its answer must hold to), under a title and with a description that give them the context, and return at once with the interrupt to wait on (get_outcome). " +
	"audience names the principals to notify (a hint, not a limit: anyone of your tenant who may respond can answer; you, the requester, cannot). The same runId and key answer the same interrupt, as for request_approval."

const getOutcomeDoc = "What became of an interrupt: status pending, resolved, expired, cancelled or completed (its run ended first). " +
	"While pending it waits up to waitMs (at most 25000) for a decision before answering. " +
	"A resolved approval has action, decidedBy (the principal whose vote released it) and every counted vote; an answered question its answers and answeredBy (the principal who answered). " +
	"An accepted approval of a toolCall has approvedCall (make that call, with those arguments, and no other: an approver may have edited them) and receipt, which whoever makes the call redeems once before making it."

const listPendingDoc = "The interrupts you requested that still wait, a page at a time (pass next back as after)."

const endRunDoc = "End a run once you are done with it: completed (the default) or cancelled, with a reason. " +
	"Its interrupts that still wait end with it, and the host keeps it for its retention period only. Ending it the same way again changes nothing. " +
	"You may end a run you began (by asking in it); a run someone else began is refused."

// ApprovalRequest is request_approval's input: an approval, as the host's approval payload has
// it, under names an agent reads.
type ApprovalRequest struct {
	Title             string    `json:"title" jsonschema:"what the approvers are asked to approve, in one line"`
	Description       string    `json:"description,omitempty" jsonschema:"what they need to know to decide"`
	ArtifactID        string    `json:"artifactId,omitempty" jsonschema:"the id of what is approved (an invoice number, a pull request); the key when left out"`
	ArtifactType      string    `json:"artifactType,omitempty" jsonschema:"what kind of thing it is (invoice, deployment, payment); action when left out"`
	Actions           []string  `json:"actions,omitempty" jsonschema:"what the approvers may do, of accept, reject, refine, edit-accept, ask; accept and reject when left out; left out under a tenant's policy"`
	Approvers         []string  `json:"approvers,omitempty" jsonschema:"the principals who may decide; left out under a tenant's policy"`
	ApproverGroups    []string  `json:"approverGroups,omitempty" jsonschema:"groups whose members may decide; left out under a tenant's policy"`
	ApproverRoles     []string  `json:"approverRoles,omitempty" jsonschema:"roles whose holders may decide; left out under a tenant's policy"`
	RequiredApprovals int       `json:"requiredApprovals,omitempty" jsonschema:"how many approvals release it; 1 when left out; left out under a tenant's policy"`
	RejectionPolicy   string    `json:"rejectionPolicy,omitempty" jsonschema:"single-veto (the default: one rejection rejects) or majority; left out under a tenant's policy"`
	TimeoutMs         int64     `json:"timeoutMs,omitempty" jsonschema:"how long it may wait before it expires, in milliseconds; no deadline when left out"`
	RunID             string    `json:"runId,omitempty" jsonschema:"the run to ask in; a new one when left out"`
	Key               string    `json:"key,omitempty" jsonschema:"the re-entry key: required with runId; the same runId and key answer the same interrupt"`
	ToolCall          *ToolCall `json:"toolCall,omitempty" jsonschema:"the exact call to approve: the approvers see it, may edit its arguments, and an accepted outcome answers the call as approved with a receipt that whoever makes the call redeems once"`
}

// ToolCall is the call request_approval asks people to allow.
type ToolCall struct {
	Name         string         `json:"name" jsonschema:"the tool's name"`
	Arguments    map[string]any `json:"arguments" jsonschema:"the arguments it would be called with, by name"`
	ReceiptTTLMs int64          `json:"receiptTtlMs,omitempty" jsonschema:"how long after the decision the receipt redeems, in milliseconds, 1000 to 86400000; 900000 (15 minutes) when left out"`
}

// QuestionRequest is ask_question's input: a clarification.
type QuestionRequest struct {
	Title       string     `json:"title,omitempty" jsonschema:"what the people asked are asked, in one line (the page's heading, the mail's subject, the inbox's line); the first question when left out"`
	Description string     `json:"description,omitempty" jsonschema:"what they need to know to answer"`
	Questions   []Question `json:"questions" jsonschema:"the questions, each answered on its own"`
	Audience    []string   `json:"audience,omitempty" jsonschema:"the principals to notify: a hint, not a limit on who may answer"`
	TimeoutMs   int64      `json:"timeoutMs,omitempty" jsonschema:"how long it may wait before it expires, in milliseconds; no deadline when left out"`
	RunID       string     `json:"runId,omitempty" jsonschema:"the run to ask in; a new one when left out"`
	Key         string     `json:"key,omitempty" jsonschema:"the re-entry key: required with runId; the same runId and key answer the same interrupt"`
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

func (s *Server) requestApproval(ctx context.Context, req *sdk.CallToolRequest, in ApprovalRequest) (*sdk.CallToolResult, Requested, error) {
	c, err := callerWith(ctx, "request_approval")
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, "request_approval", err)
	}
	runID, key, made, err := runAndKey(in.RunID, in.Key, "approval")
	var rule *policy.Policy
	if err == nil && in.ToolCall != nil && s.policies != nil {
		rule, err = s.policies.For(ctx, c.principal.Tenant, in.ToolCall.Name)
	}
	if rule != nil {
		return s.requestUnder(ctx, req, c, asking{runID, key, made}, in, *rule)
	}
	if err == nil && len(in.Approvers)+len(in.ApproverGroups)+len(in.ApproverRoles) == 0 {
		err = interrupt.Invalid("name who decides: an approval nobody is named for could be granted by anyone of the tenant",
			interrupt.FieldError{Path: "/approvers", Message: "name at least one principal, or give approverGroups or approverRoles"})
	}
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
	// The host refuses too what names no one who binds (a group where only principals do).
	with := host.Request{NamedDeciders: true}
	if in.ToolCall != nil {
		with.ToolCall = &interrupt.ToolCall{Name: in.ToolCall.Name, Arguments: rawArguments(req), ReceiptTTLMs: in.ToolCall.ReceiptTTLMs}
	}
	return s.request(ctx, "request_approval", c, asking{runID, key, made}, payload{kind: interrupt.KindApproval, timeoutMs: in.TimeoutMs, data: data}, with)
}

// requestUnder requests the approval of in's call under the tenant's policy p: who decides,
// the quorum, the rejection policy, the actions, the deadline and the receipt's life are the
// policy's, and an agent that names any of them is refused, naming the policy (nothing is
// written): the agent says what the call is, never who allows it.
func (s *Server) requestUnder(ctx context.Context, req *sdk.CallToolRequest, c caller, at asking, in ApprovalRequest, p policy.Policy) (*sdk.CallToolResult, Requested, error) {
	var named []interrupt.FieldError
	for _, f := range []struct {
		path string
		set  bool
	}{
		{"/approvers", len(in.Approvers) > 0}, {"/approverGroups", len(in.ApproverGroups) > 0}, {"/approverRoles", len(in.ApproverRoles) > 0},
		{"/requiredApprovals", in.RequiredApprovals != 0}, {"/rejectionPolicy", in.RejectionPolicy != ""}, {"/actions", len(in.Actions) > 0},
		{"/timeoutMs", in.TimeoutMs != 0}, {"/toolCall/receiptTtlMs", in.ToolCall.ReceiptTTLMs != 0},
	} {
		if f.set {
			named = append(named, interrupt.FieldError{Path: f.path, Message: "is the policy's to say: leave it out"})
		}
	}
	said := p.Ref().Said()
	if len(named) > 0 {
		return nil, Requested{}, s.toolError(ctx, "request_approval", interrupt.Invalid(
			said+" says who decides calls of "+in.ToolCall.Name+", how many must approve, what they may do and until when: a request under it names none of them", named...))
	}
	raw, err := p.Payload(at.key, in.Title, in.Description, cmp.Or(in.ArtifactID, at.key), cmp.Or(in.ArtifactType, "action"))
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, "request_approval", err)
	}
	ref, args := p.Ref(), rawArguments(req)
	with := host.Request{NamedDeciders: true, Policy: &ref,
		ToolCall: &interrupt.ToolCall{Name: in.ToolCall.Name, Arguments: args, ReceiptTTLMs: p.ReceiptTTLMs}}
	result, asked, err := s.request(ctx, "request_approval", c, at, payload{raw: raw}, with)
	if err != nil || asked.Status != string(interrupt.StatusPending) {
		return result, asked, err
	}
	// A routine call: the policy approves it at once, as its vote, and the agent's get_outcome
	// answers the approved call and its receipt. A retry of the same runId and key finds it
	// approved, or approves it then if the first try stopped between the two writes.
	match, ok := s.policies.Standing(p, args)
	if !ok {
		return result, asked, nil
	}
	res, err := s.host.ApproveByPolicy(ctx, c.principal, asked.RunID, asked.InterruptID, ref, match)
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, "request_approval", fmt.Errorf("%w (asked as %s %s: its approval waits for people until the call is asked again with that runId and key)", err, asked.RunID, asked.NodeID))
	}
	asked.Status = string(res.Status)
	return result, asked, nil
}

func (s *Server) askQuestion(ctx context.Context, _ *sdk.CallToolRequest, in QuestionRequest) (*sdk.CallToolResult, Requested, error) {
	c, err := callerWith(ctx, "ask_question")
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, "ask_question", err)
	}
	runID, key, made, err := runAndKey(in.RunID, in.Key, "question")
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, "ask_question", err)
	}
	var display *interrupt.Display
	if len(in.Audience) > 0 || in.Title != "" || in.Description != "" {
		display = &interrupt.Display{Audience: in.Audience, Title: in.Title, Description: in.Description}
	}
	data := struct {
		Questions []Question `json:"questions"`
	}{in.Questions}
	return s.request(ctx, "ask_question", c, asking{runID, key, made}, payload{kind: interrupt.KindClarification, timeoutMs: in.TimeoutMs, data: data}, host.Request{Display: display})
}

// rawArguments are the toolCall's arguments of request_approval's call as the agent sent them:
// the call people see and approve is the agent's, its members in its order and its numbers as
// written, not the decoded map's sorted re-encoding. nil when there are none.
func rawArguments(req *sdk.CallToolRequest) json.RawMessage {
	var raw struct {
		ToolCall *struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCall"`
	}
	if req == nil || req.Params == nil || json.Unmarshal(req.Params.Arguments, &raw) != nil || raw.ToolCall == nil {
		return nil
	}
	return raw.ToolCall.Arguments
}

// asking is where a request asks: its run, its key (and node), and whether the run was made
// for it.
type asking struct {
	runID, key string
	made       bool
}

// payload is what a tool asks beside where it asks (asking, whose key is the payload's too):
// the interrupt's kind, how long it may wait (0: no deadline) and its data.
type payload struct {
	kind      interrupt.Kind
	timeoutMs int64
	data      any
	// raw is the payload whole, made elsewhere (a policy's, policy.Rule.Payload); kind,
	// timeoutMs and data are then unused.
	raw json.RawMessage
}

// request requests the interrupt of what's kind with its data at node key of the run, with what
// the request carries beside its payload (with's Display, ToolCall), as request-interrupt
// does: its payload is checked against the host's schema there, and the same key answers the
// interrupt it asked before without writing. A run made for it is the host's to complete
// (host.Request.EndsRun): the agent named none, so nothing else would end it. A request whose
// outcome is unknown, in a run made for it, says which run and key to ask again with, so that
// the retry never asks twice.
func (s *Server) request(ctx context.Context, tool string, c caller, at asking, what payload, with host.Request) (*sdk.CallToolResult, Requested, error) {
	if what.timeoutMs < 0 {
		return nil, Requested{}, s.toolError(ctx, tool, interrupt.Invalid("timeoutMs is negative", interrupt.FieldError{Path: "/timeoutMs", Message: "must be positive"}))
	}
	raw, err := what.raw, error(nil)
	if raw == nil {
		raw, err = json.Marshal(struct {
			Kind      interrupt.Kind `json:"kind"`
			Key       string         `json:"key"`
			TimeoutMs int64          `json:"timeoutMs,omitempty"`
			Data      any            `json:"data"`
		}{what.kind, at.key, what.timeoutMs, what.data})
	}
	if err != nil {
		return nil, Requested{}, s.toolError(ctx, tool, err)
	}
	with.NodeID, with.Payload, with.OwnRun, with.EndsRun = at.key, raw, c.self, at.made
	view, created, err := s.host.RequestInterrupt(ctx, c.principal, at.runID, with)
	if err != nil {
		failed := s.toolError(ctx, tool, err)
		switch interrupt.ErrorCode(err) {
		case interrupt.CodeUnavailable, interrupt.CodeOutcomeUnknown, interrupt.CodeInternal:
			if at.made {
				failed = fmt.Errorf("%w (call again with runId %q and key %q: the same runId and key never ask twice)", failed, at.runID, at.key)
			}
		}
		return nil, Requested{}, failed
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
	WaitMs      int64  `json:"waitMs,omitempty" jsonschema:"how long to wait for a decision while it is pending, in milliseconds; at most 25000 is waited; 0 answers at once"`
}

// Outcome is what get_outcome answers: the host's document of an outcome, as REST answers it.
type Outcome = host.OutcomeDocument

func (s *Server) getOutcome(ctx context.Context, _ *sdk.CallToolRequest, in OutcomeRequest) (*sdk.CallToolResult, Outcome, error) {
	c, err := callerWith(ctx, "get_outcome")
	if err == nil && in.WaitMs < 0 {
		err = interrupt.Invalid("waitMs is negative", interrupt.FieldError{Path: "/waitMs", Message: "must be 0 to 25000"})
	}
	if err != nil {
		return nil, Outcome{}, s.toolError(ctx, "get_outcome", err)
	}
	deadline := time.Now().Add(time.Duration(min(in.WaitMs, MaxWait.Milliseconds())) * time.Millisecond)
	for {
		o, err := s.host.InterruptOutcome(ctx, c.principal, in.RunID, in.InterruptID)
		if c.self && (err == nil && o.RequestedBy != c.principal.Voter() || interrupt.ErrorCode(err) == interrupt.CodeNotFound) {
			// One answer for another's interrupt, one not there, and a run not there.
			err = interrupt.Errorf(interrupt.CodeNotFound, "no interrupt %s you requested in run %s", in.InterruptID, in.RunID)
		}
		if err != nil {
			return nil, Outcome{}, s.toolError(ctx, "get_outcome", err)
		}
		left := time.Until(deadline)
		if o.Status != interrupt.StatusPending || left <= 0 {
			return nil, o.Document(c.pageURL(o.RunID, o.InterruptID)), nil
		}
		select {
		case <-ctx.Done():
			return nil, Outcome{}, ctx.Err()
		case <-time.After(min(s.poll, left)):
		}
	}
}

// PendingRequest is list_pending's input.
type PendingRequest struct {
	After string `json:"after,omitempty" jsonschema:"the next of the page before; the first page when left out"`
	Limit int    `json:"limit,omitempty" jsonschema:"about how many to answer, 1 to 100; 25 when left out"`
}

// PendingPage is what list_pending answers: the caller's own of a page of the tenant's pending
// list, so a page may hold fewer than its limit, even none, with next to read on.
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
	c, err := callerWith(ctx, "list_pending")
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
		if p.RequestedBy != c.principal.Subject {
			continue
		}
		out.Interrupts = append(out.Interrupts, Pending{
			RunID: p.RunID, NodeID: p.NodeID, InterruptID: p.InterruptID, Key: p.Key, Kind: string(p.Kind), Title: p.Title,
			RequestedAt: p.RequestedAt, ExpiresAt: p.ExpiresAt, WaitingOn: p.WaitingOn, URL: c.pageURL(p.RunID, p.InterruptID),
		})
	}
	return nil, out, nil
}

// EndRunRequest is end_run's input.
type EndRunRequest struct {
	RunID   string `json:"runId" jsonschema:"the run to end: one request_approval or ask_question answered"`
	Outcome string `json:"outcome,omitempty" jsonschema:"completed (the default: you are done) or cancelled (you gave up)"`
	Reason  string `json:"reason,omitempty" jsonschema:"why, as people read it in the run's history"`
}

// Ended is what end_run answers.
type Ended struct {
	RunID  string `json:"runId"`
	Status string `json:"status" jsonschema:"completed or cancelled: how the run ended (the first end, if it had ended before)"`
}

// endRun ends a run the caller names, as end-run does: an engine's token any run of its
// tenant, a person through the agents' client only a run they began.
func (s *Server) endRun(ctx context.Context, _ *sdk.CallToolRequest, in EndRunRequest) (*sdk.CallToolResult, Ended, error) {
	c, err := callerWith(ctx, "end_run")
	end := interrupt.RunStatus(cmp.Or(in.Outcome, string(interrupt.RunCompleted)))
	if err == nil && end != interrupt.RunCompleted && end != interrupt.RunCancelled {
		err = interrupt.Invalid("outcome is completed or cancelled", interrupt.FieldError{Path: "/outcome", Message: "must be completed or cancelled"})
	}
	if err == nil && !runlog.ValidID(in.RunID) {
		err = interrupt.Invalid("runId is not an id", interrupt.FieldError{Path: "/runId", Message: "must be 1 to 128 of A-Z a-z 0-9 . _ : -"})
	}
	if err != nil {
		return nil, Ended{}, s.toolError(ctx, "end_run", err)
	}
	endRun := s.host.EndRun
	if c.self {
		endRun = s.host.EndOwnRun
	}
	r, err := endRun(ctx, c.principal, in.RunID, end, in.Reason)
	if err != nil {
		return nil, Ended{}, s.toolError(ctx, "end_run", err)
	}
	return nil, Ended{RunID: r.RunID, Status: string(r.Status)}, nil
}
