package jsonapi

import (
	"context"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/policy"
)

// policyTool is the tool the path names: {toolName}, or the default's on /policies/default.
func policyTool(c *call) string {
	if tool, ok := c.Req.PathParameters["toolName"]; ok {
		return tool
	}
	return policy.Default
}

// putPolicy serves PUT /policies/tools/{toolName} and PUT /policies/default: the rule as the
// next version, 201 when none was in force, 200 when it replaced one.
func (a *API) putPolicy(ctx context.Context, c *call) (reply, error) {
	var body policy.Rule
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	made, created, err := a.policies.Put(ctx, c.Principal, policyTool(c), body)
	if err != nil {
		return reply{}, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return reply{Status: status, Body: made}, nil
}

// getPolicy serves GET /policies/tools/{toolName} and GET /policies/default.
func (a *API) getPolicy(ctx context.Context, c *call) (reply, error) {
	got, err := a.policies.Get(ctx, c.Principal, policyTool(c))
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: got}, nil
}

// deletePolicy serves DELETE /policies/tools/{toolName} and DELETE /policies/default: 204.
func (a *API) deletePolicy(ctx context.Context, c *call) (reply, error) {
	if err := a.policies.Delete(ctx, c.Principal, policyTool(c)); err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusNoContent}, nil
}

// listPolicies serves GET /policies/tools: the tenant's policies in force, the default first.
func (a *API) listPolicies(ctx context.Context, c *call) (reply, error) {
	all, err := a.policies.List(ctx, c.Principal)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: struct {
		Policies []policy.Policy `json:"policies"`
	}{all}}, nil
}
