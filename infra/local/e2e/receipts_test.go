package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/pkg/mcp"
)

var formKey = regexp.MustCompile(`name="formKey" value="([a-z0-9]+)"`)

// refund is issue_refund's arguments, in the order an agent writes them (a map's would be
// sorted).
type refund struct {
	Order       string `json:"order"`
	AmountCents int    `json:"amountCents"`
	Currency    string `json:"currency"`
}

// TestAnApprovedCallIsRedeemedOnce: an agent asks over MCP to allow issue_refund; alice reads the
// call in words on her page and accepts it there; get_outcome answers the call as approved and a
// receipt. The executor's redemption with other arguments is refused and spends nothing; with the
// same arguments in another member order it is 200 once, then 409; another tenant's executor
// cannot redeem it; of six redemptions at once of another receipt, through the gateway and its
// functions over DynamoDB, exactly one is 200; a rejected call has no receipt.
func TestAnApprovedCallIsRedeemedOnce(t *testing.T) {
	ctx := context.Background()
	tenant := newRun("receipts")
	cs := mcpSession(t, jwt(t, devjwt.Token{Subject: "agent-7", Tenant: tenant, Scopes: []string{"interrupts:write", "runs:read"}}), "")
	mailer := jwt(t, devjwt.Token{Subject: "mailer", Tenant: tenant, Scopes: []string{"tokens:delegate"}})
	executor := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "refunds-executor", Tenant: tenant, Scopes: []string{"receipts:redeem"}})))
	stranger := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "refunds-executor", Tenant: newRun("other"), Scopes: []string{"receipts:redeem"}})))
	reader := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "ops", Tenant: tenant, Scopes: []string{"runs:read"}})))
	run := newRun("agent")
	ask := func(key string) mcp.Requested {
		t.Helper()
		var r mcp.Requested
		args := map[string]any{"title": "Refund order 4471", "approvers": []string{"alice"}, "runId": run, "key": key,
			"toolCall": map[string]any{"name": "issue_refund", "arguments": refund{"4471", 124000, "EUR"}}}
		if msg := callTool(t, cs, "request_approval", args, &r); msg != "" {
			t.Fatal(msg)
		}
		return r
	}
	outcome := func(r mcp.Requested) mcp.Outcome {
		t.Helper()
		var out mcp.Outcome
		if msg := callTool(t, cs, "get_outcome", map[string]any{"runId": r.RunID, "interruptId": r.InterruptID}, &out); msg != "" {
			t.Fatal(msg)
		}
		return out
	}
	events := func() int {
		page, err := reader.Events(ctx, run, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Events)
	}
	codeOf := func(err error) string {
		var p *client.Problem
		if errors.As(err, &p) {
			return p.Code
		}
		return ""
	}

	asked := ask("refund-4471")
	var tok struct{ Token string }
	do(t, "POST", "/runs/"+run+"/interrupts/"+asked.NodeID+"/tokens", mailer, `{"intent":"resolve","principal":"alice"}`).json(t, &tok)
	page := call{method: "GET", path: "/approve/" + tok.Token}.must(t)
	if !strings.Contains(string(page.Body), "The agent will call <bdi>issue_refund</bdi> with <bdi>order</bdi> <bdi>4471</bdi>, <bdi>amount</bdi> 1,240.00 EUR") {
		t.Fatalf("alice's page does not say the call: %d %s", page.Status, page.Body)
	}
	m := formKey.FindSubmatch(page.Body)
	if m == nil {
		t.Fatalf("alice's page has no form: %s", page.Body)
	}
	req, _ := http.NewRequest("POST", gatewayURL()+"/approve/"+tok.Token, strings.NewReader(url.Values{"formKey": {string(m[1])}, "action": {"accept"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("alice's accept: %d", resp.StatusCode)
	}

	out := outcome(asked)
	if out.Action != "accept" || out.DecidedBy != "alice" || out.ApprovedCall == nil || out.ApprovedCall.Name != "issue_refund" || out.Receipt == "" {
		t.Fatalf("accepted: %+v", out)
	}
	before := events()
	if _, err := executor.Redeem(ctx, out.Receipt, "issue_refund", json.RawMessage(`{"order":"4471","amountCents":999900,"currency":"EUR"}`)); codeOf(err) != "call_differs" {
		t.Errorf("other arguments: %v", err)
	}
	if _, err := stranger.Redeem(ctx, out.Receipt, "issue_refund", json.RawMessage(`{"order":"4471","amountCents":124000,"currency":"EUR"}`)); codeOf(err) != "not_found" {
		t.Errorf("another tenant: %v", err)
	}
	if after := events(); after != before {
		t.Errorf("refused redemptions appended %d events", after-before)
	}
	r, err := executor.Redeem(ctx, out.Receipt, "issue_refund", json.RawMessage(`{"currency":"EUR","amountCents":124000,"order":"4471"}`))
	if err != nil || r.ApprovedBy != "alice" || r.RedeemedBy != "refunds-executor" || r.ToolCall.ArgumentsDigest != out.ApprovedCall.ArgumentsDigest {
		t.Fatalf("the approved call: %+v %v", r, err)
	}
	if _, err := executor.Redeem(ctx, out.Receipt, "issue_refund", json.RawMessage(`{"order":"4471","amountCents":124000,"currency":"EUR"}`)); codeOf(err) != "receipt_spent" {
		t.Errorf("again: %v", err)
	}
	if rest, err := reader.OutcomeOf(ctx, run, asked.InterruptID); err != nil || rest.Redeemed == nil || rest.Redeemed.By != "refunds-executor" || rest.Receipt != out.Receipt {
		t.Errorf("REST outcome: %+v %v", rest, err)
	}

	raced := ask("refund-4472")
	alice := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "alice", Tenant: tenant, Scopes: []string{"approvals:respond"}})))
	if _, err := alice.Resolve(ctx, run, raced.NodeID, client.Decision{Action: "accept", DecidedAt: "2026-12-03T09:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	receipt := outcome(raced).Receipt
	var wg sync.WaitGroup
	codes := make([]string, 6)
	for i := range codes {
		wg.Go(func() {
			_, err := executor.Redeem(ctx, receipt, "issue_refund", json.RawMessage(`{"order":"4471","amountCents":124000,"currency":"EUR"}`))
			codes[i] = "ok"
			if err != nil {
				codes[i] = codeOf(err)
			}
		})
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		switch c {
		case "ok":
			won++
		case "receipt_spent":
		default:
			t.Errorf("a racer: %q", c)
		}
	}
	if won != 1 {
		t.Errorf("%d of six redemptions succeeded: %v", won, codes)
	}

	rejected := ask("refund-4473")
	if _, err := alice.Resolve(ctx, run, rejected.NodeID, client.Decision{Action: "reject", DecidedAt: "2026-12-03T09:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	if out := outcome(rejected); out.Action != "reject" || out.ApprovedCall != nil || out.Receipt != "" {
		t.Errorf("rejected: %+v", out)
	}
}
