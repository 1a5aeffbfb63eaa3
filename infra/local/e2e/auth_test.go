package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/infra/local/gateway"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// route is a route of template.yaml: the function that serves it, and whether it is open (its
// function authenticates, by the token in its path).
type route struct {
	function string
	open     bool
}

// routes lists the template's routes by key, as the stack reads them (samtemplate's tests hold
// that reading to an independent one).
func routes(t *testing.T) map[string]route {
	t.Helper()
	tmpl, err := samtemplate.Load(filepath.Join(root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tmpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]route{}
	for _, f := range fns {
		for _, r := range f.Routes {
			out[r.Key()] = route{function: f.Name, open: r.Authorizer == samtemplate.NoAuthorizer}
		}
	}
	return out
}

// concrete fills a route's path parameters.
func concrete(path string) string {
	var out []string
	for _, s := range strings.Split(path, "/") {
		if strings.HasPrefix(s, "{") {
			s = "no-such-" + strings.Trim(s, "{}")
		}
		out = append(out, s)
	}
	return strings.Join(out, "/")
}

// TestEveryTemplateRouteIsServedByItsFunction: each route of the template answers through the
// gateway with its function's own answer, and nothing else is routed.
func TestEveryTemplateRouteIsServedByItsFunction(t *testing.T) {
	all := jwt(t, everyone)
	for key := range routes(t) {
		method, path, _ := strings.Cut(key, " ")
		body := ""
		if method == "POST" {
			body = "{}"
		}
		a := do(t, method, concrete(path), all, body)
		// Every answer of a function says Cache-Control: no-store; the gateway's own never do.
		if a.Header.Get("Cache-Control") != "no-store" || bytes.HasPrefix(a.Body, []byte(`{"message":`)) {
			t.Errorf("%s: %d %s %s, want its function's own answer", key, a.Status, a.Header.Get("Content-Type"), a.Body)
		}
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/runs"}, {"DELETE", "/runs/r1"}, {"PUT", "/runs/r1/interrupts"},
		{"GET", "/runs/r1/interrupts/n1/extra"}, {"POST", "/runs//interrupts"},
	} {
		a := do(t, c.method, c.path, all, "")
		if a.Status != 404 || string(a.Body) != `{"message":"Not Found"}` {
			t.Errorf("%s %s: %d %s, want the gateway's 404", c.method, c.path, a.Status, a.Body)
		}
	}
}

// TestGatewayAuth: API Gateway's answers, given before any function runs.
func TestGatewayAuth(t *testing.T) {
	key, err := devjwt.LoadKey(root(t))
	if err != nil {
		t.Fatal(err)
	}
	sign := func(c devjwt.Claims) string {
		s, err := devjwt.Sign(key, c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	now := time.Now()
	fresh := engine
	fresh.Issuer, fresh.TTL = devjwt.IssuerAt(gatewayURL()), time.Hour
	good := fresh.Claims(now)
	with := func(k string, v any) devjwt.Claims {
		c := maps.Clone(good)
		c[k] = v
		return c
	}
	valid := sign(good)
	// An engine's own app client, as Cognito's access tokens name it: client_id, and no aud.
	engineClient := maps.Clone(good)
	delete(engineClient, "aud")
	engineClient["client_id"] = devjwt.EngineClientID
	otherAud := maps.Clone(engineClient)
	otherAud["aud"] = "someone-else"
	cases := []struct {
		name, auth string
		status     int
	}{
		{"no JWT", "", 401},
		{"not a JWT", "Bearer nonsense", 401},
		{"expired", "Bearer " + sign(with("exp", now.Add(-time.Second).Unix())), 401},
		{"not yet valid", "Bearer " + sign(with("nbf", now.Add(time.Hour).Unix())), 401},
		{"other issuer", "Bearer " + sign(with("iss", "https://evil.example")), 401},
		{"other audience", "Bearer " + sign(with("aud", "someone-else")), 401},
		{"an engine's app client, in client_id", "Bearer " + sign(engineClient), 201},
		{"an engine's client_id beside another aud", "Bearer " + sign(otherAud), 401},
		{"tampered", "Bearer " + valid[:len(valid)-4] + "AAAA", 401},
		{"without the route's scope", "Bearer " + sign(with("scope", "approvals:respond")), 403},
		{"bare token", valid, 201},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := newRun("auth")
			a := call{method: "POST", path: "/runs/" + run + "/interrupts", authorization: c.auth, body: `{"nodeId":"n1","payload":` + example(t, "custom") + `}`}.must(t)
			if a.Status != c.status {
				t.Fatalf("%d %s, want %d", a.Status, a.Body, c.status)
			}
			if c.status >= 400 && !bytes.HasPrefix(a.Body, []byte(`{"message":`)) {
				t.Errorf("body %s is not the gateway's own answer", a.Body)
			}
			if c.status >= 400 {
				if snap := do(t, "GET", "/runs/"+run, jwt(t, engine), ""); snap.Status != 404 {
					t.Errorf("a refused request created run %s: %d", run, snap.Status)
				}
			}
		})
	}
}

// TestFunctionsRefuseAMissingScopeThemselves invokes each JWT route's function directly under
// the emulator, with an event whose authorizer context lacks the route's scope, as a mis-wired
// route would deliver it.
func TestFunctionsRefuseAMissingScopeThemselves(t *testing.T) {
	localaws.NeedsStack(t)
	r := root(t)
	claims := map[string]string{"sub": "mallory", "tenant": "acme", "scope": "nothing:useful"}
	payload, _ := json.Marshal(claims)
	bearer := "Bearer eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(payload) + ".c2ln"
	for key, route := range routes(t) {
		if route.open {
			continue
		}
		name := route.function
		t.Run(key, func(t *testing.T) {
			// What the emulator and the function print, shown if the function does not answer
			// (read once Close has waited for them: os/exec writes one stream at a time).
			var logs bytes.Buffer
			pool := &gateway.Pool{
				Name: name, Bootstrap: filepath.Join(functionsDir(t), name), RIE: filepath.Join(r, ".local", "bin", "aws-lambda-rie"),
				// The template gives the functions that sign links (subscriptions' resends) the
				// public URL; the stack's environment has the rest.
				Env: append(os.Environ(), "PUBLIC_BASE_URL="+gatewayURL()), Max: 1, Logs: &logs, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			}
			defer pool.Close()
			method, path, _ := strings.Cut(key, " ")
			ev := events.APIGatewayV2HTTPRequest{
				Version: "2.0", RouteKey: key, RawPath: concrete(path),
				Headers:        map[string]string{"content-type": "application/json", "authorization": bearer},
				PathParameters: map[string]string{"runId": "r1", "nodeId": "n1"},
				Body:           "{}",
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					RequestID: "direct", RouteKey: key,
					HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: concrete(path)},
					Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{
						Claims: claims, Scopes: []string{"nothing:useful"},
					}},
				},
			}
			raw, _ := json.Marshal(ev)
			out, err := pool.Invoke(context.Background(), "direct", raw)
			pool.Close()
			if err != nil {
				t.Fatalf("%v; the emulator and the function printed:\n%s", err, logs.String())
			}
			var resp events.APIGatewayV2HTTPResponse
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			if resp.StatusCode != 403 || !strings.Contains(resp.Body, `"code":"forbidden"`) {
				t.Errorf("%d %s, want 403 forbidden", resp.StatusCode, resp.Body)
			}
		})
	}
}

