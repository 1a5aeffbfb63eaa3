package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
)

// TestAnMCPClientSignsInWithOnlyTheURL: an MCP client given nothing but the endpoint's URL and
// the public client's id (the official Go SDK's OAuth client, auth.AuthorizationCodeHandler)
// follows the 401's WWW-Authenticate to the protected resource metadata, the issuer's metadata,
// signs alice in through the local issuer's login form (driven here without a browser, as a
// person would submit it) with PKCE, and then calls the tools as alice of tenant acme.
func TestAnMCPClientSignsInWithOnlyTheURL(t *testing.T) {
	localaws.NeedsStack(t)
	ctx := context.Background()
	const redirect = "http://127.0.0.1:8976/callback" // never listened on: the fetcher reads the redirect
	signIns := 0
	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		signIns++
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, err
		}
		q := u.Query()
		if q.Get("client_id") != devjwt.MCPClientID || q.Get("code_challenge_method") != "S256" || q.Get("resource") != gatewayURL()+"/mcp" {
			t.Errorf("the authorization request: %s", args.URL)
		}
		page, err := httpClient.Get(args.URL)
		if err != nil {
			return nil, err
		}
		page.Body.Close()
		if page.StatusCode != http.StatusOK {
			return nil, errors.New("the login form: " + page.Status)
		}
		form := url.Values{"user": {"alice"}, "tenant": {"acme"}}
		for _, name := range []string{"client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method"} {
			form.Set(name, q.Get(name))
		}
		resp, err := noRedirects.PostForm(u.Scheme+"://"+u.Host+u.Path, form)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		back, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(back.String(), redirect) {
			return nil, errors.New("the login answered " + resp.Status + " " + resp.Header.Get("Location"))
		}
		return &auth.AuthorizationResult{Code: back.Query().Get("code"), State: back.Query().Get("state")}, nil
	}
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient:      &oauthex.ClientCredentials{ClientID: devjwt.MCPClientID},
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetch,
		Client:                   httpClient,
	})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "oauth-agent", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: gatewayURL() + "/mcp", OAuthHandler: handler, HTTPClient: httpClient}, nil)
	if err != nil {
		t.Fatalf("connect with only the URL: %v", err)
	}
	defer cs.Close()
	if signIns != 1 {
		t.Errorf("%d sign-ins, want one", signIns)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "request_approval", Arguments: map[string]any{
		"title": "Refund order 1182", "approvers": []string{"bob"}}})
	if err != nil || res.IsError {
		t.Fatalf("request_approval: %+v %v", res, err)
	}
	out, ok := res.StructuredContent.(map[string]any)
	if !ok || !regexp.MustCompile(`/approve/`).MatchString(fmt.Sprint(out["url"])) {
		t.Fatalf("the request's answer: %+v", res.StructuredContent)
	}
	got, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_outcome", Arguments: map[string]any{"runId": out["runId"], "interruptId": out["interruptId"]}})
	if err != nil || got.IsError {
		t.Fatalf("get_outcome: %+v %v", got, err)
	}
	if o, _ := got.StructuredContent.(map[string]any); o["status"] != "pending" {
		t.Errorf("the outcome: %+v", got.StructuredContent)
	}
	// The run is of tenant acme, which the token named: acme reads it, another tenant does not.
	run := fmt.Sprint(out["runId"])
	if a := do(t, "GET", "/runs/"+run, jwt(t, devjwt.Token{Subject: "ops", Tenant: "acme", Scopes: []string{"runs:read"}}), ""); a.Status != 200 {
		t.Errorf("the run as acme: %d %s", a.Status, a.Body)
	}
	if a := do(t, "GET", "/runs/"+run, jwt(t, devjwt.Token{Subject: "ops", Tenant: "evilcorp", Scopes: []string{"runs:read"}}), ""); a.Status != 404 {
		t.Errorf("the run as another tenant: %d %s", a.Status, a.Body)
	}
	// And it is alice's: list_pending lists the caller's own requests, once the tenant's pending
	// list (a read model, filled from the table's stream) has it. The list is acme's, which every
	// earlier run of this test (and others of acme) fills: the run may be on any page, and a
	// page of others' requests lists none of them, so every page is read.
	deadline := time.Now().Add(30 * time.Second)
	for !pendingLists(ctx, t, cs, run) {
		if time.Now().After(deadline) {
			t.Fatalf("alice's pending list never named %s", run)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// pendingLists reports whether list_pending names run on any of its pages.
func pendingLists(ctx context.Context, t *testing.T, cs *mcp.ClientSession, run string) bool {
	t.Helper()
	after := ""
	for range 1000 {
		list, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_pending", Arguments: map[string]any{"after": after, "limit": 100}})
		if err != nil || list.IsError {
			t.Fatalf("list_pending: %+v %v", list, err)
		}
		page, _ := list.StructuredContent.(map[string]any)
		if strings.Contains(fmt.Sprint(page["interrupts"]), run) {
			return true
		}
		next, _ := page["next"].(string)
		if next == "" || next == after {
			return false
		}
		after = next
	}
	t.Fatalf("list_pending: more than 1000 pages")
	return false
}

// TestAPythonMCPClientSignsInWithOnlyTheURL: the official Python SDK's OAuth client (the `mcp`
// package, pinned in infra/local/requirements-mcp.txt), given only the URL and the public
// client's id, follows the 401 to the metadata and the issuer, signs alice of acme in through
// the local issuer's form (infra/local/mcpclient/signin.py submits it without a browser), and
// calls the tools as her: the request is acme's run, requested by alice.
func TestAPythonMCPClientSignsInWithOnlyTheURL(t *testing.T) {
	localaws.NeedsStack(t)
	python := filepath.Join(root(t), ".venv-mcp", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("the MCP Python SDK's venv is missing (make deps installs it): %v", err)
	}
	cmd := exec.Command(python, filepath.Join(root(t), "infra", "local", "mcpclient", "signin.py"), gatewayURL()+"/mcp", devjwt.MCPClientID, "alice", "acme")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Python client: %v\n%s", err, stderr.String())
	}
	var saw struct {
		Tools     []string
		Requested struct{ RunID, InterruptID, URL, Status string }
		Outcome   struct{ Status string }
		SignIns   int
		Authorize string
	}
	if err := json.Unmarshal(out, &saw); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !slices.Equal(saw.Tools, []string{"ask_question", "end_run", "get_outcome", "list_pending", "request_approval"}) || saw.SignIns != 1 || saw.Outcome.Status != "pending" ||
		saw.Requested.URL != gatewayURL()+"/approve/"+saw.Requested.RunID+"/"+saw.Requested.InterruptID {
		t.Fatalf("the Python client saw %+v", saw)
	}
	q, err := url.Parse(saw.Authorize)
	if err != nil || q.Query().Get("client_id") != devjwt.MCPClientID || q.Query().Get("code_challenge_method") != "S256" || q.Query().Get("resource") != gatewayURL()+"/mcp" {
		t.Errorf("the authorization request: %s", saw.Authorize)
	}
	var pending struct {
		Interrupts []struct{ InterruptID, RequestedBy string }
	}
	do(t, "GET", "/interrupts?runId="+saw.Requested.RunID, jwt(t, devjwt.Token{Subject: "ops", Tenant: "acme", Scopes: []string{"runs:read"}}), "").json(t, &pending)
	if len(pending.Interrupts) != 1 || pending.Interrupts[0].RequestedBy != "alice" {
		t.Errorf("the run as acme reads it: %+v", pending)
	}
}

// TestAPythonMCPClientSignsInWithAMetadataURL: the official Python SDK's OAuth client, given
// only the URL and no client id of the issuer's, serves its own client ID metadata document on a
// loopback port and signs in with that URL as its client_id (the SDK's CIMD path, which the
// issuer's metadata enables: client_id_metadata_document_supported); the local issuer fetches
// the document once for the sign-in, issues the agents' token naming the URL, and /mcp, which
// the local stack lets any loopback URL sign in to, serves alice of acme.
func TestAPythonMCPClientSignsInWithAMetadataURL(t *testing.T) {
	localaws.NeedsStack(t)
	python := filepath.Join(root(t), ".venv-mcp", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("the MCP Python SDK's venv is missing (make deps installs it): %v", err)
	}
	cmd := exec.Command(python, filepath.Join(root(t), "infra", "local", "mcpclient", "signin.py"), gatewayURL()+"/mcp", "metadata-url", "alice", "acme")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Python client: %v\n%s", err, stderr.String())
	}
	var saw struct {
		Tools     []string
		Requested struct{ RunID, InterruptID, URL string }
		Outcome   struct{ Status string }
		SignIns   int
		Authorize string
		ClientID  string
		Fetches   int
	}
	if err := json.Unmarshal(out, &saw); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !slices.Contains(saw.Tools, "request_approval") || saw.SignIns != 1 || saw.Outcome.Status != "pending" ||
		!strings.HasPrefix(saw.ClientID, "http://127.0.0.1:") || saw.Fetches != 1 {
		t.Fatalf("the Python client saw %+v", saw)
	}
	q, err := url.Parse(saw.Authorize)
	if err != nil || q.Query().Get("client_id") != saw.ClientID || q.Query().Get("code_challenge_method") != "S256" || q.Query().Get("scope") != "agents:ask" {
		t.Errorf("the authorization request: %s", saw.Authorize)
	}
	var pending struct {
		Interrupts []struct{ InterruptID, RequestedBy string }
	}
	do(t, "GET", "/interrupts?runId="+saw.Requested.RunID, jwt(t, devjwt.Token{Subject: "ops", Tenant: "acme", Scopes: []string{"runs:read"}}), "").json(t, &pending)
	if len(pending.Interrupts) != 1 || pending.Interrupts[0].RequestedBy != "alice" {
		t.Errorf("the run as acme reads it: %+v", pending)
	}
}

