package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// servePolicies starts the endpoint over an in-memory host whose tenant's tool policies book
// reads.
func servePolicies(t *testing.T) (*host.Host, *inmem.Store, *policy.Book, string) {
	t.Helper()
	h, l := hosttest.MemHost(t)
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	book := &policy.Book{Store: l, Checker: h, Schemas: sch, Now: func() time.Time { return hosttest.T0 }}
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

// requested is the interrupt r asked with a call, as its run's log holds it.
func requested(t *testing.T, l *inmem.Store, r mcp.Requested) *runlog.Interrupt {
	t.Helper()
	in := requestedAny(t, l, r)
	if in.ToolCall == nil {
		t.Fatalf("interrupt %s of run %s asks no call", r.InterruptID, r.RunID)
	}
	return in
}

// TestAStandingApproval: a routine call whose arguments hold to one of the policy's standing
// approvals is approved at once by the policy (no person asked): resolved, accept, decided by
// policy:issue_refund@1, with the approved call and a receipt that redeems, the log naming the
// standing approval it matched; a call outside it waits for alice; a standing approval whose
// end has passed approves nothing; a retry of the routine call approves nothing twice.
func TestAStandingApproval(t *testing.T) {
	t.Parallel()
	h, l, book, url := servePolicies(t)
	ctx := context.Background()
	until := hosttest.T0.Add(time.Hour)
	rule := policy.Rule{ApproversList: []string{"alice"}, Standing: []policy.Standing{
		{Arguments: json.RawMessage(`{"type":"object","properties":{"amountCents":{"type":"integer","maximum":5000}},"required":["amountCents"]}`), Description: "refunds up to 50.00"},
		{Arguments: json.RawMessage(`{"type":"object","properties":{"order":{"const":"vip-1"}},"required":["order"]}`), Until: &until, Description: "the VIP's refunds this hour"},
	}}
	if _, _, err := book.Put(ctx, interrupt.Principal{Subject: "ops", Tenant: "acme"}, "issue_refund", rule); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, url, engine)
	ask := func(key string, args map[string]any) mcp.Requested {
		t.Helper()
		var r mcp.Requested
		if msg := call(t, cs, "request_approval", map[string]any{"title": "Refund " + key, "runId": "agent-run-" + key, "key": key,
			"toolCall": map[string]any{"name": "issue_refund", "arguments": args}}, &r); msg != "" {
			t.Fatal(msg)
		}
		return r
	}
	small := ask("small", map[string]any{"order": "4471", "amountCents": 1200, "currency": "EUR"})
	if small.Status != "resolved" || !small.Created {
		t.Fatalf("a routine call: %+v, want resolved at once", small)
	}
	var out mcp.Outcome
	if msg := call(t, cs, "get_outcome", map[string]any{"runId": small.RunID, "interruptId": small.InterruptID}, &out); msg != "" {
		t.Fatal(msg)
	}
	if out.Status != "resolved" || out.Action != "accept" || out.DecidedBy != "policy:issue_refund@1" || out.ApprovedCall == nil || out.Receipt == "" {
		t.Fatalf("a routine call's outcome: %+v", out)
	}
	args, _ := json.Marshal(out.ApprovedCall.Arguments)
	if _, err := hosttest.Tokens(h).RedeemReceipt(ctx, interrupt.Principal{Subject: "executor", Tenant: "acme"}, out.Receipt, interrupt.ToolCall{Name: "issue_refund", Arguments: args}); err != nil {
		t.Errorf("its receipt: %v", err)
	}
	_, commits, err := l.Tail(ctx, runlog.Key{Tenant: "acme", RunID: small.RunID})
	if err != nil {
		t.Fatal(err)
	}
	var vote interrupt.Vote
	for _, c := range commits {
		for _, e := range c.Events {
			if e.Type == interrupt.EventVoted {
				if err := json.Unmarshal(e.Payload, &vote); err != nil {
					t.Fatal(err)
				}
				if c.By != "policy:issue_refund@1" {
					t.Errorf("the vote's commit is by %q", c.By)
				}
			}
		}
	}
	if vote.Standing == nil || vote.Standing.Index != 0 || vote.Standing.Description != "refunds up to 50.00" || vote.Eligibility.Via != interrupt.EligiblePolicy {
		t.Errorf("the log's vote %+v names no standing approval", vote)
	}
	before := l.Writes()
	if again := ask("small", map[string]any{"order": "4471", "amountCents": 1200, "currency": "EUR"}); again.Created || again.Status != "resolved" || l.Writes() != before {
		t.Errorf("the routine call again: %+v, %d writes", again, l.Writes()-before)
	}
	if vip := ask("vip", map[string]any{"order": "vip-1", "amountCents": 90000}); vip.Status != "resolved" {
		t.Errorf("a call within the second standing approval: %+v", vip)
	}
	large := ask("large", map[string]any{"order": "4472", "amountCents": 124000, "currency": "EUR"})
	if large.Status != "pending" {
		t.Fatalf("a call outside every standing approval: %+v, want it to wait", large)
	}
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), large.RunID, large.NodeID, json.RawMessage(`{"action":"accept","decidedAt":"2026-12-07T09:00:00Z"}`), nil); err != nil {
		t.Errorf("alice decides what the policy did not: %v", err)
	}
	if _, err := h.ApproveByPolicy(ctx, hosttest.Who("agent-7"), large.RunID, large.InterruptID, interrupt.PolicyRef{Tool: "issue_refund", Version: 2}, interrupt.StandingMatch{}); interrupt.ErrorCode(err) != interrupt.CodeForbidden {
		t.Errorf("an approval by a version it was not asked under: %v", err)
	}
}

