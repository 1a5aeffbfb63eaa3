package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"gopkg.in/yaml.v3"

	"github.com/interrupthost/interrupthost/infra/local/devjwt"
	"github.com/interrupthost/interrupthost/infra/local/gateway"
)

// templateRoute is a route as template.yaml declares it.
type templateRoute struct {
	function string
	// open routes take no JWT: the token in their path authenticates.
	open bool
}

// templateRoutes reads the routes of template.yaml with nothing but a YAML parser, apart from
// the code the gateway uses, by route key.
func templateRoutes(t *testing.T) map[string]templateRoute {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties struct {
				CodeUri string `yaml:"CodeUri"`
				Events  map[string]struct {
					Type       string `yaml:"Type"`
					Properties struct {
						Method string `yaml:"Method"`
						Path   string `yaml:"Path"`
						Auth   struct {
							Authorizer string `yaml:"Authorizer"`
						} `yaml:"Auth"`
					} `yaml:"Properties"`
				} `yaml:"Events"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	routes := map[string]templateRoute{}
	for _, r := range doc.Resources {
		for _, e := range r.Properties.Events {
			if e.Type == "HttpApi" {
				routes[strings.ToUpper(e.Properties.Method)+" "+e.Properties.Path] = templateRoute{filepath.Base(r.Properties.CodeUri), e.Properties.Auth.Authorizer == "NONE"}
			}
		}
	}
	if len(routes) == 0 {
		t.Fatal("template.yaml declares no HttpApi routes")
	}
	return routes
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
	for key := range templateRoutes(t) {
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

// TestRouteTableMatchesTheTemplate compares the gateway's route table, built the way the stack
// builds it, with the template read independently.
func TestRouteTableMatchesTheTemplate(t *testing.T) {
	gw := gatewayForTemplate(t)
	want := slices.Sorted(maps.Keys(templateRoutes(t)))
	if got := gw.Routes(); !slices.Equal(got, want) {
		t.Errorf("gateway routes %v, template routes %v", got, want)
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
	fresh.TTL = time.Hour
	good := fresh.Claims(now)
	with := func(k string, v any) devjwt.Claims {
		c := maps.Clone(good)
		c[k] = v
		return c
	}
	valid := sign(good)
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
		{"tampered", "Bearer " + valid[:len(valid)-4] + "AAAA", 401},
		{"without the route's scope", "Bearer " + sign(with("scope", "approvals:respond")), 403},
		{"bare token", valid, 201},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := newRun("auth")
			a := rawAuth(t, "POST", "/runs/"+run+"/interrupts", c.auth, `{"nodeId":"n1","payload":`+example(t, "custom")+`}`)
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

func rawAuth(t *testing.T, method, path, authorization, body string) answer {
	t.Helper()
	a, err := sendWith(method, path, authorization, body)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestFunctionsRefuseAMissingScopeThemselves invokes each JWT route's function directly under
// the emulator, with an event whose authorizer context lacks the route's scope, as a mis-wired
// route would deliver it.
func TestFunctionsRefuseAMissingScopeThemselves(t *testing.T) {
	r := root(t)
	for key, route := range templateRoutes(t) {
		if route.open {
			continue
		}
		name := route.function
		t.Run(key, func(t *testing.T) {
			pool := &gateway.Pool{
				Name: name, Bootstrap: filepath.Join(r, ".local", "functions", name), RIE: filepath.Join(r, ".local", "bin", "aws-lambda-rie"),
				Env: os.Environ(), Max: 1, Logs: io.Discard, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			}
			defer pool.Close()
			method, path, _ := strings.Cut(key, " ")
			ev := events.APIGatewayV2HTTPRequest{
				Version: "2.0", RouteKey: key, RawPath: concrete(path),
				Headers:        map[string]string{"content-type": "application/json"},
				PathParameters: map[string]string{"runId": "r1", "nodeId": "n1"},
				Body:           "{}",
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					RequestID: "direct", RouteKey: key,
					HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: concrete(path)},
					Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{
						Claims: map[string]string{"sub": "mallory", "tenant": "acme", "scope": "nothing:useful"},
						Scopes: []string{"nothing:useful"},
					}},
				},
			}
			raw, _ := json.Marshal(ev)
			out, err := pool.Invoke(context.Background(), "direct", raw)
			if err != nil {
				t.Fatal(err)
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
