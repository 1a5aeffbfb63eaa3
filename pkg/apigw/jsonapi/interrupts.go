package jsonapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// requestInterrupt serves POST /runs/{runId}/interrupts: 201 with the new interrupt, or 200 with
// the existing one when the payload's key was requested before.
func (a *API) requestInterrupt(ctx context.Context, c *call) (reply, error) {
	if err := c.ReadRun(); err != nil {
		return reply{}, err
	}
	var body struct {
		NodeID     *string               `json:"nodeId"`
		Payload    json.RawMessage       `json:"payload"`
		Token      *host.TokenRequest    `json:"token"`
		Endpoint   *string               `json:"endpoint"`
		Display    *interrupt.Display    `json:"display"`
		Reminders  *interrupt.Reminders  `json:"reminders"`
		Escalation *interrupt.Escalation `json:"escalation"`
		ToolCall   *interrupt.ToolCall   `json:"toolCall"`
		Policy     *string               `json:"policy"`
	}
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	var absent []string
	if body.NodeID == nil {
		absent = append(absent, "nodeId")
	}
	if body.Payload == nil {
		absent = append(absent, "payload")
	}
	if len(absent) > 0 {
		return reply{}, apigw.Missing(absent...)
	}
	c.NodeID = *body.NodeID
	req := host.Request{NodeID: c.NodeID, Payload: body.Payload, Token: body.Token, Display: body.Display,
		FollowUp: interrupt.FollowUp{Reminders: body.Reminders, Escalation: body.Escalation}, ToolCall: body.ToolCall}
	if body.Endpoint != nil {
		if !runlog.ValidID(*body.Endpoint) {
			return reply{}, interrupt.Invalid("endpoint is not a webhook endpoint id",
				interrupt.FieldError{Path: "/endpoint", Message: "must match ^[A-Za-z0-9._:-]{1,128}$"})
		}
		req.Endpoint = *body.Endpoint
	}
	var under *policy.Policy
	if body.Policy != nil {
		var err error
		if under, err = a.underPolicy(ctx, c, *body.Policy, &req); err != nil {
			return reply{}, err
		}
	}
	view, created, err := a.tokens.RequestInterrupt(ctx, c.Principal, c.RunID, req)
	if err != nil {
		return reply{}, err
	}
	if under != nil && view.Status == interrupt.StatusPending {
		// A routine call: the policy's standing approval approves it at once, as for an agent.
		if m, ok := a.policies.Standing(*under, req.ToolCall.Arguments); ok {
			res, err := a.tokens.ApproveByPolicy(ctx, c.Principal, c.RunID, view.InterruptID, under.Ref(), m)
			if err != nil {
				return reply{}, err
			}
			view.Status, view.ResumeValue = res.Status, res.ResumeValue
		}
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	if view.SamePayload != nil && !*view.SamePayload {
		a.log.WarnContext(ctx, "a replay's payload differs from the one first requested",
			"requestId", c.Req.RequestContext.RequestID, "runId", c.RunID, "nodeId", c.NodeID, "interruptId", view.InterruptID)
	}
	return reply{Status: status, Body: view}, nil
}

// underPolicy makes req an approval of its call asked under the tenant's policy for tool (an
// engine's opt-in, "policy": "<toolName>"; the policy the MCP endpoint's agents ask under):
// the call is required and must be of that tool, and the payload names none of what the
// policy says (policy.Policy.Apply). A tool without a policy in force is not_found: an engine
// that opted in never asks under its own naming by mistake. It answers the policy, whose
// standing approvals the request then meets.
func (a *API) underPolicy(ctx context.Context, c *call, tool string, req *host.Request) (*policy.Policy, error) {
	if req.ToolCall == nil || req.ToolCall.Name != tool {
		return nil, interrupt.Invalid("a request under a policy asks people to allow a call of its tool",
			interrupt.FieldError{Path: "/toolCall/name", Message: "must be " + tool + ", the tool whose policy the request names"})
	}
	p, err := a.policies.Get(ctx, c.Principal, tool)
	if err != nil {
		return nil, err
	}
	payload, err := p.Apply(req.Payload, "/payload")
	if err != nil {
		return nil, err
	}
	ref := p.Ref()
	req.Payload, req.Policy = payload, &ref
	if p.ReceiptTTLMs > 0 {
		if req.ToolCall.ReceiptTTLMs != 0 {
			return nil, interrupt.Invalid(ref.Said()+" says how long the call's receipt redeems",
				interrupt.FieldError{Path: "/toolCall/receiptTtlMs", Message: "is the policy's to say: leave it out"})
		}
		tc := *req.ToolCall
		tc.ReceiptTTLMs = p.ReceiptTTLMs
		req.ToolCall = &tc
	}
	return &p, nil
}

// resolveByRun serves POST /runs/{runId}/interrupts/{nodeId}: 200 when the call exits the
// suspend, 202 when it was recorded without exiting.
func (a *API) resolveByRun(ctx context.Context, c *call) (reply, error) {
	if err := c.ReadRunNode(); err != nil {
		return reply{}, err
	}
	value, idem, err := resolveRequest(c.Req)
	if err != nil {
		return reply{}, err
	}
	res, err := a.host.Resolve(ctx, c.Principal, c.RunID, c.NodeID, value, idem)
	if err != nil {
		return reply{}, err
	}
	return resolution(res), nil
}

// resolveRequest decodes what both resolve surfaces take: the closed body { resumeValue } and
// the Idempotency-Key header.
func resolveRequest(req events.APIGatewayV2HTTPRequest) (json.RawMessage, *host.Idempotency, error) {
	var body struct {
		ResumeValue json.RawMessage `json:"resumeValue"`
	}
	b, err := apigw.DecodeBody(req, &body)
	if err != nil {
		return nil, nil, err
	}
	if body.ResumeValue == nil {
		return nil, nil, apigw.Missing("resumeValue")
	}
	idem, err := apigw.Idempotency(req, b)
	return body.ResumeValue, idem, err
}

// resolution answers a resolve: 200 when it exited the suspend, 202 when it was recorded only,
// marked as a replay when the answer is an earlier request's.
func resolution(res host.Resolution) reply {
	r := reply{Status: http.StatusOK, Body: res}
	if !res.Exited() {
		r.Status = http.StatusAccepted
	}
	if res.Replay != nil {
		r.Body = []byte(res.Replay)
		r.Headers = map[string]string{"Idempotent-Replayed": "true"}
	}
	return r
}
