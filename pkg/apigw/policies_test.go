package apigw_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/policy"
)

var admin = caller{"ops", "acme", []string{apigw.ScopePoliciesManage}}

func (s *stack) policies(t *testing.T, who caller, route, tool, body string) response {
	t.Helper()
	params := map[string]string{}
	if tool != "" {
		params["toolName"] = tool
	}
	return invoke(t, s.fn("policies"), call{who: &who, route: route, params: params, body: body})
}

// TestPolicyRoutes: a put makes a policy (201, version 1), a second its next version (200,
// version 2), each read back as the version in force, listed with the default; another tenant
// has none; a delete ends it (204), after which it is 404 and a put starts it again as the next
// version of the record (201, version 4); without policies:manage, every route is 403.
func TestPolicyRoutes(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	put := func(want int, tool, body string) policy.Policy {
		t.Helper()
		route := "PUT /policies/tools/{toolName}"
		if tool == "" {
			route = "PUT /policies/default"
		}
		r := s.policies(t, admin, route, tool, body)
		var p policy.Policy
		if err := json.Unmarshal(r.Body, &p); r.Status != want || err != nil {
			t.Fatalf("put %s: %d %s, want %d", tool, r.Status, r.Body, want)
		}
		return p
	}
	if p := put(201, "issue_refund", `{"approversList":["alice"],"timeoutMs":3600000}`); p.Version != 1 || p.SetBy != "ops" || p.Tool != "issue_refund" ||
		len(p.Actions) != 2 || p.SetAt.IsZero() {
		t.Errorf("first version %+v", p)
	}
	if p := put(200, "issue_refund", `{"approversList":["alice","bob"],"requiredApprovals":2}`); p.Version != 2 || p.RequiredApprovals != 2 {
		t.Errorf("second version %+v", p)
	}
	if p := put(201, "", `{"approverGroupRefs":["finance"]}`); p.Tool != policy.Default || p.Version != 1 {
		t.Errorf("the default %+v", p)
	}
	r := s.policies(t, admin, "GET /policies/tools/{toolName}", "issue_refund", "")
	var got policy.Policy
	if err := json.Unmarshal(r.Body, &got); r.Status != 200 || err != nil || got.Version != 2 || len(got.ApproversList) != 2 {
		t.Errorf("read: %d %s", r.Status, r.Body)
	}
	r = s.policies(t, admin, "GET /policies/tools", "", "")
	var list struct{ Policies []policy.Policy }
	if err := json.Unmarshal(r.Body, &list); r.Status != 200 || err != nil || len(list.Policies) != 2 || list.Policies[0].Tool != policy.Default {
		t.Errorf("list: %d %s", r.Status, r.Body)
	}
	if r := s.policies(t, caller{"ops", "globex", admin.scopes}, "GET /policies/tools/{toolName}", "issue_refund", ""); r.Status != 404 {
		t.Errorf("another tenant's: %d %s", r.Status, r.Body)
	}
	if r := s.policies(t, admin, "DELETE /policies/tools/{toolName}", "issue_refund", ""); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	for _, route := range []string{"GET /policies/tools/{toolName}", "DELETE /policies/tools/{toolName}"} {
		if r := s.policies(t, admin, route, "issue_refund", ""); r.Status != 404 || r.problem(t).Code != interrupt.CodeNotFound {
			t.Errorf("%s after delete: %d %s", route, r.Status, r.Body)
		}
	}
	if p := put(201, "issue_refund", `{"approversList":["carol"]}`); p.Version != 4 {
		t.Errorf("after its end, a put is version %d, want 4 (the end was 3)", p.Version)
	}
	for _, who := range []caller{engine, approver, operator, {"ops", "acme", []string{apigw.ScopeSubscriptionsManage, apigw.ScopeContactsManage}}} {
		for _, route := range []string{"PUT /policies/tools/{toolName}", "GET /policies/tools/{toolName}", "DELETE /policies/tools/{toolName}", "GET /policies/tools", "PUT /policies/default", "GET /policies/default", "DELETE /policies/default"} {
			if r := s.policies(t, who, route, "issue_refund", `{"approversList":["mallory"]}`); r.Status != 403 {
				t.Errorf("%s as %s %v: %d, want 403", route, who.sub, who.scopes, r.Status)
			}
		}
	}
}

// TestPoliciesRefused: a rule is checked as an approval is, with the same problems at the
// body's own paths, and a refused put writes nothing.
func TestPoliciesRefused(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	for _, tt := range []struct {
		name, tool, body, path string
	}{
		{"nobody named", "issue_refund", `{"requiredApprovals":1}`, "/approversList"},
		{"a quorum no one can reach", "issue_refund", `{"approversList":["alice"],"requiredApprovals":2}`, "/requiredApprovals"},
		{"an action that is none", "issue_refund", `{"approversList":["alice"],"actions":["approve"]}`, "/actions/0"},
		{"a receipt's life past a day", "issue_refund", `{"approversList":["alice"],"receiptTtlMs":90000000}`, "/receiptTtlMs"},
		{"a member that is none", "issue_refund", `{"approversList":["alice"],"approvers":["bob"]}`, ""},
		{"a tool that is no tool", "issue refund!", `{"approversList":["alice"]}`, "/toolName"},
	} {
		before := s.items(t)
		r := s.policies(t, admin, "PUT /policies/tools/{toolName}", tt.tool, tt.body)
		p := r.problem(t)
		if r.Status != 400 || p.Code != interrupt.CodeValidation {
			t.Errorf("%s: %d %s", tt.name, r.Status, r.Body)
			continue
		}
		if tt.path != "" && (len(p.Errors) == 0 || p.Errors[0].Path != tt.path) {
			t.Errorf("%s: problems %+v, want one at %s", tt.name, p.Errors, tt.path)
		}
		if after := s.items(t); after != before {
			t.Errorf("%s: a refused put wrote", tt.name)
		}
	}
}