// TestAMetadataURLsTokenWhereAllowed: /mcp takes a token whose client is a metadata URL the
// deployment allows (the local stack: any loopback URL) as the agents' sign-in's, whatever
// scopes it names, and refuses, 401 naming the metadata, one whose URL it does not allow, as any
// foreign token; no REST route takes either. The issuer's registration endpoint says what to use.
func TestAMetadataURLsTokenWhereAllowed(t *testing.T) {
	localaws.NeedsStack(t)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	token := func(client string) string {
		return jwt(t, devjwt.Token{Subject: "alice", Username: "alice", Tenant: "acme", ClientID: client, Scopes: []string{"agents:ask", "interrupts:write", "runs:read"}})
	}
	allowed, foreign := token("http://127.0.0.1:8765/client.json"), token("https://evil.example/client.json")
	if a := (call{method: "POST", path: "/mcp", body: initialize, bearer: allowed}).must(t); a.Status != 200 {
		t.Errorf("an allowed metadata URL: %d %s", a.Status, a.Body)
	}
	a := call{method: "POST", path: "/mcp", body: initialize, bearer: foreign}.must(t)
	if a.Status != 401 || !strings.Contains(a.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("a metadata URL not allowed: %d %q %s", a.Status, a.Header.Get("WWW-Authenticate"), a.Body)
	}
	for _, bearer := range []string{allowed, foreign} {
		if a := do(t, "GET", "/interrupts", bearer, ""); a.Status != 401 {
			t.Errorf("a REST route: %d %s", a.Status, a.Body)
		}
	}
	reg := call{method: "POST", path: devjwt.IssuerPath + "/register", body: `{"redirect_uris":["http://127.0.0.1:8978/callback"]}`}.must(t)
	if reg.Status != 400 || !strings.Contains(string(reg.Body), "invalid_client_metadata") || !strings.Contains(string(reg.Body), devjwt.MCPClientID) {
		t.Errorf("registration: %d %s", reg.Status, reg.Body)
	}
}

