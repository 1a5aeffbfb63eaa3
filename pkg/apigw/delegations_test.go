package apigw_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

func (s *stack) delegations(t *testing.T, who caller, route, principal, body string) response {
	t.Helper()
	params := map[string]string{}
	if principal != "" {
		params["principal"] = principal
	}
	return invoke(t, s.fn("delegations"), call{who: &who, route: route, params: params, body: body})
}

// TestDelegationRoutes: alice sets, reads and ends her own delegation; an administrator sets
// and lists anyone's; bob may not touch alice's; the engine's, the agents' and the policies'
// scopes open no route; another tenant's alice has none; a bad body is a 400 problem that keeps
// nothing; and through resolve by run, bob's vote in alice's place records onBehalfOf.
func TestDelegationRoutes(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	alice := caller{"alice", "acme", []string{apigw.ScopeApprovalsRespond}}
	bob := caller{"bob", "acme", []string{apigw.ScopeApprovalsRespond, apigw.ScopeRunsRead}}
	admin := caller{"ops", "acme", []string{apigw.ScopeContactsManage}}
	until := time.Now().UTC().Add(48 * time.Hour).Format(time.RFC3339)
	body := `{"delegate":"bob","until":"` + until + `","note":"On leave"}`
	if r := s.delegations(t, alice, "PUT /delegations/{principal}", "alice", `{"delegate":"alice","until":"`+until+`"}`); r.Status != 400 || r.problem(t).Code != interrupt.CodeValidation {
		t.Errorf("to herself: %d %s", r.Status, r.Body)
	}
	if r := s.delegations(t, alice, "GET /delegations/{principal}", "alice", ""); r.Status != 404 {
		t.Errorf("a refused put kept something: %d %s", r.Status, r.Body)
	}
	r := s.delegations(t, alice, "PUT /delegations/{principal}", "alice", body)
	var d delegation.Delegation
	if err := json.Unmarshal(r.Body, &d); r.Status != 200 || err != nil || d.Delegate != "bob" || d.SetBy != "alice" || d.Version != 1 {
		t.Fatalf("alice's own: %d %s", r.Status, r.Body)
	}
	if r := s.delegations(t, bob, "PUT /delegations/{principal}", "alice", `{"delegate":"bob","until":"`+until+`"}`); r.Status != 403 {
		t.Errorf("bob sets alice's: %d %s", r.Status, r.Body)
	}
	if r := s.delegations(t, caller{"alice", "globex", alice.scopes}, "GET /delegations/{principal}", "alice", ""); r.Status != 404 {
		t.Errorf("another tenant's alice: %d %s", r.Status, r.Body)
	}
	if r := s.delegations(t, admin, "PUT /delegations/{principal}", "carol", `{"delegate":"dave","until":"`+until+`"}`); r.Status != 200 {
		t.Errorf("an administrator sets carol's: %d %s", r.Status, r.Body)
	}
	var list struct{ Delegations []delegation.Delegation }
	if r := s.delegations(t, admin, "GET /delegations", "", ""); r.Status != 200 || json.Unmarshal(r.Body, &list) != nil || len(list.Delegations) != 2 {
		t.Errorf("the list: %d %s", r.Status, r.Body)
	}
	if r := s.delegations(t, alice, "GET /delegations", "", ""); r.Status != 403 {
		t.Errorf("alice lists the tenant's: %d %s", r.Status, r.Body)
	}
	for _, who := range []caller{engine, {"agent", "acme", []string{interrupt.ScopeAgentsAsk}}, {"ops", "acme", []string{apigw.ScopePoliciesManage, apigw.ScopeRunsRead}}} {
		for _, route := range []string{"PUT /delegations/{principal}", "GET /delegations/{principal}", "DELETE /delegations/{principal}", "GET /delegations"} {
			if r := s.delegations(t, who, route, who.sub, body); r.Status != 403 {
				t.Errorf("%v on %s: %d %s", who.scopes, route, r.Status, r.Body)
			}
		}
	}

	// Bob decides in alice's place, through the API.
	if r := s.request(t, engine, "run-1", "gate", `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"Pay","actions":["accept","reject"],"approversList":["alice","carol"],"requiredApprovals":2}}`); r.Status != 201 {
		t.Fatalf("request: %d %s", r.Status, r.Body)
	}
	if r := s.resolve(t, bob, "run-1", "gate", `{"action":"accept","decidedAt":"2026-12-07T09:00:00Z"}`); r.Status != 202 {
		t.Fatalf("bob for alice: %d %s", r.Status, r.Body)
	}
	if r := s.resolve(t, caller{"alice", "acme", alice.scopes}, "run-1", "gate", `{"action":"accept","decidedAt":"2026-12-07T09:00:00Z"}`); r.Status != 409 || r.problem(t).Code != interrupt.CodeAlreadyVoted {
		t.Errorf("alice after bob: %d %s", r.Status, r.Body)
	}
	if r := s.delegations(t, alice, "DELETE /delegations/{principal}", "alice", ""); r.Status != 200 {
		t.Fatalf("end: %d %s", r.Status, r.Body)
	}
	if r := s.request(t, engine, "run-2", "gate", `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"Pay","actions":["accept","reject"],"approversList":["alice"]}}`); r.Status != 201 {
		t.Fatalf("request: %d %s", r.Status, r.Body)
	}
	if r := s.resolve(t, bob, "run-2", "gate", `{"action":"accept","decidedAt":"2026-12-07T09:00:00Z"}`); r.Status != 403 {
		t.Errorf("bob after alice ended it: %d %s", r.Status, r.Body)
	}
}
