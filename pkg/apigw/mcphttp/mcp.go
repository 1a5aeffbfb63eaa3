package mcphttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/bearer"
	"github.com/interrupthost/interrupthost/pkg/identity"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// ToolServer serves the Model Context Protocol to an authenticated caller (pkg/mcp's Server):
// an http.Handler's shape, since the protocol's SDK serves net/http, with the caller beside the
// request. Defined here, where it is used, so that this package links no MCP code into the
// functions that serve other routes.
type ToolServer interface {
	ServeMCP(w http.ResponseWriter, r *http.Request, p interrupt.Principal, base string)
}

// mcpScopes open the MCP endpoint: any one; each tool checks the one it needs (an engine's
// requests interrupts:write, its reads runs:read; a person's agents:ask, as themself).
var mcpScopes = []string{apigw.ScopeInterruptsWrite, apigw.ScopeRunsRead, interrupt.ScopeAgentsAsk}

// TokenVerifier verifies a bearer token as the gateway's JWT authorizer does (pkg/bearer), for
// the MCP endpoint, whose route has no authorizer: API Gateway's own 401 cannot name the
// endpoint's protected resource metadata, which an MCP client needs to find where to sign in.
// Verify answers the token's claims and the scopes it grants, or bearer.ErrInvalid (any other
// error: the issuer could not be read).
type TokenVerifier interface {
	Verify(ctx context.Context, authorization string) (identity.Claims, []string, error)
}

// The protected resource metadata (RFC 9728) of the MCP endpoint, where an MCP client looks for
// it: under the endpoint's path first, then at the root.
const (
	protectedResourcePath = "/.well-known/oauth-protected-resource"
	mcpPath               = "/mcp"
)

// mcpEndpoint hands an MCP request to the tool server, as the caller the JWT names. A caller
// the endpoint refuses is told where the metadata naming the token's issuer is
// (WWW-Authenticate, RFC 9728 section 5.1), as MCP's authorization asks.
func (a *API) mcpEndpoint(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	base, err := a.gw.BaseURL(c.Req)
	if err != nil {
		return apigw.ProblemResponse(err), err
	}
	if err := a.allowedOrigin(c.Req.Headers); err != nil {
		return apigw.ProblemResponse(err), err
	}
	if c.Principal, err = a.mcpCaller(ctx, c.Req); err != nil {
		resp := apigw.ProblemResponse(err)
		challenge := `Bearer resource_metadata="` + base + protectedResourcePath + mcpPath + `", scope="` + strings.Join(a.issuedScopes(), " ") + `"`
		switch {
		case interrupt.ErrorCode(err) == interrupt.CodeUnauthorized:
			resp.Headers["WWW-Authenticate"] = challenge + `, error="invalid_token"`
		case errors.Is(err, errInsufficientScope):
			resp.Headers["WWW-Authenticate"] = challenge + `, error="insufficient_scope"`
		case interrupt.ErrorCode(err) == interrupt.CodeForbidden:
			// no tenant: nothing another token of the same client would fix
			resp.Headers["WWW-Authenticate"] = challenge
		}
		return resp, err
	}
	r, err := httpRequest(ctx, c.Req)
	if err == nil {
		err = transportable(r)
	}
	if err == nil {
		err = oneMessage(r)
	}
	if err != nil {
		resp := apigw.ProblemResponse(err)
		if interrupt.ErrorCode(err) == interrupt.CodeMethodNotAllowed {
			resp.Headers["Allow"] = http.MethodPost
		}
		return resp, err
	}
	w := &recorder{header: http.Header{}}
	a.mcp.ServeMCP(w, r, c.Principal, base)
	return w.response(), nil
}

// transportable refuses, as a problem, what the stateless Streamable HTTP transport takes no
// message from: a GET (no stream is kept to listen to) or a DELETE (no session to end), and a
// POST whose body is not JSON. Any Accept is taken as both types the transport asks clients to
// accept (curl's */* among them): every answer here is one JSON document.
func transportable(r *http.Request) error {
	if r.Method != http.MethodPost {
		return interrupt.Errorf(interrupt.CodeMethodNotAllowed, "the MCP endpoint is stateless: it takes POSTed messages only, and keeps no stream or session to GET or DELETE")
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return interrupt.Errorf(interrupt.CodeUnsupportedMedia, "an MCP message is posted as application/json")
	}
	r.Header.Set("Accept", "application/json, text/event-stream")
	return nil
}

