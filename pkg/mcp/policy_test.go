package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/mcp"
	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// servePolicies starts the endpoint over an in-memory host whose tenant's tool policies book
// reads.
func servePolicies(t *testing.T) (*host.Host, *inmem.Store, *policy.Book, string) {
	t.Helper()
	h, l := hosttest.MemHost(t)
	book := &policy.Book{Store: l, Checker: h}
	s := mcp.New(hosttest.Tokens(h), mcp.Options{Version: "test", Poll: 5 * time.Millisecond, Policies: book})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := interrupt.Principal{Subject: r.Header.Get("X-Test-Sub"), Tenant: "acme", Scopes: strings.Fields(r.Header.Get("X-Test-Scopes")), Via: interrupt.ViaJWT}
		s.ServeMCP(w, r, p, base)
	}))
	t.Cleanup(srv.Close)
	return h, l, book, srv.URL
}

// TestAPolicySaysWhoApproves: under a tenant's policy for issue_refund the agent says what the
// call is and nothing of who allows it: the approval is alice's (bob may not decide it), with
// the policy's deadline, actions and receipt life, and names the version it was asked under; an
// agent that names any who-decides member is refused, naming the policy, and nothing is
// written. A tool without a policy keeps the agent's naming until the tenant sets a default,
// which then applies.
func TestAPolicySaysWhoApproves(t *testing.T) {
	t.Parallel()
	h, l, book, url := servePolicies(t)
	ctx := context.Background()
	ops := interrupt.Principal{Subject: "ops", Tenant: "acme"}
	if _, _, err := book.Put(ctx, ops, "issue_refund", policy.Rule{ApproversList: []string{"alice"}, TimeoutMs: 3_600_000, ReceiptTTLMs: 60_000}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, url, engine)
	refund := map[string]any{"name": "issue_refund", "arguments": map[string]any{"order": "4471", "amountCents": 124000, "currency": "EUR"}}
	var asked mcp.Requested
	if msg := call(t, cs, "request_approval", map[string]any{"title": "Refund order 4471", "toolCall": refund}, &asked); msg != "" {
		t.Fatal(msg)
	}
	in := requested(t, l, asked)
	if got := in.ToolCall.Policy; got == nil || *got != (interrupt.PolicyRef{Tool: "issue_refund", Version: 1}) {
		t.Errorf("the request names policy %+v, want issue_refund v1", got)
	}
	if !in.Deadline.Equal(in.RequestedAt.Add(time.Hour)) || in.ToolCall.ReceiptTTLMs != 60_000 || len(in.Payload.Data.ApproversList) != 1 {
		t.Errorf("the request is not the policy's: deadline %v, receipt %d, approvers %v", in.Deadline, in.ToolCall.ReceiptTTLMs, in.Payload.Data.ApproversList)
	}
	accept := json.RawMessage(`{"action":"accept","decidedAt":"2026-12-07T09:00:00Z"}`)
	if _, err := h.Resolve(ctx, hosttest.Who("bob"), asked.RunID, asked.NodeID, accept, nil); interrupt.ErrorCode(err) != interrupt.CodeNotEligible {
		t.Errorf("bob decides alice's: %v", err)
	}
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), asked.RunID, asked.NodeID, accept, nil); err != nil {
		t.Fatal(err)
	}
	var out mcp.Outcome
	if msg := call(t, cs, "get_outcome", map[string]any{"runId": asked.RunID, "interruptId": asked.InterruptID}, &out); msg != "" || out.Receipt == "" || out.DecidedBy != "alice" {
		t.Errorf("the outcome %+v %s", out, msg)
	}

	for _, named := range []map[string]any{
		{"approvers": []string{"bob"}}, {"approverGroups": []string{"friends"}}, {"requiredApprovals": 1}, {"timeoutMs": 1000}, {"actions": []string{"accept"}},
		{"toolCall": map[string]any{"name": "issue_refund", "arguments": map[string]any{}, "receiptTtlMs": 86_400_000}},
	} {
		args := map[string]any{"title": "Refund order 4472", "toolCall": refund}
		for k, v := range named {
			args[k] = v
		}
		before := l.Writes()
		var refused mcp.Requested
		if msg := call(t, cs, "request_approval", args, &refused); !strings.Contains(msg, "Policy issue_refund v1 says who decides calls of issue_refund") {
			t.Errorf("an agent naming %v under the policy: %q", named, msg)
		}
		if l.Writes() != before {
			t.Errorf("a request naming %v under the policy wrote", named)
		}
	}

	mail := map[string]any{"name": "send_mail", "arguments": map[string]any{"to": "customer@example.com"}}
	var own mcp.Requested
	if msg := call(t, cs, "request_approval", map[string]any{"title": "Mail the customer", "approvers": []string{"bob"}, "toolCall": mail}, &own); msg != "" {
		t.Fatalf("a tool no policy names, with no default: %s", msg)
	}
	if in := requested(t, l, own); in.ToolCall.Policy != nil || in.Payload.Data.ApproversList[0] != "bob" {
		t.Errorf("a call no policy names is asked under %+v, of %v", in.ToolCall.Policy, in.Payload.Data.ApproversList)
	}
	if _, _, err := book.Put(ctx, ops, policy.Default, policy.Rule{ApproversList: []string{"carol"}}); err != nil {
		t.Fatal(err)
	}
	var byDefault mcp.Requested
	if msg := call(t, cs, "request_approval", map[string]any{"title": "Mail the customer again", "toolCall": mail}, &byDefault); msg != "" {
		t.Fatalf("under the default: %s", msg)
	}
	if in := requested(t, l, byDefault); in.ToolCall.Policy == nil || in.ToolCall.Policy.Tool != policy.Default || in.Payload.Data.ApproversList[0] != "carol" {
		t.Errorf("under the default, asked under %+v of %v", in.ToolCall.Policy, in.Payload.Data.ApproversList)
	}
	if msg := call(t, cs, "request_approval", map[string]any{"title": "x", "approvers": []string{"bob"}, "toolCall": mail}, &byDefault); !strings.Contains(msg, "The default policy v1 says who decides") {
		t.Errorf("naming approvers under the default: %q", msg)
	}
}

// TestACallerNamesNoPolicy: the policy an approval was asked under is the host's to record; a
// request that says one itself is refused, writing nothing.
func TestACallerNamesNoPolicy(t *testing.T) {
	t.Parallel()
	h, l := hosttest.MemHost(t)
	forged := &interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{}`), Policy: &interrupt.PolicyRef{Tool: "issue_refund", Version: 9}}
	_, _, err := h.RequestInterrupt(context.Background(), hosttest.Who("engine"), "r1", host.Request{NodeID: "n1", Payload: hosttest.Example(t, "approval"), ToolCall: forged})
	if interrupt.ErrorCode(err) != interrupt.CodeValidation || !strings.Contains(err.Error(), "toolCall") || l.Writes() != 0 {
		t.Errorf("a forged policy: %v, %d writes", err, l.Writes())
	}
}

// requested is the interrupt r asked, as its run's log holds it.
func requested(t *testing.T, l *inmem.Store, r mcp.Requested) *runlog.Interrupt {
	t.Helper()
	_, commits, err := l.Tail(context.Background(), runlog.Key{Tenant: "acme", RunID: r.RunID})
	if err != nil {
		t.Fatal(err)
	}
	st, err := runlog.Fold(commits)
	if err != nil {
		t.Fatal(err)
	}
	in := st.ByID(r.InterruptID)
	if in == nil || in.ToolCall == nil {
		t.Fatalf("no interrupt %s with a call in run %s", r.InterruptID, r.RunID)
	}
	return in
}
