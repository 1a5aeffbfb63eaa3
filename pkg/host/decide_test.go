package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/token"
)

func scoped(sub string, scopes ...string) interrupt.Principal {
	return interrupt.Principal{Subject: sub, Tenant: "acme", Scopes: scopes}
}

var (
	engine   = scoped("engine", "interrupts:write", "runs:read")
	tool     = scoped("tool", "interrupts:write")
	mailer   = scoped("mailer", interrupt.ScopeTokensDelegate)
	approver = func(sub string) interrupt.Principal { return scoped(sub, interrupt.ScopeApprovalsRespond) }
)

// TestWhoMayMint: a resolve token for an interrupt a person decides is minted for the caller
// itself or by a delegate, never by or for its requester nor for the agent a low-confidence
// interrupt escalates; machine callbacks and inspect tokens are anyone's on the route. A
// refused mint writes nothing.
func TestWhoMayMint(t *testing.T) {
	listed := approvalWith(`,"approversList":["cfo","alice"]`)
	grouped := approvalWith(`,"approverGroupRefs":["finance"]`)
	quorum := approvalWith(`,"requiredApprovals":2`)
	open := approvalWith(``)
	external := json.RawMessage(`{"kind":"external-event","key":"k","data":{"eventType":"payment_intent.succeeded","correlation":"pi_1"}}`)
	custom := json.RawMessage(`{"kind":"custom","key":"k","data":{"customKind":"x"}}`)
	clarification := json.RawMessage(`{"kind":"clarification","key":"k","data":{"questions":[{"id":"q","question":"which?"}]}}`)
	tests := []struct {
		name    string
		payload json.RawMessage
		by      interrupt.Principal
		req     host.TokenRequest
		// want is the principal the token resolves as, or an error code.
		want string
	}{
		{"the requester, for a listed approver", listed, engine, host.TokenRequest{Intent: "resolve", Principal: "cfo"}, "forbidden"},
		{"the requester, for nobody", open, engine, host.TokenRequest{Intent: "resolve"}, "forbidden"},
		{"another engine, for a listed approver", listed, tool, host.TokenRequest{Intent: "resolve", Principal: "cfo"}, "forbidden"},
		{"an approver, for itself", listed, approver("alice"), host.TokenRequest{Intent: "resolve"}, "alice"},
		{"an approver, naming itself", listed, approver("alice"), host.TokenRequest{Intent: "resolve", Principal: "alice"}, "alice"},
		{"an approver, for another", listed, approver("alice"), host.TokenRequest{Intent: "resolve", Principal: "cfo"}, "forbidden"},
		{"an approver not listed, for itself", listed, approver("bob"), host.TokenRequest{Intent: "resolve"}, "approver_not_eligible"},
		{"a delegate, for a listed approver", listed, mailer, host.TokenRequest{Intent: "resolve", Principal: "cfo"}, "cfo"},
		{"a delegate, for the requester", open, mailer, host.TokenRequest{Intent: "resolve", Principal: "engine"}, "forbidden"},
		{"a delegate, for someone not listed", listed, mailer, host.TokenRequest{Intent: "resolve", Principal: "carol"}, "approver_not_eligible"},
		{"a delegate, for a group's approver", grouped, mailer, host.TokenRequest{Intent: "resolve", Principal: "carol"}, "approver_not_eligible"},
		{"a delegate, for nobody, quorum 1", open, mailer, host.TokenRequest{Intent: "resolve"}, ""},
		{"a delegate, for nobody, quorum 2", quorum, mailer, host.TokenRequest{Intent: "resolve"}, "approver_not_eligible"},
		{"a delegate, for one of a quorum", quorum, mailer, host.TokenRequest{Intent: "resolve", Principal: "bob"}, "bob"},
		{"the requester, an inspect token", listed, engine, host.TokenRequest{Intent: "inspect"}, ""},
		{"the requester, a clarification", clarification, engine, host.TokenRequest{Intent: "resolve", Principal: "alice"}, "forbidden"},
		{"a delegate, a clarification", clarification, mailer, host.TokenRequest{Intent: "resolve", Principal: "alice"}, "alice"},
		{"the requester, an external event's callback", external, engine, host.TokenRequest{Intent: "resolve"}, ""},
		{"the requester, a custom interrupt's callback", custom, engine, host.TokenRequest{Intent: "resolve"}, ""},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, l := hosttest.MemHost(t)
			tokens := hosttest.Tokens(h)
			if _, _, err := h.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: "gate", Payload: tt.payload}); err != nil {
				t.Fatal(err)
			}
			writes := l.Writes()
			tv, err := tokens.MintToken(ctx, tt.by, "r1", "gate", tt.req)
			if l.Writes() != writes {
				t.Errorf("minting wrote")
			}
			if err != nil {
				if got := string(code(err)); got != tt.want {
					t.Fatalf("%v, want %s", err, tt.want)
				}
				return
			}
			c, err := token.Verify(ctx, hosttest.Keys, tv.Token)
			if err != nil {
				t.Fatal(err)
			}
			if c.Sub != tt.want || c.Intent != tt.req.Intent {
				t.Errorf("minted for %q (%s), want %q", c.Sub, c.Intent, tt.want)
			}
		})
	}
}

