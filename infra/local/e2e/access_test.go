package e2e

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/internal/botframework"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/slackclick"
	"github.com/interrupthost/interrupthost/pkg/apigw"
	apiroutes "github.com/interrupthost/interrupthost/pkg/apigw/routes"
	"github.com/interrupthost/interrupthost/pkg/mcp"
)

// restScopes are every scope a REST route takes.
func restScopes() []string {
	var all []string
	for _, o := range apiroutes.Operations() {
		for _, s := range o.Scopes {
			if !slices.Contains(all, s) {
				all = append(all, s)
			}
		}
	}
	return all
}

// credential is one kind of credential the walk presents: how it goes on a request.
type credential struct {
	name  string
	apply func(o apigw.Operation, r *walkRequest)
}

// walkRequest is one request of the walk: the path's values and what the credential adds.
type walkRequest struct {
	token         string // {token}: a signed link, or what the credential puts there
	bearer, body  string
	cookie, ctype string
	headers       map[string]string
}

// accessWorld is one tenant with one of everything a credential proves something of.
type accessWorld struct {
	tenant, run, node, interruptID string
	link, receipt, endpoint        string
	webhookSecret, slackSecret     string
	// teamsApp is the tenant's Teams bot's app id.
	teamsApp            string
	slackApp, slackTeam string
	alice, olga         string // session cookies
}

