package apigw_test

import (
	"crypto/rand"
	"crypto/rsa"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/pkg/apigw"
)

// TestTheMCPTransport: one JSON-RPC message per POST, read as every body is, from an allowed
// Origin or none. A batch, a body past MaxBody, duplicate members, nesting past MaxDepth and a
// foreign Origin (checked before the token) are refused as problems, and nothing runs: no
// interrupt is requested. An allowed Origin, or none, is served.
func TestTheMCPTransport(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	h, err := functionOf(apigw.New(slog.New(slog.NewJSONHandler(io.Discard, nil)), apigw.Options{MCPOrigins: []string{"http://127.0.0.1:3000", "http://localhost:*"}}), "mcp", s.services)
	if err != nil {
		t.Fatal(err)
	}
	request := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"request_approval","arguments":{"runId":"r1","key":"k` + string(rune('0'+id)) + `","title":"Pay","approvers":["alice"]}}}`
	}
	deep := strings.Repeat(`{"a":`, apigw.MaxDepth+1) + `1` + strings.Repeat(`}`, apigw.MaxDepth+1)
	headers := func(origin string) map[string]string {
		h := map[string]string{"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
		if origin != "" {
			h["origin"] = origin
		}
		return h
	}
	before := s.items(t)
	for _, tc := range []struct {
		name, body, origin string
		who                *caller
		status             int
	}{
		{"a batch", "[" + request(1) + "," + request(2) + "]", "", &engine, http.StatusBadRequest},
		{"a batch of one", "[" + request(1) + "]", "", &engine, http.StatusBadRequest},
		{"a body past MaxBody", request(1)[:len(request(1))-2] + `,"pad":"` + strings.Repeat("x", apigw.MaxBody) + `"}}`, "", &engine, http.StatusRequestEntityTooLarge},
		{"duplicate members", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, "", &engine, http.StatusBadRequest},
		{"nesting past MaxDepth", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + deep + `}`, "", &engine, http.StatusBadRequest},
		{"a foreign Origin", request(1), "http://evil.example.com", &engine, http.StatusForbidden},
		{"a foreign Origin, no token", request(1), "http://evil.example.com", nil, http.StatusForbidden},
		{"the Origin null", request(1), "null", &engine, http.StatusForbidden},
		{"a host that starts as an allowed one", request(1), "http://localhost.evil.example:80", &engine, http.StatusForbidden},
		{"an allowed host over another scheme", request(1), "https://localhost:6274", &engine, http.StatusForbidden},
		{"an allowed host, a port that is none", request(1), "http://localhost:99x", &engine, http.StatusForbidden},
		{"an allowed origin with a path", request(1), "http://localhost:6274/x", &engine, http.StatusForbidden},
	} {
		r := invoke(t, h, call{who: tc.who, route: "POST /mcp", rawPath: "/mcp", body: tc.body, headers: headers(tc.origin)})
		if r.Status != tc.status || r.Headers["Content-Type"] != "application/problem+json" {
			t.Errorf("%s: %d %s, want %d and a problem", tc.name, r.Status, r.Body, tc.status)
		}
	}
	if after := s.items(t); after != before {
		t.Fatalf("refused messages wrote: %s, then %s", before, after)
	}
	for _, origin := range []string{"", "http://127.0.0.1:3000", "http://localhost:6274", "http://localhost", "HTTP://LocalHost:6274"} {
		r := invoke(t, h, call{who: &engine, route: "POST /mcp", rawPath: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: headers(origin)})
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"result"`) {
			t.Errorf("a ping from %q: %d %s", origin, r.Status, r.Body)
		}
	}
}