// TestStandingApprovalsChecked: a policy's standing approvals are refused, writing nothing,
// when a schema is one the host will not run, a description is missing, an end has passed, or
// there are too many.
func TestStandingApprovalsChecked(t *testing.T) {
	t.Parallel()
	_, l, book, _ := servePolicies(t)
	past := hosttest.T0.Add(-time.Minute)
	many := make([]policy.Standing, policy.MaxStanding+1)
	for i := range many {
		many[i] = policy.Standing{Arguments: json.RawMessage(`{}`), Description: "any"}
	}
	for _, tt := range []struct {
		name     string
		standing []policy.Standing
		path     string
	}{
		{"a schema that refers outside itself", []policy.Standing{{Arguments: json.RawMessage(`{"$ref":"https://example.com/s.json"}`), Description: "x"}}, "/standing/0/arguments"},
		{"no schema", []policy.Standing{{Description: "x"}}, "/standing/0/arguments"},
		{"no description", []policy.Standing{{Arguments: json.RawMessage(`{}`)}}, "/standing/0/description"},
		{"an end past", []policy.Standing{{Arguments: json.RawMessage(`{}`), Description: "x", Until: &past}}, "/standing/0/until"},
		{"too many", many, "/standing"},
	} {
		before := l.Writes()
		_, _, err := book.Put(context.Background(), interrupt.Principal{Subject: "ops", Tenant: "acme"}, "issue_refund", policy.Rule{ApproversList: []string{"alice"}, Standing: tt.standing})
		var e *interrupt.Error
		if !errors.As(err, &e) || e.Code != interrupt.CodeValidation || len(e.Fields) == 0 || !strings.HasPrefix(e.Fields[0].Path, tt.path) {
			t.Errorf("%s: %v, want a validation error at %s", tt.name, err, tt.path)
		}
		if l.Writes() != before {
			t.Errorf("%s: a refused policy wrote", tt.name)
		}
	}
}

// TestAQuestionWithContext: ask_question's title and description are the question's, as an
// approval's are its payload's: the pending list, the inbox's summary and the page call it by
// its title; an approval that gives them beside its payload's is refused, writing nothing.
func TestAQuestionWithContext(t *testing.T) {
	t.Parallel()
	h, l, _, url := servePolicies(t)
	cs := connect(t, url, engine)
	var asked mcp.Requested
	args := map[string]any{"title": "Purchase order for invoice 4471", "description": "The supplier quotes two orders; finance needs the one to pay against.",
		"questions": []map[string]any{{"id": "po", "question": "Which purchase order?"}}, "audience": []string{"carol"}}
	if msg := call(t, cs, "ask_question", args, &asked); msg != "" {
		t.Fatal(msg)
	}
	in := requestedAny(t, l, asked)
	if in.Title() != "Purchase order for invoice 4471" || in.Display == nil || in.Display.Description == "" {
		t.Errorf("the question is called %q (display %+v)", in.Title(), in.Display)
	}
	hosttest.Reindex(t, h, hosttest.Who("engine"), asked.RunID)
	page, err := h.PendingInterrupts(context.Background(), hosttest.Who("engine"), "", 0)
	if err != nil || len(page.Interrupts) != 1 || page.Interrupts[0].Title != "Purchase order for invoice 4471" {
		t.Errorf("the pending list: %+v %v", page, err)
	}
	_, _, err = h.RequestInterrupt(context.Background(), hosttest.Who("engine"), "r9", host.Request{NodeID: "n", Payload: hosttest.Example(t, "approval"),
		Display: &interrupt.Display{Title: "Another title"}})
	if interrupt.ErrorCode(err) != interrupt.CodeValidation || !strings.Contains(err.Error(), "display") {
		t.Errorf("an approval with a display title: %v", err)
	}
	if msg := call(t, cs, "ask_question", map[string]any{"title": "bad\u0007title", "questions": []map[string]any{{"id": "q", "question": "?"}}}, &asked); !strings.Contains(msg, "/display/title") {
		t.Errorf("a title with a control character: %q", msg)
	}
}

// requestedAny is the interrupt r asked, as its run's log holds it, with or without a call.
func requestedAny(t *testing.T, l *inmem.Store, r mcp.Requested) *runlog.Interrupt {
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
	if in == nil {
		t.Fatalf("no interrupt %s in run %s", r.InterruptID, r.RunID)
	}
	return in
}