// TestEveryCredentialOnEveryOperation walks the table of who may do what (apiroutes.Operations:
// each route's Scopes and Proof; docs/operations.md prints it) over the stack, in both
// directions: every kind of credential the host accepts on every route. One the route does not
// name is refused, 401 or 403 (a page a browser opens may start a new sign-in instead), and all
// the refusals together write nothing of the tenant's; each one the route names reaches it
// (neither 401, 403 nor a sign-in). Routes that take no credential (the public documents, the
// sign-in's own) are walked with none. Then each MCP tool (mcp.Access) with a JWT without its
// scope (refused), with it, and with the agents' sign-in (both reach it).
func TestEveryCredentialOnEveryOperation(t *testing.T) {
	w := newAccessWorld(t)
	// Every JWT of the walk is olga's, an operator, with every group and role alice's approvals
	// could bind: a route that took a JWT it should not would let her in, not refuse her for
	// want of a role.
	jwtWith := func(client string, scopes ...string) string {
		return jwt(t, devjwt.Token{Subject: "olga", Tenant: w.tenant, Scopes: scopes, ClientID: client, Roles: []string{"operator"}})
	}
	others := func(o apigw.Operation) []string {
		own := o.Scopes
		if o.Proof == apigw.ProofBearer {
			own = []string{"interrupts:write", "runs:read"}
		}
		return slices.DeleteFunc(restScopes(), func(s string) bool { return slices.Contains(own, s) })
	}
	// The agents' token names every scope, as a misconfigured client's might: it must still
	// open /mcp alone, as its person.
	agents := jwtWith(devjwt.MCPClientID, append(restScopes(), "agents:ask")...)
	// A client known by its metadata URL is the agents' sign-in where the deployment allows
	// the URL (the local stack: any loopback one), and a foreign token where it does not.
	byURL := jwtWith("http://127.0.0.1:8765/client.json", append(restScopes(), "agents:ask")...)
	byOtherURL := jwtWith("https://evil.example/client.json", append(restScopes(), "agents:ask")...)
	creds := []credential{
		{"none", func(apigw.Operation, *walkRequest) {}},
		{"a JWT with the route's scopes", func(o apigw.Operation, r *walkRequest) {
			switch {
			case o.Proof == apigw.ProofBearer:
				r.bearer = jwtWith(devjwt.EngineClientID, "interrupts:write", "runs:read")
			case len(o.Scopes) > 0:
				r.bearer = jwtWith(devjwt.EngineClientID, o.Scopes...)
			}
		}},
		{"a JWT with every other scope", func(o apigw.Operation, r *walkRequest) {
			r.bearer = jwtWith(devjwt.EngineClientID, others(o)...)
		}},
		{"the agents' sign-in", func(_ apigw.Operation, r *walkRequest) { r.bearer = agents }},
		{"an allowed metadata URL's sign-in", func(_ apigw.Operation, r *walkRequest) { r.bearer = byURL }},
		{"a metadata URL's sign-in not allowed", func(_ apigw.Operation, r *walkRequest) { r.bearer = byOtherURL }},
		{"a page session", func(_ apigw.Operation, r *walkRequest) { r.cookie = w.alice }},
		{"a console session", func(_ apigw.Operation, r *walkRequest) { r.cookie = w.olga }},
		{"a signed link", func(o apigw.Operation, r *walkRequest) {
			if o.Proof == apigw.ProofLink {
				r.token = w.link
			} else {
				r.bearer = w.link
			}
		}},
		{"a Slack click", func(o apigw.Operation, r *walkRequest) {
			p, err := slackclick.Click{AppID: w.slackApp, TeamID: w.slackTeam, UserID: "U0ALICE", ActionID: "interrupt.accept", Value: "not-a-button",
				ResponseURL: "http://127.0.0.1:9/respond", TriggerID: "trig"}.Payload()
			if err != nil {
				t.Fatal(err)
			}
			r.body, r.ctype = string(slackclick.Body(p)), "application/x-www-form-urlencoded"
			r.headers = slackclick.Sign(w.slackSecret, time.Now(), []byte(r.body))
		}},
		{"a Teams click", func(o apigw.Operation, r *walkRequest) {
			r.bearer = botFrameworkToken(t, w.teamsApp, botframework.ServiceURL(gatewayURL()))
			r.body, r.ctype = teamsInvoke("not-a-card", "00000000-0000-4000-8000-00000000a11c"), "application/json"
		}},
		{"a receipt", func(o apigw.Operation, r *walkRequest) {
			if o.Proof == apigw.ProofReceipt {
				r.bearer = jwtWith(devjwt.EngineClientID, o.Scopes...)
				r.body = `{"receipt":"` + w.receipt + `","toolCall":{"name":"issue_refund","arguments":{"order":"4471"}}}`
			} else {
				r.bearer = w.receipt
			}
		}},
		{"a receipt without a JWT", func(o apigw.Operation, r *walkRequest) {
			r.body = `{"receipt":"` + w.receipt + `","toolCall":{"name":"issue_refund","arguments":{"order":"4471"}}}`
		}},
		{"a provider signature", func(_ apigw.Operation, r *walkRequest) {
			id := "msg_" + newRun("walk")
			r.body = `{"type":"invoice.paid","timestamp":"2026-12-05T09:00:00Z","data":{"correlation":"` + id + `"}}`
			wh, err := standardwebhooks.NewWebhook(w.webhookSecret)
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			sig, err := wh.Sign(id, now, []byte(r.body))
			if err != nil {
				t.Fatal(err)
			}
			r.headers = map[string]string{"webhook-id": id, "webhook-timestamp": strconv.FormatInt(now.Unix(), 10), "webhook-signature": sig}
		}},
	}

	takes := func(o apigw.Operation, cred string) bool {
		switch o.Proof {
		case apigw.ProofJWT:
			return cred == "a JWT with the route's scopes"
		case apigw.ProofLink:
			return cred == "a signed link"
		case apigw.ProofSession:
			return cred == "a page session" || cred == "a console session"
		case apigw.ProofOperator:
			return cred == "a console session"
		case apigw.ProofSlack:
			return cred == "a Slack click"
		case apigw.ProofTeams:
			return cred == "a Teams click"
		case apigw.ProofProvider:
			return cred == "a provider signature"
		case apigw.ProofReceipt:
			return cred == "a receipt" || cred == "a JWT with the route's scopes"
		case apigw.ProofBearer:
			return cred == "a JWT with the route's scopes" || cred == "the agents' sign-in" || cred == "an allowed metadata URL's sign-in"
		}
		return false
	}
	send := func(o apigw.Operation, c credential) answer {
		t.Helper()
		r := walkRequest{token: "not-a-link"}
		c.apply(o, &r)
		method, path, _ := strings.Cut(o.Route, " ")
		path = strings.NewReplacer("{runId}", w.run, "{nodeId}", w.node, "{interruptId}", w.interruptID, "{token}", url.PathEscape(r.token),
			"{id}", "sub_nope", "{kind}", "principal", "{ref}", "alice", "{endpointId}", w.endpoint).Replace(path)
		headers := map[string]string{}
		for k, v := range r.headers {
			headers[k] = v
		}
		if r.cookie != "" {
			headers["Cookie"] = r.cookie
		}
		if r.ctype != "" {
			headers["Content-Type"] = r.ctype
		}
		if method == http.MethodPost && r.body == "" && r.ctype == "" {
			r.body = "{}"
		}
		return call{method: method, path: path, bearer: r.bearer, body: r.body, headers: headers, asIs: true}.must(t)
	}
	signIn := devjwt.IssuerAt(gatewayURL()) + "/authorize?"
	// A page a browser opens refuses by starting a sign-in, or 401 (a form posted without a
	// session); 403 only to a session whose person lacks the operator role, since any other
	// credential it took would be olga's, who holds it.
	refused := func(o apigw.Operation, cred string, a answer) bool {
		if o.Proof == apigw.ProofSession || o.Proof == apigw.ProofOperator {
			return a.Status == http.StatusUnauthorized || (a.Status/100 == 3 && strings.HasPrefix(a.Header.Get("Location"), signIn)) ||
				(a.Status == http.StatusForbidden && cred == "a page session")
		}
		return a.Status == http.StatusUnauthorized || a.Status == http.StatusForbidden
	}

	before := w.items(t)
	walked := 0
	for _, o := range apiroutes.Operations() {
		if o.Proof == apigw.ProofPublic || o.Proof == apigw.ProofSignIn {
			continue
		}
		for _, c := range creds {
			if takes(o, c.name) {
				continue
			}
			if a := send(o, c); !refused(o, c.name, a) {
				t.Errorf("%s with %s: %d %s %.300s, want it refused", o.Route, c.name, a.Status, a.Header.Get("Location"), a.Body)
			}
			walked++
		}
	}
	if after := w.items(t); !slices.Equal(before, after) {
		t.Errorf("the refusals wrote: %d items of the tenant's, then %d:\n%s", len(before), len(after), diffItems(before, after))
	}
	// The operations that undo what the others need (an app, a run, a session) go last.
	ops := apiroutes.Operations()
	slices.SortStableFunc(ops, func(a, b apigw.Operation) int {
		undoes := func(o apigw.Operation) bool {
			return strings.HasPrefix(o.Route, "DELETE ") || strings.HasSuffix(o.Route, "/cancel") || strings.HasSuffix(o.Route, "/signout")
		}
		return cmp.Compare(boolInt(undoes(a)), boolInt(undoes(b)))
	})
	for _, o := range ops {
		for _, c := range creds {
			open := o.Proof == apigw.ProofPublic || o.Proof == apigw.ProofSignIn
			if !(takes(o, c.name) || (open && c.name == "none")) {
				continue
			}
			if a := send(o, c); refused(o, c.name, a) || a.Status/100 == 5 {
				t.Errorf("%s with %s: %d %s %.300s, want it to reach the operation", o.Route, c.name, a.Status, a.Header.Get("Location"), a.Body)
			}
			walked++
		}
	}
	// The allowed calls write (a provider's event, a cancel): the scan that saw no write of the
	// refusals must see theirs, or it could not have told.
	if after := w.items(t); slices.Equal(before, after) {
		t.Errorf("the allowed calls wrote nothing the scan sees: it cannot tell a refusal that wrote")
	}
	// The MCP endpoint's tools, each through the official SDK's client: a JWT without the tool's
	// scope (every other) is a forbidden tool error; one with it, and the agents' sign-in, reach
	// the tool (its answer, or a refusal of the call's arguments).
	withTool := map[string]map[string]any{
		"request_approval": {"title": "Walk", "approvers": []string{"bob"}},
		"ask_question":     {"questions": []map[string]any{{"id": "q", "question": "Which?"}}},
		"get_outcome":      {"runId": w.run, "interruptId": w.interruptID},
		"list_pending":     {},
		"end_run":          {"runId": "no-such-run"},
	}
	for _, a := range mcp.Access {
		args, ok := withTool[a.Tool]
		if !ok {
			t.Fatalf("the walk has no call of tool %s", a.Tool)
		}
		without := slices.DeleteFunc(restScopes(), func(s string) bool { return s == a.Scope })
		for name, c := range map[string]struct {
			token   string
			refused bool
		}{
			"a JWT without its scope": {jwtWith(devjwt.EngineClientID, without...), true},
			"a JWT with its scope":    {jwtWith(devjwt.EngineClientID, a.Scope), false},
			"the agents' sign-in":     {agents, false},
		} {
			var out map[string]any
			msg := callTool(t, mcpSession(t, c.token, ""), a.Tool, args, &out)
			if forbidden := strings.HasPrefix(msg, "forbidden: this tool needs scope"); forbidden != c.refused {
				t.Errorf("MCP tool %s with %s: %q %v", a.Tool, name, msg, out)
			}
			// The agents' token names every scope; it holds agents:ask alone, so root's
			// interrupt is not its person's to read.
			if a.Tool == "get_outcome" && c.token == agents && !strings.HasPrefix(msg, "not_found") {
				t.Errorf("get_outcome of another's interrupt with the agents' sign-in: %q %v", msg, out)
			}
			walked++
		}
	}
	t.Logf("%d operations and %d tools, %d credentials, %d requests", len(apiroutes.Operations()), len(mcp.Access), len(creds), walked)
}

