package apigw

import (
	"context"
	"net/http"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// InspectByToken serves GET (and HEAD) /interrupts/{token}: the InterruptPayload, verbatim.
func (a *API) InspectByToken() Handler {
	return a.route(noJWT, func(ctx context.Context, c *call) (reply, error) {
		payload, who, err := a.host.Inspect(ctx, c.req.PathParameters["token"])
		c.runID, c.nodeID = who.RunID, who.NodeID
		if err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusOK, body: []byte(payload)}, nil
	})
}

// ResolveByToken serves POST /interrupts/{token} with body { resumeValue }: the token is
// verified first, so a bad token is 401 whatever the body.
func (a *API) ResolveByToken() Handler {
	return a.route(noJWT, func(ctx context.Context, c *call) (reply, error) {
		grant, err := a.host.Authorize(ctx, c.req.PathParameters["token"])
		c.runID, c.nodeID = grant.Caller.RunID, grant.Caller.NodeID
		if err != nil {
			return reply{}, err
		}
		value, idem, err := resolveRequest(c.req)
		if err != nil {
			return reply{}, err
		}
		res, err := a.host.ResolveByToken(ctx, grant, value, idem)
		if err != nil {
			return reply{}, err
		}
		return resolution(res), nil
	})
}

// MintToken serves POST /runs/{runId}/interrupts/{nodeId}/tokens with body
// { intent, ttlMs?, principal? }: 201 with { token, intent, expiresAt }. The engine mints
// callbacks and inspect tokens (interrupts:write), an approver its own link
// (approvals:respond), trusted tooling a person's (tokens:delegate); the host decides which
// token each may have.
func (a *API) MintToken() Handler {
	return a.routeAny([]string{ScopeInterruptsWrite, ScopeApprovalsRespond, ScopeTokensDelegate}, func(ctx context.Context, c *call) (reply, error) {
		if err := c.readRunNode(); err != nil {
			return reply{}, err
		}
		var body host.TokenRequest
		if _, err := decodeBody(c.req, &body); err != nil {
			return reply{}, err
		}
		tv, err := a.host.MintToken(ctx, c.principal, c.runID, c.nodeID, body)
		if err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusCreated, body: tv}, nil
	})
}

// EndRun serves POST /runs/{runId}/cancel and POST /runs/{runId}/complete, with an optional
// body { reason }.
func (a *API) EndRun() Handler {
	return a.route(ScopeInterruptsWrite, func(ctx context.Context, c *call) (reply, error) {
		if err := c.readRun(); err != nil {
			return reply{}, err
		}
		var end interrupt.RunStatus
		switch {
		case strings.HasSuffix(c.req.RouteKey, "/cancel"):
			end = interrupt.RunCancelled
		case strings.HasSuffix(c.req.RouteKey, "/complete"):
			end = interrupt.RunCompleted
		default:
			return reply{}, interrupt.Errorf(interrupt.CodeNotFound, "no such operation")
		}
		var body struct {
			Reason string `json:"reason"`
		}
		if c.req.Body != "" {
			if _, err := decodeBody(c.req, &body); err != nil {
				return reply{}, err
			}
			if len(body.Reason) > 4096 {
				return reply{}, interrupt.Invalid("reason is too long", interrupt.FieldError{Path: "/reason", Message: "must be at most 4096 characters"})
			}
		}
		res, err := a.host.EndRun(ctx, c.principal, c.runID, end, body.Reason)
		if err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusOK, body: res}, nil
	})
}