// TestTheAgentNeverDecidesItsEscalation: a low-confidence interrupt escalates an agent's decision
// to a person; neither the agent that recorded it nor anyone naming the agent gets a token that
// decides it, and the agent cannot resolve it itself.
func TestTheAgentNeverDecidesItsEscalation(t *testing.T) {
	ctx := context.Background()
	h, _ := hosttest.MemHost(t)
	tokens := hosttest.Tokens(h)
	agent := scoped("agent-7", "interrupts:write", interrupt.ScopeApprovalsRespond)
	d, _, err := h.Decide(ctx, agent, "r1", host.AgentDecision{NodeID: "gate", Key: "d1", AgentID: "agent-7", Confidence: 0.2, Decision: json.RawMessage(`{"transfer":1000000}`)})
	if err != nil || !d.Escalated {
		t.Fatalf("%+v %v", d, err)
	}
	for name, mint := range map[string]struct {
		by  interrupt.Principal
		req host.TokenRequest
	}{
		"the agent, for itself":      {agent, host.TokenRequest{Intent: "resolve"}},
		"a delegate, for the agent":  {mailer, host.TokenRequest{Intent: "resolve", Principal: "agent-7"}},
		"the agent, for its manager": {agent, host.TokenRequest{Intent: "resolve", Principal: "manager"}},
	} {
		if _, err := tokens.MintToken(ctx, mint.by, "r1", "gate", mint.req); code(err) != interrupt.CodeForbidden {
			t.Errorf("%s: %v, want forbidden", name, err)
		}
	}
	if _, err := h.Resolve(ctx, agent, "r1", "gate", json.RawMessage(`{"approved":true}`), nil); code(err) != interrupt.CodeForbidden {
		t.Errorf("the agent resolving its own escalation: %v, want forbidden", err)
	}
	if _, err := h.Resolve(ctx, approver("manager"), "r1", "gate", json.RawMessage(`{"approved":true}`), nil); err != nil {
		t.Errorf("a person resolving it: %v", err)
	}
}

// TestNobodyDecidesWhatTheyRequested: on the run surface too, the caller that requested an
// interrupt a person decides cannot resolve it, whatever its scopes; another caller can.
func TestNobodyDecidesWhatTheyRequested(t *testing.T) {
	ctx := context.Background()
	h, l := hosttest.MemHost(t)
	both := scoped("engine", "interrupts:write", interrupt.ScopeApprovalsRespond)
	if _, _, err := h.RequestInterrupt(ctx, both, "r1", host.Request{NodeID: "gate", Payload: approvalWith(``)}); err != nil {
		t.Fatal(err)
	}
	writes := l.Writes()
	if _, err := h.Resolve(ctx, both, "r1", "gate", decision("accept"), nil); code(err) != interrupt.CodeForbidden || l.Writes() != writes {
		t.Errorf("the requester approving its own request: %v (writes %d -> %d)", err, writes, l.Writes())
	}
	if res, err := h.Resolve(ctx, approver("alice"), "r1", "gate", decision("accept"), nil); err != nil || !res.Exited() {
		t.Errorf("alice: %+v %v", res, err)
	}
}

// TestARequestHoldsNoTokenThatDecidesIt: request-interrupt's own token is the requester's, so a
// request asking for a resolve token of an interrupt a person decides is refused, writing
// nothing; a callback token for a machine's interrupt and an inspect token are given.
func TestARequestHoldsNoTokenThatDecidesIt(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		payload json.RawMessage
		intent  string
		want    interrupt.Code
	}{
		{"an approval's resolve token", approvalWith(``), "resolve", interrupt.CodeForbidden},
		{"a clarification's resolve token", json.RawMessage(`{"kind":"clarification","key":"k","data":{"questions":[{"id":"q","question":"?"}]}}`), "resolve", interrupt.CodeForbidden},
		{"an approval's inspect token", approvalWith(``), "inspect", ""},
		{"a custom interrupt's callback", json.RawMessage(`{"kind":"custom","key":"k","data":{"customKind":"x"}}`), "resolve", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, l := hosttest.MemHost(t)
			tokens := hosttest.Tokens(h)
			v, _, err := tokens.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: "gate", Payload: tt.payload, Token: &host.TokenRequest{Intent: tt.intent}})
			if code(err) != tt.want {
				t.Fatalf("%v, want %q", err, tt.want)
			}
			if tt.want != "" {
				var e *interrupt.Error
				if !errors.As(err, &e) || l.Writes() != 0 {
					t.Errorf("refused with %v after %d writes", err, l.Writes())
				}
				return
			}
			if len(v.Tokens) != 1 || v.Tokens[0].Intent != tt.intent {
				t.Errorf("tokens %+v", v.Tokens)
			}
		})
	}
}
