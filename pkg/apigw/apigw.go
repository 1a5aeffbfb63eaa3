// Package apigw is what every function of the API does alike with API Gateway HTTP API events
// (payload format 2.0): it authenticates the caller from the JWT authorizer context, decodes and
// bounds the request, turns every answer and error into HTTP, and dispatches an event's route
// key to its handler by the function's table of routes. The functions' controllers are its
// subpackages, one per kind of surface: jsonapi (the JSON API), web (the approval page and the
// console), mcphttp (the MCP endpoint) and slackhttp (Slack's clicks); routes names them all.
// It imports none of them.
package apigw

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/bearer"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/identity"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Handler is one function's entry point, as lambda.Start takes it.
type Handler func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Scopes the routes require (docs/engines.md, "The API").
const (
	ScopeInterruptsWrite  = "interrupts:write"
	ScopeApprovalsRespond = interrupt.ScopeApprovalsRespond
	ScopeRunsRead         = "runs:read"
	// ScopeRunsConfigure sets a run's configuration: an operator's, not the agent's, since the
	// escalation threshold decides when the agent is checked by a person.
	ScopeRunsConfigure = "runs:configure"
	// ScopeTokensDelegate mints tokens that decide as someone else (docs/design.md, "Who may
	// decide").
	ScopeTokensDelegate = interrupt.ScopeTokensDelegate
	// ScopeContactsManage is the scope of the contacts routes: a tenant's directory of addresses is
	// an operator's, not an engine's or an approver's.
	ScopeContactsManage = "contacts:manage"
	// ScopePoliciesManage is the scope of the policies' routes (policy.ScopeManage).
	ScopePoliciesManage = policy.ScopeManage
	// ScopeReceiptsRedeem lets a caller redeem approved calls' receipts: the executor of a tool, or
	// a gateway in front of it, which need not read runs nor request anything.
	ScopeReceiptsRedeem = "receipts:redeem"
	// ScopeIntegrationsManage registers and removes a tenant's chat apps (PUT and DELETE
	// /integrations/slack): an administrator's alone, since a chat app's signing secret is as strong
	// as every vote its clicks cast (subscriptions:manage only reads the app).
	ScopeIntegrationsManage = "integrations:manage"
	// ScopeSubscriptionsManage is the scope of the subscriptions routes.
	ScopeSubscriptionsManage = "subscriptions:manage"
	// ScopeWebhooksManage is the scope of the webhook-endpoints routes.
	ScopeWebhooksManage = "webhooks:manage"
)

// DefaultOperatorRole is the role claim that opens the console when the deployment names none.
const DefaultOperatorRole = "operator"

// Options are the deployment's choices the API needs.
type Options struct {
	// PrincipalClaim names the JWT claim that is the caller's principal (identity.PrincipalClaims:
	// what approversList names and the log records as who decided); "sub" when empty.
	PrincipalClaim string
	// TenantClaim names the JWT claim that carries the caller's tenant; "tenant" when empty.
	TenantClaim string
	// ScopePrefix is what the identity provider puts before every scope name (a Cognito resource
	// server's identifier and "/"): only the scopes that carry it count, known by the name after
	// it. Empty: the names as issued.
	ScopePrefix string
	// GroupsClaim and RolesClaim name the claims approver eligibility reads; "groups" and
	// "roles" when empty.
	GroupsClaim string
	RolesClaim  string
	// PublicBaseURL is where approvers reach the API when the deployment says (a custom
	// domain); empty means the domain each request came in on (baseURL). A function that is a
	// route of the API is never told the API's own URL: that would make the API and its
	// function depend on each other, which CloudFormation refuses.
	PublicBaseURL string
	// Issuer is the issuer of the JWTs the API takes (the template's JwtIssuer), which the MCP
	// endpoint's protected resource metadata names; empty: that metadata answers 404.
	Issuer string
	// MCPOrigins are the Origins a request to the MCP endpoint may carry (the template's
	// McpAllowedOrigins), each an origin or one ending ":*" for any port; one carrying any other
	// is refused. A request without Origin (every client but a browser's) is not checked.
	MCPOrigins []string
	// AgentsClient is the app client of the agents' sign-in (the template's AgentsClientId): a
	// token it was issued to holds at most interrupt.ScopeAgentsAsk, whatever else it names,
	// and opens no route but the MCP endpoint. Empty: no token is the agents'.
	AgentsClient string
	// AgentsClientURLs are the clients known by the URL of their metadata document that the
	// deployment allows (the template's McpClientMetadataUrls): their tokens are the agents'
	// sign-in's too, as AgentsClient's are. Only the MCP endpoint's function is given them,
	// since only it takes such a token (the gateway's authorizer names no URL).
	AgentsClientURLs bearer.URLPatterns
	// OperatorRole is the role claim that opens the console (the template's OperatorRole);
	// "operator" when empty.
	OperatorRole string
	// Discovery is the document of GET /.well-known/interrupt-host.
	Discovery host.Discovery
	// Metrics counts the 409 answers and the provider events received (package metrics); nil
	// counts nothing.
	Metrics *metrics.Log
}