// newAccessWorld makes a tenant of its own with an approval for alice, a signed link of hers,
// an accepted call's receipt, a webhook endpoint, a Slack app, and the page sessions of alice
// (no role) and olga (the operator role).
func newAccessWorld(t *testing.T) *accessWorld {
	t.Helper()
	ctx := context.Background()
	w := &accessWorld{tenant: newRun("access"), run: newRun("walk"), node: "approve"}
	admin := newClient(t, devjwt.Token{Subject: "root", Tenant: w.tenant, Scopes: append(restScopes(), "approvals:respond")})
	in, err := admin.Request(ctx, w.run, w.node, json.RawMessage(approvalWithApprovers), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.interruptID = in.InterruptID
	mailer := newClient(t, devjwt.Token{Subject: "mailer", Tenant: w.tenant, Scopes: []string{"tokens:delegate"}})
	link, err := mailer.Mint(ctx, w.run, w.node, client.TokenRequest{Intent: "resolve", Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	w.link = link.Token

	paid := newRun("paid")
	call := &client.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{"order":"4471"}`)}
	asked, err := admin.RequestWith(ctx, paid, client.InterruptRequest{NodeID: "refund", ToolCall: call,
		Payload: json.RawMessage(`{"kind":"approval","key":"refund","data":{"artifactId":"4471","artifactType":"refund","title":"Refund 4471","actions":["accept","reject"],"approversList":["alice"]}}`)})
	if err != nil {
		t.Fatal(err)
	}
	alice := newClient(t, devjwt.Token{Subject: "alice", Tenant: w.tenant, Scopes: []string{"approvals:respond"}})
	if _, err := alice.Resolve(ctx, paid, "refund", map[string]any{"action": "accept", "decidedAt": "2026-12-05T09:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	out, err := admin.OutcomeOf(ctx, paid, asked.InterruptID)
	if err != nil || out.Receipt == "" {
		t.Fatalf("the accepted call's receipt: %+v %v", out, err)
	}
	w.receipt = out.Receipt

	w.webhookSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("walk-0123456789abcdef0123456789"))
	ep, err := admin.CreateEndpoint(ctx, "standard-webhooks", []string{w.webhookSecret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.endpoint = ep.ID
	w.slackApp, w.slackTeam = slackIDs()
	w.slackSecret = "8f742231b10e8888abcd99e5a6b7c885"
	if _, err := admin.PutSlackApp(ctx, client.SlackAppRequest{AppID: w.slackApp, TeamID: w.slackTeam, SigningSecret: w.slackSecret}); err != nil {
		t.Fatal(err)
	}
	w.teamsApp = teamsAppID()
	if _, err := admin.PutTeamsBot(ctx, client.TeamsBotRequest{AppID: w.teamsApp, AppPassword: "a-client-secret-of-forty-characters-long", TenantID: teamsEntraTenant}); err != nil {
		t.Fatal(err)
	}
	w.alice = consoleSignIn(t, "alice", w.tenant)
	w.olga = consoleSignIn(t, "olga", w.tenant)
	return w
}

// items are the tenant's items in the table, each rendered whole, sorted: the runs' logs, the
// sessions, contacts, subscriptions, its Slack pair's listing, its endpoint's record and the
// events it took, its mail counts. The read models (waiting,
// runs, inboxes), which read-models writes from the stream whenever it catches up, are left out: a
// commit they would show is in the logs.
func (w *accessWorld) items(t *testing.T) []string {
	t.Helper()
	db := localaws.DynamoDB()
	in := &dynamodb.ScanInput{
		TableName: new(os.Getenv("TABLE_NAME")), ConsistentRead: new(true),
		FilterExpression: new("begins_with(pk, :t) OR sk = :pair OR pk = :endpoint OR pk = :mail"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":t": &ddbtypes.AttributeValueMemberS{Value: w.tenant + "#"}, ":pair": &ddbtypes.AttributeValueMemberS{Value: "tenant#" + w.tenant},
			":endpoint": &ddbtypes.AttributeValueMemberS{Value: "whep#" + w.endpoint}, ":mail": &ddbtypes.AttributeValueMemberS{Value: "mailhour#" + w.tenant},
		},
	}
	var out []string
	for {
		page, err := db.Scan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			pk := item["pk"].(*ddbtypes.AttributeValueMemberS).Value
			if strings.Contains(pk, "#waiting#") || strings.Contains(pk, "#runs#") || strings.Contains(pk, "#inbox#") {
				continue
			}
			b, err := json.Marshal(item)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		if page.LastEvaluatedKey == nil {
			slices.Sort(out)
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// diffItems names the items only one of before and after holds.
func diffItems(before, after []string) string {
	var b strings.Builder
	for _, x := range before {
		if !slices.Contains(after, x) {
			fmt.Fprintf(&b, "- %.300s\n", x)
		}
	}
	for _, x := range after {
		if !slices.Contains(before, x) {
			fmt.Fprintf(&b, "+ %.300s\n", x)
		}
	}
	return b.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