// TestTheMCPEndpointVerifiesItsTokens: the MCP route has no authorizer (API Gateway's 401 could
// not name the metadata), so the function verifies the bearer token itself, under the
// authorizer's rules: no token, one signed by another key, of another issuer, for another
// audience (a client metadata URL the deployment does not allow among them), expired or not yet
// valid is 401 naming the protected resource metadata; a valid one without the endpoint's scopes
// is 403 insufficient_scope (an allowed metadata URL's holds agents:ask alone, as the agents'
// client's); a valid one is served.
func TestTheMCPEndpointVerifiesItsTokens(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	h := s.fn("mcp")
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	token := func(key *rsa.PrivateKey, change devjwt.Claims) string {
		c := devjwt.Claims{"iss": bearerIssuer(), "aud": devjwt.Audience, "exp": now.Add(time.Hour).Unix(), "sub": "engine", "tenant": "acme", "scope": "interrupts:write runs:read"}
		maps.Copy(c, change)
		for k, v := range change {
			if v == nil {
				delete(c, k)
			}
		}
		tok, err := devjwt.Sign(key, c)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + tok
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	post := func(authorization string) response {
		headers := map[string]string{"accept": "application/json, text/event-stream"}
		if authorization != "" {
			headers["authorization"] = authorization
		}
		return invoke(t, h, call{route: "POST /mcp", rawPath: "/mcp", body: ping, headers: headers})
	}
	metadata := `resource_metadata="https://` + testDomain + `/.well-known/oauth-protected-resource/mcp"`
	for name, authorization := range map[string]string{
		"no token":          "",
		"not a JWT":         "Bearer nope",
		"another key":       token(other, nil),
		"another issuer":    token(issuerKey(), devjwt.Claims{"iss": "https://idp.example.com/other"}),
		"another audience":  token(issuerKey(), devjwt.Claims{"aud": "someone-else"}),
		"client_id, no aud": token(issuerKey(), devjwt.Claims{"aud": nil, "client_id": "someone-else"}),
		"expired":           token(issuerKey(), devjwt.Claims{"exp": now.Add(-time.Minute).Unix()}),
		"no expiry":         token(issuerKey(), devjwt.Claims{"exp": nil}),
		"not yet valid":     token(issuerKey(), devjwt.Claims{"nbf": now.Add(time.Hour).Unix()}),
		"another scheme":    strings.Replace(token(issuerKey(), nil), "Bearer", "Basic", 1),
		// A client known by its metadata URL is taken only where the deployment allows the URL.
		"a metadata URL not allowed":            token(issuerKey(), devjwt.Claims{"aud": nil, "client_id": "https://evil.example/client.json", "scope": "agents:ask"}),
		"an allowed host's name inside another": token(issuerKey(), devjwt.Claims{"aud": nil, "client_id": "https://agents.example.com.evil.example/client.json", "scope": "agents:ask"}),
		"an allowed URL over http":              token(issuerKey(), devjwt.Claims{"aud": nil, "client_id": "http://agents.example.com/client.json", "scope": "agents:ask"}),
		"a loopback URL of another host":        token(issuerKey(), devjwt.Claims{"aud": nil, "client_id": "http://localhost:8080/client.json", "scope": "agents:ask"}),
	} {
		r := post(authorization)
		if www := r.Headers["WWW-Authenticate"]; r.Status != http.StatusUnauthorized || !strings.Contains(www, metadata) || !strings.Contains(www, `error="invalid_token"`) {
			t.Errorf("%s: %d, WWW-Authenticate %q", name, r.Status, www)
		}
	}
	for name, authorization := range map[string]string{
		"another route's scope": token(issuerKey(), devjwt.Claims{"scope": "approvals:respond"}),
		// The agents' client's tokens hold its scope and no other, whatever they name.
		"the agents' client with an engine's scopes":      token(issuerKey(), devjwt.Claims{"aud": nil, "client_id": devjwt.MCPClientID}),
		"an allowed metadata URL with an engine's scopes": token(issuerKey(), devjwt.Claims{"aud": nil, "client_id": "https://agents.example.com/client.json"}),
	} {
		r := post(authorization)
		if www := r.Headers["WWW-Authenticate"]; r.Status != http.StatusForbidden || !strings.Contains(www, `error="insufficient_scope"`) || !strings.Contains(www, `scope="agents:ask"`) {
			t.Errorf("%s: %d, WWW-Authenticate %q", name, r.Status, www)
		}
	}
	for name, authorization := range map[string]string{
		"a valid token":                     token(issuerKey(), nil),
		"client_id, no aud (Cognito's)":     token(issuerKey(), devjwt.Claims{"aud": nil, "client_id": devjwt.Audience}),
		"an audience among several":         token(issuerKey(), devjwt.Claims{"aud": []string{"x", devjwt.Audience}}),
		"the token bare, as the authorizer": strings.TrimPrefix(token(issuerKey(), nil), "Bearer "),
		"the agents' client":                token(issuerKey(), devjwt.Claims{"aud": nil, "client_id": devjwt.MCPClientID, "scope": "agents:ask"}),
		"an allowed metadata URL":           token(issuerKey(), devjwt.Claims{"aud": nil, "client_id": "https://agents.example.com/client.json", "scope": "agents:ask"}),
		"a loopback metadata URL":           token(issuerKey(), devjwt.Claims{"aud": nil, "client_id": "http://127.0.0.1:8765/client.json", "scope": "agents:ask"}),
	} {
		if r := post(authorization); r.Status != http.StatusOK {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
}

// TestTheAgentsSignInOpensOnlyMCP: a token the agents' client was issued opens no REST route,
// whatever scopes it names (the gateway's authorizer refuses its audience; each function checks
// again): minting a callback token for an engine's wait, ending a run and requesting over REST
// are refused and write nothing.
func TestTheAgentsSignInOpensOnlyMCP(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	if r := s.request(t, engine, "pay-1", "wait", `{"kind":"external-event","key":"k","data":{"eventType":"payment_intent.succeeded","correlation":"order-7"}}`); r.Status != http.StatusCreated {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	mallory := caller{"mallory", "acme", []string{apigw.ScopeInterruptsWrite, apigw.ScopeRunsRead, "agents:ask"}}
	// Each provider names the client where it does: Cognito's client_id, OpenID Connect's azp
	// (beside an API's audience: Auth0, Keycloak, Entra ID v2), Okta's cid, Entra ID v1's appid.
	shapes := []map[string]any{
		{"client_id": devjwt.MCPClientID},
		{"aud": "https://api.example.com", "azp": devjwt.MCPClientID},
		{"aud": "https://api.example.com", "cid": devjwt.MCPClientID},
		{"aud": "https://api.example.com", "appid": devjwt.MCPClientID},
		{"aud": []any{"https://api.example.com", devjwt.MCPClientID}},
		// A client known by its metadata URL that the deployment allows is the agents' too.
		{"client_id": "https://agents.example.com/client.json"},
	}
	before := s.items(t)
	for _, agents := range shapes {
		for _, c := range []struct{ function, route, body string }{
			{"mint-token", "POST /runs/{runId}/interrupts/{nodeId}/tokens", `{"intent":"resolve"}`},
			{"end-run", "POST /runs/{runId}/cancel", `{"reason":"mine now"}`},
			{"request-interrupt", "POST /runs/{runId}/interrupts", `{"nodeId":"n2","payload":{"kind":"approval","key":"k2","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"]}}}`},
			{"get-run", "GET /runs/{runId}", ""},
		} {
			r := invoke(t, s.fn(c.function), call{who: &mallory, claims: agents, route: c.route, params: map[string]string{"runId": "pay-1", "nodeId": "wait"}, body: c.body})
			if r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), "opens only the MCP endpoint") {
				t.Errorf("%v %s: %d %s", agents, c.route, r.Status, r.Body)
			}
		}
	}
	if after := s.items(t); after != before {
		t.Errorf("refused calls wrote: %s, then %s", before, after)
	}
}