// mcpCaller is the MCP endpoint's caller: the bearer token verified here, under the rules the
// gateway's authorizer applies to every other route (TokenVerifier), then read as every route
// reads its caller. No token, or one the rules refuse, is 401; one without the scopes, 403.
func (a *API) mcpCaller(ctx context.Context, req events.APIGatewayV2HTTPRequest) (interrupt.Principal, error) {
	authorization := ""
	for k, v := range req.Headers {
		if strings.EqualFold(k, "authorization") {
			authorization = v
		}
	}
	if strings.TrimSpace(authorization) == "" {
		return interrupt.Principal{}, interrupt.Errorf(interrupt.CodeUnauthorized, "the MCP endpoint needs a bearer token: its protected resource metadata names the issuer")
	}
	c, granted, err := a.bearer.Verify(ctx, authorization)
	if errors.Is(err, bearer.ErrInvalid) {
		return interrupt.Principal{}, interrupt.Errorf(interrupt.CodeUnauthorized, "the bearer token is not valid for this API (issuer, audience, signature or expiry)")
	}
	if err != nil {
		return interrupt.Principal{}, fmt.Errorf("%w: %w", interrupt.ErrUnavailable, err)
	}
	if c.Text(a.opts.PrincipalClaim) == "" {
		return interrupt.Principal{}, interrupt.Errorf(interrupt.CodeUnauthorized, "the JWT carries no %s claim (a string), which names the caller here (PrincipalClaim)", a.opts.PrincipalClaim)
	}
	p, err := a.gw.PrincipalOf(c, granted)
	if a.opts.Agents(c) {
		p.Scopes = slices.DeleteFunc(p.Scopes, func(s string) bool { return s != interrupt.ScopeAgentsAsk })
	}
	if err == nil && !slices.ContainsFunc(mcpScopes, p.Holds) {
		err = fmt.Errorf("%w%w", interrupt.Errorf(interrupt.CodeForbidden, "the MCP endpoint needs scope %s", strings.Join(mcpScopes, " or ")), errInsufficientScope)
	}
	return p, err
}

// errInsufficientScope marks a 403 that a token with more scopes would not get: its challenge
// says error="insufficient_scope", for a client to ask for them.
var errInsufficientScope = errors.New(" (insufficient scope)")

// allowedOrigin refuses a request whose Origin, when it has one, is not one the deployment
// allows (Options.MCPOrigins): the transport's defence against DNS rebinding, where a page of
// another site reaches a server through a name that resolves to it. Checked before anything
// runs, the caller's token included.
func (a *API) allowedOrigin(headers map[string]string) error {
	origin, ok := "", false
	for k, v := range headers {
		if strings.EqualFold(k, "origin") {
			origin, ok = v, true
		}
	}
	if !ok || slices.ContainsFunc(a.opts.MCPOrigins, func(allowed string) bool { return originMatches(allowed, origin) }) {
		return nil
	}
	return interrupt.Errorf(interrupt.CodeForbidden, "origin %q may not call the MCP endpoint (the template's McpAllowedOrigins lists those that may)", origin)
}

// originMatches reports whether origin is allowed, an origin ("https://inspector.example.com")
// or one with any port ("http://localhost:*": a local tool's, whatever port it listens on).
func originMatches(allowed, origin string) bool {
	// A scheme and a host are case-insensitive; an origin is nothing but them and a port.
	allowed, origin = strings.ToLower(allowed), strings.ToLower(origin)
	prefix, anyPort := strings.CutSuffix(allowed, ":*")
	if !anyPort {
		return origin == allowed
	}
	u, err := url.Parse(origin)
	if err != nil || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return false
	}
	host := u.Host
	if i := strings.LastIndex(host, ":"); i > strings.LastIndex(host, "]") {
		if _, err := strconv.Atoi(host[i+1:]); err != nil {
			return false
		}
		host = host[:i]
	}
	return u.Scheme+"://"+host == prefix
}

