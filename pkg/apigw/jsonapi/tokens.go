package jsonapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/host"
)

// inspectByToken serves GET (and HEAD) /interrupts/{token}: the InterruptPayload, verbatim.
func (a *API) inspectByToken(ctx context.Context, c *call) (reply, error) {
	payload, who, err := a.tokens.Inspect(ctx, c.Req.PathParameters["token"])
	c.RunID, c.NodeID = who.RunID, who.NodeID
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: []byte(payload)}, nil
}

// resolveByToken serves POST /interrupts/{token} with body { resumeValue }: the token is
// verified first, so a bad token is 401 whatever the body.
func (a *API) resolveByToken(ctx context.Context, c *call) (reply, error) {
	grant, err := a.tokens.Authorize(ctx, c.Req.PathParameters["token"])
	c.RunID, c.NodeID = grant.Caller.RunID, grant.Caller.NodeID
	if err != nil {
		return reply{}, err
	}
	value, idem, err := resolveRequest(c.Req)
	if err != nil {
		return reply{}, err
	}
	res, err := a.host.ResolveByToken(ctx, grant, value, idem)
	if err != nil {
		return reply{}, err
	}
	return resolution(res), nil
}

// MintedToken is mint-token's answer: the token, and the approval page it opens, which is what
// a person is given (a mail, a chat message).
type MintedToken struct {
	host.TokenView
	URL string `json:"url"`
}

// mintToken serves POST /runs/{runId}/interrupts/{nodeId}/tokens with body
// { intent, ttlMs?, principal? }: 201 with { token, intent, expiresAt, url }. The engine mints
// callbacks and inspect tokens (interrupts:write), an approver its own link
// (approvals:respond), trusted tooling a person's (tokens:delegate); the host decides which
// token each may have.
func (a *API) mintToken(ctx context.Context, c *call) (reply, error) {
	if err := c.ReadRunNode(); err != nil {
		return reply{}, err
	}
	var body host.TokenRequest
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	base, err := a.gw.BaseURL(c.Req)
	if err != nil {
		return reply{}, err
	}
	tv, err := a.tokens.MintToken(ctx, c.Principal, c.RunID, c.NodeID, body)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusCreated, Body: MintedToken{TokenView: tv, URL: strings.TrimSuffix(base, "/") + "/approve/" + tv.Token}}, nil
}
