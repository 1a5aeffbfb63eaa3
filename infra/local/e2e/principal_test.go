package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/internal/devjwt"
)

// TestAPrincipalClaim: a deployment whose provider issues Cognito's access tokens (an opaque
// sub, the readable username, the app client in client_id and no aud) reads the principal from
// username (PrincipalClaim): the engine's own app client is admitted through the authorizer's
// list, an approversList of names admits the person of that name whatever the sub, a token
// without the claim is refused naming it, and the log records the name as who decided.
func TestAPrincipalClaim(t *testing.T) {
	base := serveGateway(t, map[string]string{"PrincipalClaim": "username"})
	cognito := func(sub, username, client string, scopes ...string) string {
		t.Helper()
		return jwt(t, devjwt.Token{Subject: sub, Username: username, ClientID: client, Tenant: "acme", Scopes: scopes})
	}
	engineToken := cognito("5b0e3c1a-8f2d-4c61-9a7e-engine", "billing-agent", devjwt.EngineClientID, "interrupts:write", "runs:read")
	run := newRun("principal")
	payload := approval(map[string]any{"approversList": []string{"alice"}})
	if a := (call{base: base, method: "POST", path: "/runs/" + run + "/interrupts", bearer: engineToken, body: `{"nodeId":"gate","payload":` + payload + `}`}).must(t); a.Status != 201 {
		t.Fatalf("the engine's request: %d %s", a.Status, a.Body)
	}
	tests := []struct {
		name   string
		bearer string
		status int
		has    string
	}{
		{"bob, whose sub is alice's name", cognito("alice", "bob", devjwt.Audience, "approvals:respond"), 403, `"code":"approver_not_eligible"`},
		{"a token without the username claim", jwt(t, devjwt.Token{Subject: "alice", ClientID: devjwt.Audience, Tenant: "acme", Scopes: []string{"approvals:respond"}}), 401, "carries no username claim"},
		{"alice by her name", cognito("7d1f0b2e-33c4-4e0a-b6a1-alice", "alice", devjwt.Audience, "approvals:respond"), 200, `"status":"resolved"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := call{base: base, method: "POST", path: "/runs/" + run + "/interrupts/gate", bearer: tt.bearer, body: decision("accept")}.must(t)
			if a.Status != tt.status || !strings.Contains(string(a.Body), tt.has) {
				t.Errorf("%d %s, want %d with %s", a.Status, a.Body, tt.status, tt.has)
			}
		})
	}

	var page struct{ Events []logEvent }
	call{base: base, method: "GET", path: "/runs/" + run + "/events", bearer: engineToken}.must(t).json(t, &page)
	var votes []string
	for _, e := range page.Events {
		if e.Type == "interrupt.voted" {
			var v struct {
				Principal   string
				Eligibility struct{ Via, Ref string }
			}
			if err := json.Unmarshal(e.Payload, &v); err != nil {
				t.Fatal(err)
			}
			votes = append(votes, v.Principal+" as "+v.Eligibility.Via+":"+v.Eligibility.Ref)
		}
	}
	if len(votes) != 1 || votes[0] != "alice as principal:alice" {
		t.Errorf("votes %q, want alice's, by her name", votes)
	}
}