// oneMessage reads the posted body as the API reads every body (within apigw.MaxBody, strict JSON:
// no duplicate member, no nesting past MaxDepth) and refuses a JSON-RPC batch, which the
// transport no longer carries: one message per POST, so that a request costs one message's
// work, as throttling counts it. Nothing runs for a refused body.
func oneMessage(r *http.Request) error {
	raw, err := io.ReadAll(io.LimitReader(r.Body, apigw.MaxBody+1))
	if err != nil {
		return interrupt.Invalid("the body cannot be read")
	}
	if len(raw) > apigw.MaxBody {
		return interrupt.Errorf(interrupt.CodePayloadTooLarge, "the body exceeds %d bytes", apigw.MaxBody)
	}
	v, err := apigw.StrictJSON(raw)
	if err != nil {
		return err
	}
	if _, batch := v.([]any); batch {
		return interrupt.Invalid("a JSON-RPC batch is not taken: post one message per request")
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return nil
}

// protectedResource answers the MCP endpoint's protected resource metadata: the resource, the
// issuer of the tokens it takes and the scopes its tools need.
func (a *API) protectedResource(_ context.Context, c *call) (reply, error) {
	if a.opts.Issuer == "" {
		return reply{}, interrupt.Errorf(interrupt.CodeNotFound, "no identity provider is configured")
	}
	base, err := a.gw.BaseURL(c.Req)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers"`
		ScopesSupported        []string `json:"scopes_supported"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
		ResourceName           string   `json:"resource_name"`
	}{base + mcpPath, []string{a.opts.Issuer}, a.issuedScopes(), []string{"header"}, "Interrupt host"}}, nil
}

// issuedScopes are the scopes an MCP client signing a person in asks for, as the identity
// provider issues them (with the deployment's prefix, a Cognito resource server's identifier):
// the agents' one. An engine's token (client credentials) is not asked for here.
func (a *API) issuedScopes() []string {
	return []string{a.opts.ScopePrefix + interrupt.ScopeAgentsAsk}
}

// mcpCrash is what an MCP request answers whose adapter panicked (a tool's panic is its own
// internal error: pkg/mcp recovers it).
func mcpCrash() events.APIGatewayV2HTTPResponse {
	return apigw.ProblemResponse(interrupt.Errorf(interrupt.CodeInternal, "internal error"))
}

// httpRequest is the gateway's event as the request it carries.
func httpRequest(ctx context.Context, req events.APIGatewayV2HTTPRequest) (*http.Request, error) {
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(req.Body); err != nil {
			return nil, interrupt.Invalid("the body is not valid base64", interrupt.FieldError{Path: "/", Message: "is not valid base64"})
		}
	}
	target := req.RawPath
	if req.RawQueryString != "" {
		target += "?" + req.RawQueryString
	}
	r, err := http.NewRequestWithContext(ctx, req.RequestContext.HTTP.Method, target, bytes.NewReader(body))
	if err != nil {
		return nil, interrupt.Invalid("the request cannot be read", interrupt.FieldError{Path: "/", Message: err.Error()})
	}
	for name, value := range req.Headers {
		r.Header.Set(name, value)
	}
	r.Host = req.RequestContext.DomainName
	return r, nil
}

// recorder is the http.ResponseWriter of one request, turned into the gateway's answer.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// response is what was written, as the gateway's answer: each header's values joined. A refusal
// of the transport's own (text, not a JSON-RPC message) is answered as a problem in its words.
func (w *recorder) response() events.APIGatewayV2HTTPResponse {
	if mt, _, _ := mime.ParseMediaType(w.header.Get("Content-Type")); w.status >= 400 && mt != "application/json" {
		return apigw.ProblemResponse(interrupt.Errorf(transportCode(w.status), "%s", strings.TrimSpace(w.body.String())))
	}
	resp := events.APIGatewayV2HTTPResponse{StatusCode: w.status, Headers: map[string]string{}, Body: w.body.String()}
	if resp.StatusCode == 0 {
		resp.StatusCode = http.StatusOK
	}
	for name, values := range w.header {
		resp.Headers[name] = strings.Join(values, ", ")
	}
	resp.Headers["Cache-Control"] = "no-store"
	return resp
}

// transportCode is the problem code of a status the transport refused with.
func transportCode(status int) interrupt.Code {
	switch {
	case status == http.StatusForbidden:
		return interrupt.CodeForbidden
	case status == http.StatusNotFound:
		return interrupt.CodeNotFound
	case status == http.StatusMethodNotAllowed:
		return interrupt.CodeMethodNotAllowed
	case status == http.StatusUnsupportedMediaType:
		return interrupt.CodeUnsupportedMedia
	case status == http.StatusRequestEntityTooLarge:
		return interrupt.CodePayloadTooLarge
	case status >= 500:
		return interrupt.CodeInternal
	}
	return interrupt.CodeValidation
}