// Resender sends one event to a subscription's receiver again, as outbound.Deliverer does,
// with its links under base.
type Resender interface {
	Resend(ctx context.Context, s outbound.Subscription, eventID, base string) (outbound.Attempt, error)
}

// Gateway is what every function's controller serves its routes through: the deployment's
// options and the access log. Safe for concurrent invocations. Each controller's package
// (jsonapi, web, mcphttp, slackhttp) makes its API over one, and each function's constructor
// there (jsonapi.API.GetRun, ...) takes the services its routes call, by type, so that a
// function's main that lacks one does not compile.
type Gateway struct {
	log  *slog.Logger
	opts Options
}

// New returns a Gateway that logs to log, configured by opts.
func New(log *slog.Logger, opts Options) *Gateway {
	return &Gateway{log: log, opts: opts.withDefaults()}
}

// Options are the options g was made with, their defaults filled in.
func (g *Gateway) Options() Options { return g.opts }

// Log is the logger g writes to.
func (g *Gateway) Log() *slog.Logger { return g.log }

// unprefixed are the scopes of granted that carry the deployment's prefix, without it; a scope
// without the prefix is another resource server's and grants nothing here.
func (o Options) unprefixed(granted []string) []string {
	if o.ScopePrefix == "" {
		return granted
	}
	var out []string
	for _, g := range granted {
		if name, ok := strings.CutPrefix(g, o.ScopePrefix); ok {
			out = append(out, name)
		}
	}
	return out
}

// BaseURL is the public base URL approvers reach the API at, for links and the sign-in's
// callback: Options.PublicBaseURL, else https and the domain req came in on, with its stage
// unless it is the default one (API Gateway's request context names both; the HTTP API serves
// only https).
func (a *Gateway) BaseURL(req events.APIGatewayV2HTTPRequest) (string, error) {
	if a.opts.PublicBaseURL != "" {
		return a.opts.PublicBaseURL, nil
	}
	rc := req.RequestContext
	if rc.DomainName == "" {
		return "", errors.New("apigw: the request context names no domain and no PUBLIC_BASE_URL is configured")
	}
	base := "https://" + rc.DomainName
	if rc.Stage != "" && rc.Stage != "$default" {
		base += "/" + url.PathEscape(rc.Stage)
	}
	return base, nil
}

// withDefaults fills in the claims' default names.
func (o Options) withDefaults() Options {
	o.PrincipalClaim = cmp.Or(o.PrincipalClaim, identity.DefaultPrincipalClaim)
	o.OperatorRole = cmp.Or(o.OperatorRole, DefaultOperatorRole)
	o.TenantClaim = cmp.Or(o.TenantClaim, "tenant")
	o.GroupsClaim = cmp.Or(o.GroupsClaim, "groups")
	o.RolesClaim = cmp.Or(o.RolesClaim, "roles")
	return o
}

// Call is one invocation in flight: what handlers read and what the access log reports.
type Call struct {
	Req       events.APIGatewayV2HTTPRequest
	Principal interrupt.Principal
	RunID     string
	NodeID    string
}

