// Package mcphttp serves the Model Context Protocol endpoint, /mcp, to API Gateway: the bearer
// JWT checked as the gateway's authorizer would (its route has none), the caller's origin, one
// message per request, and the request handed to the tool server (pkg/mcp) as net/http; and the
// endpoint's protected resource metadata.
package mcphttp

import (
	"github.com/interrupthost/interrupthost/pkg/apigw"
)

type (
	call     = apigw.Call
	reply    = apigw.Reply
	function = apigw.Function[*API]
	endpoint = apigw.Endpoint[*API]
)

// API serves the MCP endpoint's function through a gateway. Safe for concurrent invocations.
type API struct {
	gw     *apigw.Gateway
	mcp    ToolServer
	bearer TokenVerifier
	opts   apigw.Options
}

// New returns the MCP endpoint's controller over g, with no service: MCP takes them.
func New(g *apigw.Gateway) *API { return &API{gw: g, opts: g.Options()} }

var mcpRoutes = function{Function: "mcp", Operations: []endpoint{
	{Route: "POST /mcp", Proof: apigw.ProofBearer, Page: (*API).mcpEndpoint, Crash: mcpCrash},
	{Route: "GET /mcp", Proof: apigw.ProofBearer, Page: (*API).mcpEndpoint, Crash: mcpCrash},
	{Route: "DELETE /mcp", Proof: apigw.ProofBearer, Page: (*API).mcpEndpoint, Crash: mcpCrash},
	{Route: "GET /.well-known/oauth-protected-resource", Proof: apigw.ProofPublic, Serve: (*API).protectedResource},
	{Route: "GET /.well-known/oauth-protected-resource/mcp", Proof: apigw.ProofPublic, Serve: (*API).protectedResource},
}}

// Routes are the MCP endpoint's function, for the table of every function (package routes).
func Routes() []apigw.Routes { return []apigw.Routes{mcpRoutes.Routes()} }

// MCP serves mcp: the Model Context Protocol endpoint over s, its callers' tokens verified by v,
// and its protected resource metadata.
func (a *API) MCP(s ToolServer, v TokenVerifier) apigw.Handler {
	b := *a
	b.mcp, b.bearer = s, v
	return apigw.Serve(a.gw, &b, mcpRoutes)
}