// TestAScopePrefix: a deployment whose identity provider issues scopes under a prefix (a
// Cognito resource server's identifier) sets ScopePrefix, and both the gateway's authorizer
// (the template's AuthorizationScopes) and the function's own check then want the prefixed
// names: a token with the bare names, or another resource server's, is refused by both.
func TestAScopePrefix(t *testing.T) {
	const prefix = "https://api.example.com/"
	base := serveGateway(t, map[string]string{"ScopePrefix": prefix})
	run := newRun("prefix")
	for _, c := range []struct {
		name   string
		scopes []string
		status int
	}{
		{"the prefixed scopes", []string{prefix + "interrupts:write", prefix + "runs:read"}, 201},
		{"the bare names", []string{"interrupts:write", "runs:read"}, 403},
		{"another resource server's", []string{"https://other.example.com/interrupts:write"}, 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok := jwt(t, devjwt.Token{Subject: "engine", Tenant: "acme", Scopes: c.scopes})
			a := call{base: base, method: "POST", path: "/runs/" + run + "/interrupts", bearer: tok, body: `{"nodeId":"n1","payload":` + example(t, "custom") + `}`}.must(t)
			if a.Status != c.status {
				t.Errorf("%d %s, want %d", a.Status, a.Body, c.status)
			}
		})
	}
}
