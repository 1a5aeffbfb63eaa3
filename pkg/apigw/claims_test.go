package apigw_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/apigw"
)

// TestClaimsAreReadAsIssued: group and role names are matched whole, spaces, commas and
// brackets included, as the issuer wrote them (API Gateway's "[a b]" rendering cannot tell
// ["not admins"] from ["not", "admins"]); a tenant is a string claim and nothing else; and the
// claims come from the bearer token only when it is the one the authorizer verified.
func TestClaimsAreReadAsIssued(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	approval := func(field string, refs ...string) string {
		return strings.Replace(example(t, "approval"), `"requiredApprovals": 1`, `"`+field+`":["`+strings.Join(refs, `","`)+`"]`, 1)
	}
	value := `{"resumeValue":{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}}`
	tests := []struct {
		name    string
		payload string
		claims  map[string]any
		status  int
	}{
		{"a group name with a space is one name", approval("approverGroupRefs", "admins"), map[string]any{"groups": []string{"not admins"}}, 403},
		{"a group name with a space matches whole", approval("approverGroupRefs", "Finance Admins"), map[string]any{"groups": []string{"Finance Admins"}}, 200},
		{"a group name with a comma is one name", approval("approverGroupRefs", "a"), map[string]any{"groups": []string{"a,b"}}, 403},
		{"a group name with brackets matches whole", approval("approverGroupRefs", "[ops]"), map[string]any{"groups": []string{"x", "[ops]"}}, 200},
		{"a string claim is one name", approval("approverGroupRefs", "ops"), map[string]any{"groups": "finance ops"}, 403},
		{"a role name with a space", approval("approverRoleRefs", "manager"), map[string]any{"roles": []string{"deputy manager"}}, 403},
		{"a role name with a space matches whole", approval("approverRoleRefs", "deputy manager"), map[string]any{"roles": []string{"deputy manager"}}, 200},
		{"a numeric tenant is no tenant", example(t, "custom"), map[string]any{"tenant": 123}, 403},
		{"a boolean tenant is no tenant", example(t, "custom"), map[string]any{"tenant": true}, 403},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := "claims-" + string(rune('a'+i))
			s.mustRequest(t, run, "n1", tt.payload)
			r := invoke(t, s.fn("resolve-by-run"), call{who: &approver, claims: tt.claims, params: map[string]string{"runId": run, "nodeId": "n1"}, body: value})
			if r.Status != tt.status {
				t.Errorf("%d %s, want %d", r.Status, r.Body, tt.status)
			}
		})
	}

	t.Run("a bare token", func(t *testing.T) {
		req := events.APIGatewayV2HTTPRequest{Headers: map[string]string{}, PathParameters: map[string]string{"runId": "claims-a"}}
		authorize(&req, map[string]any{"sub": "alice", "tenant": "acme"}, []string{apigw.ScopeRunsRead})
		req.Headers["authorization"] = strings.TrimPrefix(req.Headers["authorization"], "Bearer ")
		if resp, err := s.fn("get-run")(t.Context(), req); err != nil || resp.StatusCode != 200 {
			t.Errorf("%d %s %v, want 200", resp.StatusCode, resp.Body, err)
		}
	})
	t.Run("a token other than the verified one", func(t *testing.T) {
		for name, change := range map[string]func(*events.APIGatewayV2HTTPRequest){
			"no header":       func(r *events.APIGatewayV2HTTPRequest) { delete(r.Headers, "authorization") },
			"another subject": func(r *events.APIGatewayV2HTTPRequest) { r.RequestContext.Authorizer.JWT.Claims["sub"] = "bob" },
			"another tenant":  func(r *events.APIGatewayV2HTTPRequest) { r.RequestContext.Authorizer.JWT.Claims["tenant"] = "evilcorp" },
			"not a JWT":       func(r *events.APIGatewayV2HTTPRequest) { r.Headers["authorization"] = "Bearer abc" },
			"another scheme": func(r *events.APIGatewayV2HTTPRequest) {
				r.Headers["authorization"] = strings.Replace(r.Headers["authorization"], "Bearer", "Basic", 1)
			},
			"undecodable claims": func(r *events.APIGatewayV2HTTPRequest) { r.Headers["authorization"] = "Bearer a.!!.c" },
		} {
			req := events.APIGatewayV2HTTPRequest{Headers: map[string]string{}, PathParameters: map[string]string{"runId": "claims-a"}}
			authorize(&req, map[string]any{"sub": "alice", "tenant": "acme"}, []string{apigw.ScopeRunsRead})
			change(&req)
			resp, err := s.fn("get-run")(t.Context(), req)
			if err != nil || resp.StatusCode != 401 {
				t.Errorf("%s: %d %s %v, want 401", name, resp.StatusCode, resp.Body, err)
			}
		}
	})
}