// TestAPythonMCPClientAsksUnderAPolicy: Python's official MCP client, signed in with nothing but
// the URL and its client metadata URL, asks for issue_refund in a tenant whose administrator set
// a policy of it (carol decides; refunds up to 50.00 stand approved): a large refund waits, and
// bob cannot decide it while carol can; the agent naming its own approver is refused, naming
// the policy; a small refund is approved at once by the policy's version, with a receipt that
// the executor redeems.
func TestAPythonMCPClientAsksUnderAPolicy(t *testing.T) {
	localaws.NeedsStack(t)
	python := filepath.Join(root(t), ".venv-mcp", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("the MCP Python SDK's venv is missing (make deps installs it): %v", err)
	}
	tenant := fmt.Sprintf("policy-%d", time.Now().UnixNano())
	admin := jwt(t, devjwt.Token{Subject: "ops", Tenant: tenant, Scopes: []string{"policies:manage"}})
	rule := `{"approversList":["carol"],"standing":[{"arguments":{"type":"object","properties":{"amountCents":{"type":"integer","maximum":5000}},"required":["amountCents"]},"description":"refunds up to 50.00"}]}`
	if a := do(t, "PUT", "/policies/tools/issue_refund", admin, rule); a.Status != 201 {
		t.Fatalf("the policy: %d %s", a.Status, a.Body)
	}
	cmd := exec.Command(python, filepath.Join(root(t), "infra", "local", "mcpclient", "signin.py"), gatewayURL()+"/mcp", "metadata-url", "alice", tenant, "policy")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Python client: %v\n%s", err, stderr.String())
	}
	var saw struct {
		Large, Small struct{ RunID, NodeID, InterruptID, Status string }
		Named        struct {
			IsError bool
			Text    string
		}
		Outcome struct {
			Status, Action, DecidedBy, Receipt string
			ApprovedCall                       struct {
				Name      string
				Arguments map[string]any
			}
		}
		SignIns int
	}
	if err := json.Unmarshal(out, &saw); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if saw.SignIns != 1 || saw.Large.Status != "pending" || saw.Small.Status != "resolved" {
		t.Fatalf("the Python client saw %s", out)
	}
	if !saw.Named.IsError || !strings.Contains(saw.Named.Text, "Policy issue_refund v1 says who decides calls of issue_refund") {
		t.Errorf("the agent naming its approver under the policy: %+v", saw.Named)
	}
	if saw.Outcome.Action != "accept" || saw.Outcome.DecidedBy != "policy:issue_refund@1" || saw.Outcome.Receipt == "" || saw.Outcome.ApprovedCall.Name != "issue_refund" {
		t.Errorf("the small refund's outcome: %+v", saw.Outcome)
	}
	accept := `{"resumeValue":{"action":"accept","decidedAt":"2026-12-07T09:00:00Z"}}`
	path := "/runs/" + saw.Large.RunID + "/interrupts/" + saw.Large.NodeID
	if a := do(t, "POST", path, jwt(t, devjwt.Token{Subject: "bob", Tenant: tenant, Scopes: []string{"approvals:respond"}}), accept); a.Status != 403 {
		t.Errorf("bob decides the policy's approval: %d %s", a.Status, a.Body)
	}
	if a := do(t, "POST", path, jwt(t, devjwt.Token{Subject: "carol", Tenant: tenant, Scopes: []string{"approvals:respond"}}), accept); a.Status != 200 {
		t.Errorf("carol decides it: %d %s", a.Status, a.Body)
	}
	args, err := json.Marshal(saw.Outcome.ApprovedCall.Arguments)
	if err != nil {
		t.Fatal(err)
	}
	redeem := fmt.Sprintf(`{"receipt":%q,"toolCall":{"name":"issue_refund","arguments":%s}}`, saw.Outcome.Receipt, args)
	executor := jwt(t, devjwt.Token{Subject: "refunds", Tenant: tenant, Scopes: []string{"receipts:redeem"}})
	if a := do(t, "POST", "/receipts/redeem", executor, redeem); a.Status != 200 {
		t.Errorf("the standing approval's receipt: %d %s", a.Status, a.Body)
	}
}
