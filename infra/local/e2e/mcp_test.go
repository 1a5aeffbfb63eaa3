package e2e

import (
	"context"
	"crypto/rand"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/mcptest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/mcp"
)

// bearer is a transport that sends a JWT, as an MCP client configured with one does.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession is the official Go SDK's client connected to the stack's /mcp with token, at the
// protocol version it negotiates by default, or at version.
func mcpSession(t *testing.T, token, version string) *sdk.ClientSession {
	t.Helper()
	localaws.NeedsStack(t)
	return mcptest.Connect(t, gatewayURL()+"/mcp", bearer(token), version)
}

var callTool = mcptest.Call

// TestAnAgentAsksThroughMCP: the official Go SDK's client, given a JWT, lists the four tools at
// the stack's /mcp; request_approval for alice answers an interrupt and its page; get_outcome
// on it waits its bounded time and answers pending; alice's resolve by run makes it answer
// accept with her as the decider; the same call with the same key answers the same interrupt and
// writes nothing. Both protocol generations the SDK speaks are served.
func TestAnAgentAsksThroughMCP(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+version, func(t *testing.T) {
			tenant := newRun("mcp")
			agent := jwt(t, devjwt.Token{Subject: "agent-7", Tenant: tenant, Scopes: []string{"interrupts:write", "runs:read"}})
			cs := mcpSession(t, agent, version)
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"ask_question", "end_run", "get_outcome", "list_pending", "request_approval"}) {
				t.Errorf("tools %v", names)
			}

			run := newRun("agent")
			args := map[string]any{"title": "Refund order 1182", "approvers": []string{"alice"}, "runId": run, "key": "refund-1182"}
			var first mcp.Requested
			if msg := callTool(t, cs, "request_approval", args, &first); msg != "" {
				t.Fatal(msg)
			}
			if !first.Created || first.Status != "pending" || !strings.HasPrefix(first.InterruptID, "int_") || first.URL != gatewayURL()+"/approve/"+run+"/"+first.InterruptID {
				t.Errorf("requested %+v", first)
			}
			if page := (call{method: "GET", path: strings.TrimPrefix(first.URL, gatewayURL())}).must(t); page.Status != http.StatusSeeOther && page.Status != http.StatusOK {
				t.Errorf("the page answered %d", page.Status)
			}

			var out mcp.Outcome
			start := time.Now()
			if msg := callTool(t, cs, "get_outcome", map[string]any{"runId": run, "interruptId": first.InterruptID, "waitMs": 1500}, &out); msg != "" || out.Status != "pending" {
				t.Errorf("pending: %+v %q", out, msg)
			}
			if waited := time.Since(start); waited < 1500*time.Millisecond {
				t.Errorf("get_outcome answered pending after %v, before its wait", waited)
			}

			alice := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "alice", Tenant: tenant, Scopes: []string{"approvals:respond"}})))
			if _, err := alice.Resolve(context.Background(), run, "refund-1182", client.Decision{Action: "accept", DecidedAt: "2026-12-02T09:00:00Z", Feedback: "within policy"}); err != nil {
				t.Fatal(err)
			}
			if msg := callTool(t, cs, "get_outcome", map[string]any{"runId": run, "interruptId": first.InterruptID, "waitMs": 5000}, &out); msg != "" {
				t.Fatal(msg)
			}
			if out.Status != "resolved" || out.Action != "accept" || out.DecidedBy != "alice" || len(out.Votes) != 1 || out.Votes[0].Feedback != "within policy" {
				t.Errorf("decided: %+v", out)
			}

			reader := client.New(gatewayURL(), client.WithBearer(agent))
			events := func() int {
				page, err := reader.Events(context.Background(), run, 0)
				if err != nil {
					t.Fatal(err)
				}
				return len(page.Events)
			}
			before := events()
			var again mcp.Requested
			if msg := callTool(t, cs, "request_approval", args, &again); msg != "" || again.Created || again.InterruptID != first.InterruptID || again.Status != "resolved" {
				t.Errorf("asked again: %+v %q", again, msg)
			}
			if after := events(); after != before {
				t.Errorf("asking again appended %d events", after-before)
			}

			if msg := callTool(t, cs, "request_approval", map[string]any{"title": "x", "approvers": []string{"alice"}, "requiredApprovals": 2}, &again); !strings.Contains(msg, "validation_error") {
				t.Errorf("a quorum alice alone cannot reach: %q", msg)
			}
		})
	}
}