// Reply is a successful answer: a status and a body to encode as JSON ([]byte is JSON already).
type Reply struct {
	Status  int
	Body    any
	Headers map[string]string
}

// routeAny wraps an operation with what every function does alike: re-check the caller's scope,
// any one of scopes opening it as a route's AuthorizationScopes do (a mis-wired gateway route must
// not open a function), map errors to problem documents, and what observed adds. No scopes means
// the route takes no JWT: on token routes the signed token in the path authenticates; discovery
// is open to anyone.
func (a *Gateway) routeAny(scopes []string, op func(context.Context, *Call) (Reply, error)) Handler {
	crash := func() events.APIGatewayV2HTTPResponse {
		return ProblemResponse(interrupt.Errorf(interrupt.CodeInternal, "internal error"))
	}
	return a.observed(crash, func(ctx context.Context, c *Call) (events.APIGatewayV2HTTPResponse, error) {
		var err error
		if len(scopes) > 0 {
			c.Principal, err = a.authenticate(c.Req, scopes)
		}
		var out Reply
		if err == nil {
			out, err = op(ctx, c)
		}
		if err != nil {
			return ProblemResponse(err), err
		}
		resp := jsonResponse(out.Status, out.Body)
		maps.Copy(resp.Headers, out.Headers)
		return resp, nil
	})
}

// observed runs one invocation with what every function does around it, whatever it answers:
// recover from a panic (answering crash()) and write one access-log line with the error serve
// answered for.
func (a *Gateway) observed(crash func() events.APIGatewayV2HTTPResponse, serve func(context.Context, *Call) (events.APIGatewayV2HTTPResponse, error)) Handler {
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (resp events.APIGatewayV2HTTPResponse, _ error) {
		start := time.Now()
		c := &Call{Req: req}
		var err error
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("panic: %v", v)
				resp = crash()
			}
			a.access(ctx, c, resp, err, time.Since(start))
		}()
		resp, err = serve(ctx, c)
		return resp, nil
	}
}

// authenticate reads the caller from the verified JWT, which must grant one of scopes.
func (a *Gateway) authenticate(req events.APIGatewayV2HTTPRequest, scopes []string) (interrupt.Principal, error) {
	var p interrupt.Principal
	if req.RequestContext.Authorizer == nil || req.RequestContext.Authorizer.JWT == nil {
		return p, interrupt.Errorf(interrupt.CodeUnauthorized, "the request carries no verified JWT")
	}
	jwt := req.RequestContext.Authorizer.JWT
	c, err := bearerClaims(req, jwt.Claims, a.opts.PrincipalClaim)
	if err != nil {
		return p, err
	}
	granted := jwt.Scopes
	if len(granted) == 0 {
		granted = strings.Fields(jwt.Claims["scope"])
	}
	if a.opts.Agents(c) {
		return p, interrupt.Errorf(interrupt.CodeForbidden, "a token of the agents' sign-in (app client %s, or a client metadata URL the deployment allows) opens only the MCP endpoint, /mcp", a.opts.AgentsClient)
	}
	p, err = a.PrincipalOf(c, granted)
	if err == nil && !slices.ContainsFunc(scopes, p.Holds) {
		err = interrupt.Errorf(interrupt.CodeForbidden, "this operation needs scope %s", strings.Join(scopes, " or "))
	}
	return p, err
}

// clientClaims are where providers name the app client a token was issued to: Cognito's
// client_id, OpenID Connect's azp (Auth0, Keycloak), Okta's cid, Entra ID's appid (v1) and azp
// (v2), and aud, where a provider names the client as the audience.
var clientClaims = []string{"client_id", "azp", "cid", "appid", "aud"}