// TestScopePrefix: with a ScopePrefix, the function's own check counts only the scopes that
// carry it, by the name after it, as the gateway's authorizer does; a mis-wired route that let
// the bare names through opens nothing.
func TestScopePrefix(t *testing.T) {
	t.Parallel()
	const prefix = "https://api.example.com/"
	s := newStack(t)
	s.mustRequest(t, "r1", "n1", example(t, "custom"))
	api := apigw.New(slog.New(slog.DiscardHandler), apigw.Options{ScopePrefix: prefix})
	getRun, err := functionOf(api, "get-run", s.services)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		scopes []string
		status int
	}{
		{[]string{prefix + "runs:read"}, 200},
		{[]string{"runs:read"}, 403},
		{[]string{"https://other.example.com/runs:read"}, 403},
		{[]string{prefix + "interrupts:write", "runs:read"}, 403},
	} {
		who := caller{"engine", "acme", c.scopes}
		if r := invoke(t, getRun, call{who: &who, route: "GET /runs/{runId}", params: map[string]string{"runId": "r1"}}); r.Status != c.status {
			t.Errorf("scopes %v: %d %s, want %d", c.scopes, r.Status, r.Body, c.status)
		}
	}
}

// TestPrincipalClaim: the caller's principal is the claim the deployment names (PrincipalClaim),
// so an approversList of readable names admits the person whose token carries that name,
// whatever its sub; a token without the claim names nobody and is refused as such (401, naming
// the claim), never read as an empty principal; and the claim must be the one the authorizer
// verified.
func TestPrincipalClaim(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	byUsername := apigw.New(slog.New(slog.DiscardHandler), apigw.Options{PrincipalClaim: "username"})
	request, err := functionOf(byUsername, "request-interrupt", s.services)
	if err != nil {
		t.Fatal(err)
	}
	resolve, err := functionOf(byUsername, "resolve-by-run", s.services)
	if err != nil {
		t.Fatal(err)
	}
	bySub, err := functionOf(s.api, "resolve-by-run", s.services)
	if err != nil {
		t.Fatal(err)
	}
	payload := strings.Replace(example(t, "approval"), `"requiredApprovals": 1`, `"approversList":["alice"]`, 1)
	value := `{"resumeValue":{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}}`
	respond := []string{apigw.ScopeApprovalsRespond}
	tests := []struct {
		name    string
		resolve apigw.Handler
		claims  map[string]any
		change  func(*events.APIGatewayV2HTTPRequest)
		status  int
		detail  string
	}{
		{name: "the named person, whatever the sub", resolve: resolve, claims: map[string]any{"sub": "9f0c-uuid", "username": "alice"}, status: 200},
		{name: "another person whose sub is the name", resolve: resolve, claims: map[string]any{"sub": "alice", "username": "bob"}, status: 403},
		{name: "no principal claim", resolve: resolve, claims: map[string]any{"sub": "alice"}, status: 401, detail: "carries no username claim"},
		{name: "a principal claim that is no string", resolve: resolve, claims: map[string]any{"sub": "alice", "username": 7}, status: 401, detail: "carries no username claim"},
		{name: "an empty principal claim", resolve: resolve, claims: map[string]any{"sub": "alice", "username": ""}, status: 401, detail: "carries no username claim"},
		{
			name: "a principal other than the verified one", resolve: resolve, claims: map[string]any{"sub": "9f0c-uuid", "username": "alice"}, status: 401,
			change: func(r *events.APIGatewayV2HTTPRequest) { r.RequestContext.Authorizer.JWT.Claims["username"] = "bob" },
		},
		{
			name: "a principal the authorizer did not verify", resolve: resolve, claims: map[string]any{"sub": "9f0c-uuid", "username": "alice"}, status: 401,
			change: func(r *events.APIGatewayV2HTTPRequest) { delete(r.RequestContext.Authorizer.JWT.Claims, "username") },
		},
		{name: "sub by default, whatever the username", resolve: bySub, claims: map[string]any{"sub": "alice", "username": "bob"}, status: 200},
		{name: "no sub by default", resolve: bySub, claims: map[string]any{"username": "alice"}, status: 401, detail: "carries no sub claim"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run := "principal-" + string(rune('a'+i))
			send := func(h apigw.Handler, route string, claims map[string]any, scopes []string, body string, change func(*events.APIGatewayV2HTTPRequest)) (int, string) {
				t.Helper()
				req := events.APIGatewayV2HTTPRequest{
					Headers: map[string]string{"content-type": "application/json"}, Body: body, RouteKey: route,
					PathParameters: map[string]string{"runId": run, "nodeId": "n1"},
					RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: "test", RouteKey: route},
				}
				req.RequestContext.HTTP.Method, _, _ = strings.Cut(route, " ")
				claims["tenant"] = "acme"
				authorize(&req, claims, scopes)
				if change != nil {
					change(&req)
				}
				resp, err := h(t.Context(), req)
				if err != nil && resp.StatusCode < 400 {
					t.Fatal(err)
				}
				return resp.StatusCode, resp.Body
			}
			engine := map[string]any{"sub": "engine-client", "username": "engine"}
			if status, body := send(request, "POST /runs/{runId}/interrupts", engine, []string{apigw.ScopeInterruptsWrite}, `{"nodeId":"n1","payload":`+payload+`}`, nil); status != 201 {
				t.Fatalf("request: %d %s", status, body)
			}
			status, body := send(tt.resolve, "POST /runs/{runId}/interrupts/{nodeId}", tt.claims, respond, value, tt.change)
			if status != tt.status || !strings.Contains(body, tt.detail) {
				t.Errorf("%d %s, want %d naming %q", status, body, tt.status, tt.detail)
			}
		})
	}
}