// TestTheMCPEndpointsAuth: the protected resource metadata names the issuer and the scope a
// person signing in through an MCP client asks for (the agents' sign-in's); a caller without a
// JWT is refused by the gateway, one whose JWT carries no tenant by the function, which names
// the metadata; GET and DELETE are 405, as the stateless transport keeps no stream or session.
func TestTheMCPEndpointsAuth(t *testing.T) {
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		var meta struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
		}
		a := call{method: "GET", path: path}.must(t)
		a.json(t, &meta)
		if a.Status != 200 || meta.Resource != gatewayURL()+"/mcp" || !slices.Equal(meta.AuthorizationServers, []string{devjwt.IssuerAt(gatewayURL())}) ||
			!slices.Equal(meta.ScopesSupported, []string{"agents:ask"}) {
			t.Errorf("%s: %d %s", path, a.Status, a.Body)
		}
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	challenge := `Bearer resource_metadata="` + gatewayURL() + `/.well-known/oauth-protected-resource/mcp", scope="agents:ask"`
	expired := jwt(t, devjwt.Token{Subject: "agent-7", Tenant: "acme", Scopes: []string{"runs:read"}, TTL: -time.Minute})
	for name, bearer := range map[string]string{"no JWT": "", "an expired JWT": expired, "not a JWT": "nope"} {
		if a := (call{method: "POST", path: "/mcp", body: initialize, bearer: bearer}).must(t); a.Status != 401 || a.Header.Get("WWW-Authenticate") != challenge+`, error="invalid_token"` {
			t.Errorf("%s: %d %q %s", name, a.Status, a.Header.Get("WWW-Authenticate"), a.Body)
		}
	}
	noTenant := jwt(t, devjwt.Token{Subject: "agent-7", Scopes: []string{"runs:read"}})
	a := call{method: "POST", path: "/mcp", body: initialize, bearer: noTenant}.must(t)
	if a.Status != 403 || a.Header.Get("WWW-Authenticate") != challenge {
		t.Errorf("no tenant: %d %q %s", a.Status, a.Header.Get("WWW-Authenticate"), a.Body)
	}
	approverOnly := jwt(t, devjwt.Token{Subject: "alice", Tenant: "acme", Scopes: []string{"approvals:respond"}})
	if a := (call{method: "POST", path: "/mcp", body: initialize, bearer: approverOnly}).must(t); a.Status != 403 || a.Header.Get("WWW-Authenticate") != challenge+`, error="insufficient_scope"` {
		t.Errorf("without the scopes: %d %q %s", a.Status, a.Header.Get("WWW-Authenticate"), a.Body)
	}
	agent := jwt(t, devjwt.Token{Subject: "agent-7", Tenant: newRun("mcp"), Scopes: []string{"runs:read"}})
	// One message per POST, from the stack's own origin or none; nothing runs for a refusal.
	for name, c := range map[string]call{
		"a batch":          {method: "POST", path: "/mcp", body: "[" + initialize + "]", bearer: agent},
		"300 KB":           {method: "POST", path: "/mcp", body: initialize[:len(initialize)-1] + `,"pad":"` + strings.Repeat("x", 300<<10) + `"}`, bearer: agent},
		"a foreign Origin": {method: "POST", path: "/mcp", body: initialize, bearer: agent, headers: map[string]string{"Origin": "http://evil.example.com"}},
	} {
		want := map[string]int{"a batch": 400, "300 KB": 413, "a foreign Origin": 403}[name]
		if a := c.must(t); a.Status != want || a.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s, want %d", name, a.Status, a.Body, want)
		}
	}
	if a := (call{method: "POST", path: "/mcp", body: initialize, bearer: agent, headers: map[string]string{"Origin": gatewayURL()}}).must(t); a.Status != 200 {
		t.Errorf("the stack's own Origin: %d %s", a.Status, a.Body)
	}
	for _, method := range []string{"GET", "DELETE"} {
		if a := (call{method: method, path: "/mcp", bearer: agent}).must(t); a.Status != 405 || a.Header.Get("Allow") != "POST" || a.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %q %s", method, a.Status, a.Header.Get("Allow"), a.Body)
		}
	}
	if a := (call{method: "POST", path: "/mcp", body: initialize, bearer: agent}).must(t); a.Status != 200 || !strings.Contains(string(a.Body), `"serverInfo"`) {
		t.Errorf("initialize with curl's Accept: %d %s", a.Status, a.Body)
	}
}

// TestAnAgentsRunEnds: through the stack, a person signed in through the agents' client (its
// token: agents:ask alone) asks without naming a run; once the approver rejects, the run the
// endpoint made is completed by the host, so retention applies to it; a run the person
// began under an id of the endpoint's and named is ended by end_run.
func TestAnAgentsRunEnds(t *testing.T) {
	tenant := newRun("agents")
	person := jwt(t, devjwt.Token{Subject: "mallory", Tenant: tenant, Scopes: []string{"agents:ask"}, ClientID: devjwt.MCPClientID})
	cs := mcpSession(t, person, "")
	var asked mcp.Requested
	if msg := callTool(t, cs, "request_approval", map[string]any{"title": "Refund order 1182", "approvers": []string{"alice"}}, &asked); msg != "" {
		t.Fatal(msg)
	}
	alice := jwt(t, devjwt.Token{Subject: "alice", Tenant: tenant, Scopes: []string{"approvals:respond"}})
	if a := do(t, "POST", "/runs/"+asked.RunID+"/interrupts/"+asked.NodeID, alice, `{"resumeValue":{"action":"reject","decidedAt":"2026-12-05T09:00:00Z"}}`); a.Status != 200 {
		t.Fatalf("alice's rejection: %d %s", a.Status, a.Body)
	}
	ops := jwt(t, devjwt.Token{Subject: "ops", Tenant: tenant, Scopes: []string{"runs:read"}})
	var run struct {
		Status string `json:"status"`
	}
	do(t, "GET", "/runs/"+asked.RunID, ops, "").json(t, &run)
	if run.Status != "completed" {
		t.Errorf("the run the endpoint made, its approval rejected: %s, want completed", run.Status)
	}
	named := host.AgentRunPrefix + strings.ToLower(rand.Text())
	if msg := callTool(t, cs, "ask_question", map[string]any{"questions": []map[string]any{{"id": "q", "question": "Which?"}}, "runId": named, "key": "q"}, &asked); msg != "" {
		t.Fatal(msg)
	}
	var ended mcp.Ended
	if msg := callTool(t, cs, "end_run", map[string]any{"runId": named, "reason": "done"}, &ended); msg != "" || ended.Status != "completed" {
		t.Errorf("end_run: %+v %q", ended, msg)
	}
	do(t, "GET", "/runs/"+named, ops, "").json(t, &run)
	if run.Status != "completed" {
		t.Errorf("the run the person named, after end_run: %s", run.Status)
	}
}