// TestAnEngineOptsIntoAPolicy: an engine's request that says "policy": "<toolName>" asks under
// the tenant's policy of that tool: who decides, the quorum and the deadline are the policy's
// (alice's, not bob's), recorded with the call; a payload that names any of them, a call of
// another tool, no call, or a tool without a policy is refused, writing nothing; a routine call
// one of the policy's standing approvals holds is approved at once. Without the opt-in an engine
// names its own approvers as before.
func TestAnEngineOptsIntoAPolicy(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	if r := s.policies(t, admin, "PUT /policies/tools/{toolName}", "issue_refund", `{"approversList":["alice"],"timeoutMs":3600000,"receiptTtlMs":60000}`); r.Status != 201 {
		t.Fatalf("the policy: %d %s", r.Status, r.Body)
	}
	ask := func(run, extra, data string) response {
		t.Helper()
		body := `{"nodeId":"approve","payload":{"kind":"approval","key":"k","data":{"artifactId":"o-1","artifactType":"refund","title":"Refund order 4471"` + data + `}},` +
			`"toolCall":{"name":"issue_refund","arguments":{"order":"4471"}}` + extra + `}`
		return invoke(t, s.fn("request-interrupt"), call{who: &engine, params: map[string]string{"runId": run}, body: body})
	}
	if r := ask("r1", `,"policy":"issue_refund"`, ""); r.Status != 201 {
		t.Fatalf("under the policy: %d %s", r.Status, r.Body)
	}
	if r := s.resolve(t, caller{"bob", "acme", approver.scopes}, "r1", "approve", `{"action":"accept","decidedAt":"2026-12-07T09:00:00Z"}`); r.Status != 403 {
		t.Errorf("bob decides under alice's policy: %d %s", r.Status, r.Body)
	}
	if r := s.resolve(t, approver, "r1", "approve", `{"action":"accept","decidedAt":"2026-12-07T09:00:00Z"}`); r.Status != 200 {
		t.Errorf("alice decides: %d %s", r.Status, r.Body)
	}
	for _, tt := range []struct{ name, extra, data, want string }{
		{"a payload naming approvers", `,"policy":"issue_refund"`, `,"approversList":["bob"]`, "/payload/data/approversList"},
		{"a payload naming the quorum", `,"policy":"issue_refund"`, `,"requiredApprovals":1`, "/payload/data/requiredApprovals"},
		{"a call of another tool", `,"policy":"send_mail"`, "", "/toolCall/name"},
	} {
		before := s.items(t)
		r := ask("r2", tt.extra, tt.data)
		if r.Status != 400 && r.Status != 404 || !strings.Contains(string(r.Body), tt.want) {
			t.Errorf("%s: %d %s, want a refusal naming %s", tt.name, r.Status, r.Body, tt.want)
		}
		if after := s.items(t); after != before {
			t.Errorf("%s: a refused request wrote", tt.name)
		}
	}
	before := s.items(t)
	mail := `{"nodeId":"approve","payload":{"kind":"approval","key":"k","data":{"artifactId":"m-1","artifactType":"mail","title":"Mail","actions":["accept"]}},` +
		`"toolCall":{"name":"send_mail","arguments":{}},"policy":"send_mail"}`
	if r := invoke(t, s.fn("request-interrupt"), call{who: &engine, params: map[string]string{"runId": "r2"}, body: mail}); r.Status != 404 || r.problem(t).Code != interrupt.CodeNotFound {
		t.Errorf("a tool without a policy: %d %s", r.Status, r.Body)
	}
	if after := s.items(t); after != before {
		t.Error("a request under no policy wrote")
	}
	if r := s.policies(t, admin, "PUT /policies/tools/{toolName}", "issue_refund", `{"approversList":["alice"],"standing":[{"arguments":{"properties":{"order":{"const":"4471"}}},"description":"order 4471's refunds"}]}`); r.Status != 200 {
		t.Fatalf("the policy's standing approval: %d %s", r.Status, r.Body)
	}
	if r := ask("r4", `,"policy":"issue_refund"`, ""); r.Status != 201 || !strings.Contains(string(r.Body), `"status":"resolved"`) || !strings.Contains(string(r.Body), `"decidedBy":"policy:issue_refund@2"`) {
		t.Errorf("a routine call under the policy: %d %s, want it approved at once", r.Status, r.Body)
	}
	if r := ask("r3", "", `,"approversList":["bob"],"actions":["accept","reject"]`); r.Status != 201 {
		t.Errorf("without the opt-in, an engine's own approvers: %d %s", r.Status, r.Body)
	}
}