// Agents reports whether verified claims c are of a token an agents' client was issued: any of
// the claims that name a token's client names AgentsClient, or a metadata URL AgentsClientURLs
// allow. A provider whose access tokens name the API as their audience (Auth0, Okta, Entra ID)
// still names the client in one of the others.
func (o Options) Agents(c claims) bool {
	return slices.ContainsFunc(clientClaims, func(name string) bool {
		return slices.ContainsFunc(c.Names(name), func(client string) bool {
			return (o.AgentsClient != "" && client == o.AgentsClient) || o.AgentsClientURLs.Match(client)
		})
	})
}

// PrincipalOf is the caller of verified claims granting scopes granted: the authorizer's
// claims, or those the function verified itself (the MCP endpoint). A caller without a tenant
// is refused.
func (a *Gateway) PrincipalOf(c claims, granted []string) (interrupt.Principal, error) {
	var p interrupt.Principal
	p.Subject = c.Text(a.opts.PrincipalClaim)
	p.Tenant = c.Text(a.opts.TenantClaim)
	p.Scopes = a.opts.unprefixed(granted)
	p.Groups = c.Names(a.opts.GroupsClaim)
	p.Roles = c.Names(a.opts.RolesClaim)
	p.Via = interrupt.ViaJWT
	if !runlog.ValidID(p.Tenant) {
		return p, interrupt.Errorf(interrupt.CodeForbidden, "the JWT carries no usable %s claim (a string id)", a.opts.TenantClaim)
	}
	return p, nil
}

// access writes the one log line of an invocation: what was answered, how many bytes, how fast.
// It never logs a body, a token or a header.
func (a *Gateway) access(ctx context.Context, c *Call, resp events.APIGatewayV2HTTPResponse, err error, took time.Duration) {
	attrs := []slog.Attr{
		slog.String("requestId", c.Req.RequestContext.RequestID),
		slog.String("route", c.Req.RouteKey),
		slog.Int("status", resp.StatusCode),
		slog.Int("bytes", len(resp.Body)),
		slog.Float64("latencyMs", float64(took.Microseconds())/1000),
	}
	if c.RunID != "" {
		attrs = append(attrs, slog.String("runId", c.RunID))
	}
	if c.NodeID != "" {
		attrs = append(attrs, slog.String("nodeId", c.NodeID))
	}
	level := slog.LevelInfo
	if err != nil {
		code := string(interrupt.ErrorCode(err))
		attrs = append(attrs, slog.String("code", code))
		if resp.StatusCode == http.StatusConflict {
			a.opts.Metrics.Count(metrics.Conflicts, metrics.Dim{Name: metrics.DimCode, Value: code})
		}
		var e *interrupt.Error
		if !errors.As(err, &e) {
			level = slog.LevelError
			attrs = append(attrs, slog.String("error", err.Error()))
		}
	}
	a.log.LogAttrs(ctx, level, "request", attrs...)
}

// MaxCursor bounds a decoded inbox cursor: a place (runlog.Place) is at most about 320 bytes.
const MaxCursor = 512

// PathID reads a path parameter that names a run or node; one that could not name anything is
// answered like one that names nothing.
func PathID(req events.APIGatewayV2HTTPRequest, name string) (string, error) {
	v := req.PathParameters[name]
	if !runlog.ValidID(v) {
		return "", interrupt.Errorf(interrupt.CodeNotFound, "no such %s", name)
	}
	return v, nil
}

// ReadRun reads the path's run id into c, where the operation and the access log find it.
func (c *Call) ReadRun() error {
	var err error
	c.RunID, err = PathID(c.Req, "runId")
	return err
}

// ReadRunNode reads the path's run and node ids into c.
func (c *Call) ReadRunNode() error {
	if err := c.ReadRun(); err != nil {
		return err
	}
	var err error
	c.NodeID, err = PathID(c.Req, "nodeId")
	return err
}

// CountOutcome counts one request of a signed caller (a provider, a Slack app) under metric by
// what became of it: outcome, or the code it was refused with.
func (a *Gateway) CountOutcome(metric metrics.Name, outcome string, err error) {
	if err != nil {
		outcome = string(interrupt.ErrorCode(err))
	}
	a.opts.Metrics.Count(metric, metrics.Dim{Name: metrics.DimOutcome, Value: outcome})
}
