package jsonapi

import (
	"context"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/delegation"
)

// putDelegation serves PUT /delegations/{principal}: the principal's delegation, replacing any.
func (a *API) putDelegation(ctx context.Context, c *call) (reply, error) {
	var body delegation.Request
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	d, err := a.away.Set(ctx, c.Principal, c.Req.PathParameters["principal"], body)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: d}, nil
}

// getDelegation serves GET /delegations/{principal}: in force, to come or ended.
func (a *API) getDelegation(ctx context.Context, c *call) (reply, error) {
	d, err := a.away.Get(ctx, c.Principal, c.Req.PathParameters["principal"])
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: d}, nil
}

// deleteDelegation serves DELETE /delegations/{principal}: ends it at once, and answers it
// ended.
func (a *API) deleteDelegation(ctx context.Context, c *call) (reply, error) {
	d, err := a.away.End(ctx, c.Principal, c.Req.PathParameters["principal"])
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: d}, nil
}

// listDelegations serves GET /delegations: the tenant's, by principal.
func (a *API) listDelegations(ctx context.Context, c *call) (reply, error) {
	all, err := a.away.List(ctx, c.Principal)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: struct {
		Delegations []delegation.Delegation `json:"delegations"`
	}{all}}, nil
}
