package gateway

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/bearer"
)

func testGateway(t *testing.T, routes ...string) *Gateway {
	t.Helper()
	var rs []*Route
	pools := map[string]*Pool{}
	for _, key := range routes {
		method, path, _ := strings.Cut(key, " ")
		rs = append(rs, &Route{Route: samtemplate.Route{Method: method, Path: path}, Function: key})
		pools[key] = &Pool{Name: key}
	}
	g, err := New(rs, pools, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestMatch(t *testing.T) {
	g := testGateway(t, "GET /runs/{runId}", "GET /runs/{runId}/events", "POST /runs/{runId}/interrupts",
		"POST /runs/{runId}/interrupts/{nodeId}", "POST /runs/{runId}/cancel", "POST /runs/{runId}/{action}")
	cases := []struct {
		method, path, route string
		params              map[string]string
	}{
		{"GET", "/runs/r1", "GET /runs/{runId}", map[string]string{"runId": "r1"}},
		{"GET", "/runs/r1/events", "GET /runs/{runId}/events", map[string]string{"runId": "r1"}},
		{"POST", "/runs/r1/cancel", "POST /runs/{runId}/cancel", map[string]string{"runId": "r1"}},
		{"POST", "/runs/r1/interrupts", "POST /runs/{runId}/interrupts", map[string]string{"runId": "r1"}},
		{"POST", "/runs/r1/other", "POST /runs/{runId}/{action}", map[string]string{"runId": "r1", "action": "other"}},
		{"POST", "/runs/a%20b/interrupts/n%2F1", "POST /runs/{runId}/interrupts/{nodeId}", map[string]string{"runId": "a b", "nodeId": "n/1"}},
		{"GET", "/runs", "", nil},
		{"DELETE", "/runs/r1", "", nil},
		{"GET", "/runs/r1/events/x", "", nil},
		{"POST", "/runs//interrupts", "", nil},
	}
	for _, c := range cases {
		r, params := g.match(c.method, c.path)
		got := ""
		if r != nil {
			got = r.Key()
		}
		if got != c.route {
			t.Errorf("%s %s matched %q, want %q", c.method, c.path, got, c.route)
			continue
		}
		for k, v := range c.params {
			if params[k] != v {
				t.Errorf("%s %s: params %v, want %v", c.method, c.path, params, c.params)
			}
		}
	}
}

func TestEvent(t *testing.T) {
	g := testGateway(t, "POST /runs/{runId}/interrupts/{nodeId}")
	r, params := g.match("POST", "/runs/r%3A1/interrupts/n1")
	claims := devjwt.Token{Subject: "alice", Tenant: "acme", Scopes: []string{"approvals:respond", "runs:read"}, Groups: []string{"finance", "ops"}}.Claims(g.now())
	req := httptest.NewRequest("POST", "/runs/r%3A1/interrupts/n1?debug=1&tag=a&tag=b", strings.NewReader(`{"resumeValue":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("X-Multi", "one")
	req.Header.Add("X-Multi", "two")
	req.Header.Set("Cookie", "a=1; b=2")
	req.Header.Set("User-Agent", "test/1")
	ev := g.event(req, r, params, claims, []byte(`{"resumeValue":1}`), "req-1")

	checks := map[string][2]string{
		"version":     {ev.Version, "2.0"},
		"routeKey":    {ev.RouteKey, "POST /runs/{runId}/interrupts/{nodeId}"},
		"rawPath":     {ev.RawPath, "/runs/r%3A1/interrupts/n1"},
		"rawQuery":    {ev.RawQueryString, "debug=1&tag=a&tag=b"},
		"runId":       {ev.PathParameters["runId"], "r:1"},
		"nodeId":      {ev.PathParameters["nodeId"], "n1"},
		"header":      {ev.Headers["content-type"], "application/json"},
		"multi":       {ev.Headers["x-multi"], "one,two"},
		"query":       {ev.QueryStringParameters["tag"], "a,b"},
		"cookies":     {strings.Join(ev.Cookies, "|"), "a=1|b=2"},
		"body":        {ev.Body, `{"resumeValue":1}`},
		"requestId":   {ev.RequestContext.RequestID, "req-1"},
		"method":      {ev.RequestContext.HTTP.Method, "POST"},
		"userAgent":   {ev.RequestContext.HTTP.UserAgent, "test/1"},
		"sub":         {ev.RequestContext.Authorizer.JWT.Claims["sub"], "alice"},
		"groups":      {ev.RequestContext.Authorizer.JWT.Claims["groups"], "[finance ops]"},
		"scopes":      {strings.Join(ev.RequestContext.Authorizer.JWT.Scopes, " "), "approvals:respond runs:read"},
		"stage":       {ev.RequestContext.Stage, "$default"},
		"cookie hdr":  {ev.Headers["cookie"], ""},
		"base64 flag": {map[bool]string{true: "true", false: "false"}[ev.IsBase64Encoded], "false"},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}

	bin := httptest.NewRequest("POST", "/runs/r1/interrupts/n1", strings.NewReader("\xff\x00"))
	bin.Header.Set("Content-Type", "application/octet-stream")
	ev = g.event(bin, r, params, claims, []byte("\xff\x00"), "req-2")
	if !ev.IsBase64Encoded || ev.Body != base64.StdEncoding.EncodeToString([]byte("\xff\x00")) {
		t.Errorf("binary body: %q base64=%v", ev.Body, ev.IsBase64Encoded)
	}
}

func TestWriteResponse(t *testing.T) {
	cases := []struct {
		out        string
		status     int
		body, ctyp string
	}{
		{`{"statusCode":201,"headers":{"Content-Type":"application/json"},"body":"{\"a\":1}"}`, 201, `{"a":1}`, "application/json"},
		{`{"statusCode":200,"body":"aGk=","isBase64Encoded":true}`, 200, "hi", ""},
		{`{"errorMessage":"boom","errorType":"Panic"}`, 500, `{"message":"Internal Server Error"}`, "application/json"},
		{`"just a string"`, 500, `{"message":"Internal Server Error"}`, "application/json"},
	}
	for _, c := range cases {
		w := httptest.NewRecorder()
		if got := writeResponse(w, []byte(c.out)); got != c.status || w.Code != c.status {
			t.Errorf("%s: status %d/%d, want %d", c.out, got, w.Code, c.status)
		}
		if w.Body.String() != c.body || w.Header().Get("Content-Type") != c.ctyp {
			t.Errorf("%s: body %q type %q", c.out, w.Body.String(), w.Header().Get("Content-Type"))
		}
	}
}

// TestServesTheIdentityProvider: the provider's paths reach it, before any route or authorizer;
// everything else is still the routes'.
func TestServesTheIdentityProvider(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := testGateway(t, "GET /runs/{runId}")
	g.issuer = devjwt.NewProvider(key, "http://127.0.0.1:3000", nil)
	for _, c := range []struct {
		path   string
		status int
		has    string
	}{
		{"/local-issuer/.well-known/openid-configuration", 200, `"issuer":"http://127.0.0.1:3000/local-issuer"`},
		{"/local-issuer/jwks.json", 200, `"kid":"local"`},
		{"/local-issuer/nothing", 404, ""},
		{"/local-issuer", 404, `{"message":"Not Found"}`},
		{"/runs/r1", 401, `{"message":"Unauthorized"}`},
	} {
		w := httptest.NewRecorder()
		g.ServeHTTP(w, httptest.NewRequest("GET", c.path, nil))
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.has) {
			t.Errorf("GET %s: %d %s, want %d with %s", c.path, w.Code, w.Body, c.status, c.has)
		}
	}
}

// TestAuthorizeAdmitsEveryAudience: as API Gateway's JWT authorizer, a route's authorizer
// admits a token for any one of its audiences: the approvers' app client in aud, or an engine's
// in client_id when there is no aud (Cognito's access tokens); a token for no client of the
// list is refused, and so is one whose aud names another whatever its client_id.
func TestAuthorizeAdmitsEveryAudience(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := testGateway(t, "GET /runs/{runId}")
	g.tokens = devjwt.NewVerifier(devjwt.StaticKey{Public: &key.PublicKey})
	r, _ := g.match("GET", "/runs/r1")
	r.Issuer, r.Audience = "https://issuer.example", []string{"approvers", "engine-a", "engine-b"}
	tests := []struct {
		name   string
		token  devjwt.Token
		change func(devjwt.Claims)
		ok     bool
	}{
		{name: "the approvers' client in aud", token: devjwt.Token{Subject: "alice"}, change: func(c devjwt.Claims) { c["aud"] = "approvers" }, ok: true},
		{name: "an engine's client in client_id", token: devjwt.Token{Subject: "e", ClientID: "engine-b"}, ok: true},
		{name: "another client in client_id", token: devjwt.Token{Subject: "e", ClientID: "engine-c"}},
		{name: "another aud beside an engine's client_id", token: devjwt.Token{Subject: "e", ClientID: "engine-a"}, change: func(c devjwt.Claims) { c["aud"] = "other" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.token.Issuer, tt.token.TTL = r.Issuer, time.Hour
			claims := tt.token.Claims(time.Now())
			if tt.change != nil {
				tt.change(claims)
			}
			signed, err := devjwt.Sign(key, claims)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest("GET", "/runs/r1", nil)
			req.Header.Set("Authorization", "Bearer "+signed)
			if got, err := g.authorize(req, r); (err == nil) != tt.ok || (tt.ok && got["sub"] != tt.token.Subject) {
				t.Errorf("authorize: %v, %v; want admitted %v", got, err, tt.ok)
			}
		})
	}
}

// TestTheTwoVerificationsAgree holds the one route's own verification (pkg/bearer, the MCP
// function's) to the gateway's JWT authorizer, which stands in for API Gateway's: for each token
// both admit it or both refuse it, as expected, and an admitted token's claims and scopes are
// the same. The cases are where the two could part: the key, the kid, the issuer, aud against
// client_id (a null aud, a list, a non-string member), exp and nbf (missing, past, quoted), the
// scheme, the serialisation, and the scopes' shapes.
func TestTheTwoVerificationsAgree(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// The issuer serves its discovery and JWKS, as the local gateway serves them.
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = devjwt.NewProvider(key, base, nil)
	srv.Start()
	t.Cleanup(srv.Close)
	issuer, audiences := devjwt.IssuerAt(base), []string{"approvers", "engine-a"}

	g := testGateway(t, "POST /mcp")
	g.tokens = devjwt.NewVerifier(devjwt.NewIssuerKeys(srv.Client()))
	r, _ := g.match("POST", "/mcp")
	r.Issuer, r.Audience = issuer, audiences
	v, err := bearer.New(issuer, audiences, srv.Client(), nil)
	if err != nil {
		t.Fatal(err)
	}

	now := time.Now()
	enc := base64.RawURLEncoding
	// signWith signs claims (the defaults changed by change, a nil value removing one) under the
	// header given, with k.
	signWith := func(k *rsa.PrivateKey, header string, change map[string]any) string {
		c := map[string]any{"iss": issuer, "aud": "approvers", "sub": "alice", "tenant": "acme", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "scope": "interrupts:write"}
		for name, value := range change {
			if value == nil {
				delete(c, name)
			} else {
				c[name] = value
			}
		}
		payload, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		head := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString(payload)
		digest := sha256.Sum256([]byte(head))
		sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
		if err != nil {
			t.Fatal(err)
		}
		return head + "." + enc.EncodeToString(sig)
	}
	const rs256 = `{"alg":"RS256","typ":"JWT","kid":"local"}`
	sign := func(change map[string]any) string { return signWith(key, rs256, change) }
	valid := sign(nil)
	for _, tc := range []struct {
		name, header string
		admit        bool
		scopes       string
	}{
		{"valid", "Bearer " + valid, true, "interrupts:write"},
		{"valid, bare", valid, true, "interrupts:write"},
		{"valid, lower-case scheme", "bearer " + valid, true, "interrupts:write"},
		{"an engine's client_id, no aud", "Bearer " + sign(map[string]any{"aud": nil, "client_id": "engine-a"}), true, "interrupts:write"},
		{"a null aud, an engine's client_id", "Bearer " + sign(map[string]any{"aud": json.RawMessage("null"), "client_id": "engine-a"}), true, "interrupts:write"},
		{"another client_id, no aud", "Bearer " + sign(map[string]any{"aud": nil, "client_id": "engine-z"}), false, ""},
		{"another aud beside a known client", "Bearer " + sign(map[string]any{"aud": "other", "client_id": "engine-a"}), false, ""},
		{"an aud list holding one", "Bearer " + sign(map[string]any{"aud": []any{"x", "engine-a"}}), true, "interrupts:write"},
		{"an aud list holding a number and one", "Bearer " + sign(map[string]any{"aud": []any{7, "engine-a"}}), true, "interrupts:write"},
		{"no audience at all", "Bearer " + sign(map[string]any{"aud": nil}), false, ""},
		{"another key", "Bearer " + signWith(other, rs256, nil), false, ""},
		{"no kid", "Bearer " + signWith(key, `{"alg":"RS256","typ":"JWT"}`, nil), false, ""},
		{"another kid", "Bearer " + signWith(key, `{"alg":"RS256","typ":"JWT","kid":"other"}`, nil), false, ""},
		{"another alg", "Bearer " + signWith(key, `{"alg":"RS512","typ":"JWT","kid":"local"}`, nil), false, ""},
		{"another issuer", "Bearer " + sign(map[string]any{"iss": base + "/elsewhere"}), false, ""},
		{"expired", "Bearer " + sign(map[string]any{"exp": now.Add(-time.Second).Unix()}), false, ""},
		{"no exp", "Bearer " + sign(map[string]any{"exp": nil}), false, ""},
		{"exp quoted", "Bearer " + sign(map[string]any{"exp": fmt.Sprint(now.Add(time.Hour).Unix())}), false, ""},
		{"not yet valid", "Bearer " + sign(map[string]any{"nbf": now.Add(time.Minute).Unix()}), false, ""},
		{"nbf quoted, in the future", "Bearer " + sign(map[string]any{"nbf": fmt.Sprint(now.Add(time.Minute).Unix())}), true, "interrupts:write"},
		{"valid since a minute", "Bearer " + sign(map[string]any{"nbf": now.Add(-time.Minute).Unix()}), true, "interrupts:write"},
		{"scopes as a list", "Bearer " + sign(map[string]any{"scope": []any{"runs:read", "interrupts:write"}}), true, "runs:read interrupts:write"},
		{"scopes in scp", "Bearer " + sign(map[string]any{"scope": nil, "scp": "runs:read"}), true, "runs:read"},
		{"an empty scope beside scp", "Bearer " + sign(map[string]any{"scope": "", "scp": "runs:read"}), true, ""},
		{"alg none", "Bearer " + enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + strings.Split(valid, ".")[1] + ".", false, ""},
		{"the signature cut", "Bearer " + valid[:len(valid)-4], false, ""},
		{"padding", "Bearer " + valid + "=", false, ""},
		{"spaces inside", "Bearer " + strings.Replace(valid, ".", ". ", 1), false, ""},
		{"another scheme", "Basic " + valid, false, ""},
		{"nothing", "", false, ""},
	} {
		req := httptest.NewRequest("POST", "/mcp", nil)
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		gw, gerr := g.authorize(req, r)
		own, granted, verr := v.Verify(t.Context(), tc.header)
		if (gerr == nil) != tc.admit || (verr == nil) != tc.admit {
			t.Errorf("%s: the gateway's authorizer %v, the function's %v; want admitted %v", tc.name, gerr, verr, tc.admit)
			continue
		}
		if tc.admit && (own.Text("sub") != gw["sub"] || own.Text("tenant") != gw["tenant"] || strings.Join(granted, " ") != strings.Join(tokenScopes(gw), " ") || strings.Join(granted, " ") != tc.scopes) {
			t.Errorf("%s: claims %v and %v, scopes %v and %v, want %q", tc.name, own, gw, granted, tokenScopes(gw), tc.scopes)
		}
	}
}

// TestAForbiddenTokenIsToldTheScope: a valid token without any of the route's scopes is 403,
// as API Gateway's authorizer answers it, and the stand-in names the scopes the route takes
// (WWW-Authenticate: Bearer error="insufficient_scope"); a token holding one is let through.
func TestAForbiddenTokenIsToldTheScope(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := testGateway(t, "GET /runs/{runId}")
	g.tokens = devjwt.NewVerifier(devjwt.StaticKey{Public: &key.PublicKey})
	r, _ := g.match("GET", "/runs/r1")
	r.Issuer, r.Audience, r.Required = "https://issuer.example", []string{"engine"}, []string{"runs:read", "interrupts:write"}
	for _, c := range []struct {
		scopes    []string
		forbidden bool
	}{{[]string{"contacts:manage"}, true}, {nil, true}, {[]string{"runs:read"}, false}} {
		claims := devjwt.Token{Subject: "e", ClientID: "engine", Issuer: r.Issuer, TTL: time.Hour, Scopes: c.scopes}.Claims(time.Now())
		signed, err := devjwt.Sign(key, claims)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", "/runs/r1", nil)
		req.Header.Set("Authorization", "Bearer "+signed)
		if !c.forbidden {
			// Let through to the function, which this test has not started: the authorizer's word.
			if _, err := g.authorize(req, r); err != nil {
				t.Errorf("scopes %v: %v, want let through", c.scopes, err)
			}
			continue
		}
		w := httptest.NewRecorder()
		status, _, _ := g.serve(w, req, "req-1")
		if got := w.Header().Get("Www-Authenticate"); status != 403 || got != `Bearer error="insufficient_scope", scope="runs:read interrupts:write"` {
			t.Errorf("scopes %v: %d, WWW-Authenticate %q", c.scopes, status, got)
		}
	}
}
