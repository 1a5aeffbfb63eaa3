package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

func approvalWith(data string) json.RawMessage {
	return json.RawMessage(`{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept","reject","refine","edit-accept","ask"]` + data + `}}`)
}

func decision(action string) json.RawMessage {
	extra := ""
	switch action {
	case "refine":
		extra = `,"refineFeedback":{"scope":"whole","text":"shorter"}`
	case "edit-accept":
		extra = `,"editedArtifactData":{"amount":1}`
	}
	return json.RawMessage(`{"action":"` + action + `","decidedAt":"2026-11-30T09:00:00Z"` + extra + `}`)
}

func code(err error) interrupt.Code { return interrupt.ErrorCode(err) }

// TestApprovalRules: votes, quorum, rejection policies, refine, ask and override, one table; each
// step is a vote and what it must answer (a status, or an error code).
func TestApprovalRules(t *testing.T) {
	type step struct {
		by     interrupt.Principal
		action string
		// want is "pending" or "resolved", or an error code.
		want string
	}
	token := interrupt.Principal{Subject: "boss", Tenant: "acme", Token: "jti-1", Via: interrupt.ViaLink}
	// boss proven each way the host knows: an override is a deliberate act (a JWT's call, a
	// signed-in page's form), never a link a scanner may follow or a click in a chat.
	by := func(via interrupt.Via) interrupt.Principal {
		return interrupt.Principal{Subject: "boss", Tenant: "acme", Via: via}
	}
	tests := []struct {
		name, data string
		steps      []step
		// released is the action of the value the gate released with, if it did.
		released string
	}{
		{"default quorum of one", ``, []step{{hosttest.Who("alice"), "accept", "resolved"}}, "accept"},
		{"quorum of two", `,"requiredApprovals":2`, []step{{hosttest.Who("alice"), "accept", "pending"}, {hosttest.Who("bob"), "edit-accept", "resolved"}}, "edit-accept"},
		{"one vote per principal", `,"requiredApprovals":2`, []step{{hosttest.Who("alice"), "accept", "pending"}, {hosttest.Who("alice"), "accept", "already_voted"}, {hosttest.Who("alice"), "reject", "already_voted"}}, ""},
		{"single veto by default", `,"requiredApprovals":3`, []step{{hosttest.Who("alice"), "accept", "pending"}, {hosttest.Who("bob"), "reject", "resolved"}}, "reject"},
		{"single veto named", `,"requiredApprovals":3,"rejectionPolicy":"single-veto"`, []step{{hosttest.Who("bob"), "reject", "resolved"}}, "reject"},
		{"majority of three", `,"requiredApprovals":3,"rejectionPolicy":"majority"`, []step{{hosttest.Who("a"), "reject", "pending"}, {hosttest.Who("b"), "reject", "resolved"}}, "reject"},
		{"majority of two", `,"requiredApprovals":2,"rejectionPolicy":"majority"`, []step{{hosttest.Who("a"), "reject", "pending"}, {hosttest.Who("b"), "accept", "pending"}, {hosttest.Who("c"), "reject", "resolved"}}, "reject"},
		{"refine releases at once", `,"requiredApprovals":2`, []step{{hosttest.Who("alice"), "refine", "resolved"}}, "refine"},
		{"ask records without exiting", ``, []step{{hosttest.Who("alice"), "ask", "pending"}, {hosttest.Who("alice"), "ask", "pending"}, {hosttest.Who("alice"), "accept", "resolved"}}, "accept"},
		{"override bypasses the quorum", `,"requiredApprovals":3,"overrideBypassesQuorum":true`, []step{{hosttest.Who("boss"), "accept", "resolved"}}, "accept"},
		{"override vetoes under majority", `,"requiredApprovals":3,"rejectionPolicy":"majority","overrideBypassesQuorum":true`, []step{{hosttest.Who("boss"), "reject", "resolved"}}, "reject"},
		{"override counts once without the flag", `,"requiredApprovals":2`, []step{{hosttest.Who("boss"), "accept", "pending"}, {hosttest.Who("bob"), "accept", "resolved"}}, "accept"},
		{"a token bearer never overrides", `,"requiredApprovals":2,"overrideBypassesQuorum":true`, []step{{token, "accept", "pending"}}, ""},
		{"override by a JWT", `,"requiredApprovals":2,"overrideBypassesQuorum":true`, []step{{by(interrupt.ViaJWT), "accept", "resolved"}}, "accept"},
		{"override by a session", `,"requiredApprovals":2,"overrideBypassesQuorum":true`, []step{{by(interrupt.ViaSession), "accept", "resolved"}}, "accept"},
		{"no override by a chat click", `,"requiredApprovals":2,"overrideBypassesQuorum":true,"approversList":["boss","bob"]`, []step{{by(interrupt.ViaChat), "accept", "pending"}, {hosttest.Who("bob"), "accept", "resolved"}}, "accept"},
		{"no override by a link", `,"requiredApprovals":2,"overrideBypassesQuorum":true`, []step{{by(interrupt.ViaLink), "accept", "pending"}}, ""},
		{"no override without a proof the model knows", `,"requiredApprovals":2,"overrideBypassesQuorum":true`, []step{{by(""), "accept", "pending"}}, ""},
		{"a quorum the list can no longer reach", `,"requiredApprovals":2,"rejectionPolicy":"majority","approversList":["alice","bob"]`, []step{{hosttest.Who("alice"), "accept", "pending"}, {hosttest.Who("bob"), "reject", "resolved"}}, "reject"},
		{"a quorum the list can still reach", `,"requiredApprovals":2,"rejectionPolicy":"majority","approversList":["alice","bob","carol"]`, []step{{hosttest.Who("alice"), "accept", "pending"}, {hosttest.Who("bob"), "reject", "pending"}, {hosttest.Who("carol"), "accept", "resolved"}}, "accept"},
		{"out of reach after an approval", `,"requiredApprovals":3,"rejectionPolicy":"majority","approversList":["a","b","c"]`, []step{{hosttest.Who("a"), "accept", "pending"}, {hosttest.Who("b"), "reject", "resolved"}}, "reject"},
		{"an override principal left to vote", `,"requiredApprovals":3,"rejectionPolicy":"majority","overrideBypassesQuorum":true,"approversList":["alice","bob","boss"]`, []step{{hosttest.Who("alice"), "reject", "pending"}, {hosttest.Who("boss"), "accept", "resolved"}}, "accept"},
		{"without a list the gate waits", `,"requiredApprovals":2,"rejectionPolicy":"majority"`, []step{{hosttest.Who("alice"), "accept", "pending"}, {hosttest.Who("bob"), "reject", "pending"}}, ""},
		{"nothing after release", ``, []step{{hosttest.Who("alice"), "reject", "resolved"}, {hosttest.Who("bob"), "accept", "interrupt_already_resolved"}}, "reject"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := hosttest.MemHost(t)
			if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: approvalWith(tt.data)}); err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				res, err := resolveAs(ctx, h, s.by, decision(s.action))
				got := string(res.Status)
				if err != nil {
					got = string(code(err))
				}
				if got != s.want {
					t.Fatalf("step %d (%s by %s): %s %v, want %s", i, s.action, s.by.Voter(), got, err, s.want)
				}
			}
			snap, err := h.Snapshot(ctx, hosttest.Who("engine"), "r1")
			if err != nil {
				t.Fatal(err)
			}
			if released := len(snap.Pending) == 0; released != (tt.released != "") {
				t.Fatalf("released %v, want %q", released, tt.released)
			}
			if tt.released == "" {
				return
			}
			v, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: approvalWith(tt.data)})
			if err != nil || v.Status != interrupt.StatusResolved || !strings.Contains(string(v.ResumeValue), `"action":"`+tt.released+`"`) {
				t.Errorf("released with %s (%v), want action %s", v.ResumeValue, err, tt.released)
			}
		})
	}
}

// TestAnUnreachableQuorumIsRejected: the rejection that leaves the quorum out of the listed
// approvers' reach releases the gate as rejected, and its vote says why.
func TestAnUnreachableQuorumIsRejected(t *testing.T) {
	ctx := context.Background()
	h, _ := hosttest.MemHost(t)
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: approvalWith(`,"requiredApprovals":2,"rejectionPolicy":"majority","approversList":["alice","bob"]`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := resolveAs(ctx, h, hosttest.Who("alice"), decision("accept")); err != nil {
		t.Fatal(err)
	}
	res, err := resolveAs(ctx, h, hosttest.Who("bob"), decision("reject"))
	if err != nil || res.Status != interrupt.StatusResolved {
		t.Fatalf("bob's rejection: %+v %v", res, err)
	}
	page, err := h.Events(ctx, hosttest.Who("engine"), "r1", 2, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	var v interrupt.Vote
	if err := json.Unmarshal(page.Events[0].Payload, &v); err != nil || page.Events[0].Type != interrupt.EventVoted {
		t.Fatalf("%s %s %v", page.Events[0].Type, page.Events[0].Payload, err)
	}
	if v.Reason != interrupt.ReasonQuorumUnreachable || v.Tally != (interrupt.Tally{Approvals: 1, Rejections: 1, Required: 2}) {
		t.Errorf("the releasing vote: %+v, want reason %s", v, interrupt.ReasonQuorumUnreachable)
	}
}

// TestDecidedByIsOpaque: decidedBy is kept as the caller sent it, whatever it says, and who
// decided is the host's own record: the vote's principal is the caller, never decidedBy.
func TestDecidedByIsOpaque(t *testing.T) {
	ctx := context.Background()
	h, l := hosttest.MemHost(t)
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: approvalWith(`,"approversList":["alice","bob"]`)}); err != nil {
		t.Fatal(err)
	}
	sent := `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","decidedBy":"bob"}`
	res, err := resolveAs(ctx, h, hosttest.Who("alice"), json.RawMessage(sent))
	if err != nil || string(res.ResumeValue) != sent {
		t.Fatalf("alice naming bob: %s %v, want the value as sent", res.ResumeValue, err)
	}
	commits, err := l.Read(ctx, runlog.Key{Tenant: "acme", RunID: "r1"}, 1, 0)
	if err != nil || len(commits) != 1 {
		t.Fatal(commits, err)
	}
	var v interrupt.Vote
	if err := json.Unmarshal(commits[0].Events[0].Payload, &v); err != nil {
		t.Fatal(err)
	}
	if v.Principal != "alice" || commits[0].By != "alice" {
		t.Errorf("recorded as decided by %q (commit by %q), want alice", v.Principal, commits[0].By)
	}
}

// TestStreamModes: debug (and no mode) lists every event; updates only the state updates, the
// votes, asks and agent decisions left out, while its next still passes every commit read.
func TestStreamModes(t *testing.T) {
	ctx := context.Background()
	h, _ := hosttest.MemHost(t)
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: approvalWith(`,"requiredApprovals":2`)}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ by, action string }{{"alice", "ask"}, {"alice", "accept"}, {"bob", "accept"}} {
		if _, err := resolveAs(ctx, h, hosttest.Who(step.by), decision(step.action)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := h.Decide(ctx, hosttest.Who("engine"), "r1", host.AgentDecision{NodeID: "classify", Key: "d1", AgentID: "triage", Confidence: 0.2, Decision: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	types := func(mode interrupt.Mode) (string, int64) {
		page, err := h.Events(ctx, hosttest.Who("engine"), "r1", 0, 0, mode)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range page.Events {
			got = append(got, e.Type)
		}
		return strings.Join(got, " "), page.Next
	}
	all := "interrupt.requested approval.requested interrupt.asked interrupt.voted interrupt.voted interrupt.resolved approval.resolved agent.decided node.suspended interrupt.requested"
	updates := "interrupt.requested approval.requested interrupt.resolved approval.resolved node.suspended interrupt.requested"
	for _, tt := range []struct {
		mode interrupt.Mode
		want string
	}{{"", all}, {interrupt.ModeDebug, all}, {interrupt.ModeUpdates, updates}} {
		if got, next := types(tt.mode); got != tt.want || next != 5 {
			t.Errorf("mode %q: %s (next %d), want %s (next 5)", tt.mode, got, next, tt.want)
		}
	}
	if page, err := h.Events(ctx, hosttest.Who("engine"), "r1", 1, 1, interrupt.ModeUpdates); err != nil || len(page.Events) != 0 || page.Next != 2 {
		t.Errorf("a page of updates over the ask alone: %+v %v, want no events and next 2", page, err)
	}
}

// resolveAs resolves node gate of run r1 as p: by run, or by a token-like principal through the
// same rules.
func resolveAs(ctx context.Context, h *host.Host, p interrupt.Principal, value json.RawMessage) (host.Resolution, error) {
	return h.Resolve(ctx, p, "r1", "gate", value, nil)
}

// TestEligibility: approversList binds everywhere; group and role refs bind where advertised;
// the rule that admitted a vote is recorded with it.
func TestEligibility(t *testing.T) {
	member := func(sub string, groups, roles []string) interrupt.Principal {
		return interrupt.Principal{Subject: sub, Tenant: "acme", Groups: groups, Roles: roles}
	}
	tests := []struct {
		name, data string
		refKinds   []string
		by         interrupt.Principal
		// want is the eligibility recorded ("via:ref"), or an error code.
		want string
	}{
		{"open approval", ``, nil, hosttest.Who("anyone"), "open:"},
		{"listed principal", `,"approversList":["alice"]`, nil, hosttest.Who("alice"), "principal:alice"},
		{"unlisted principal", `,"approversList":["alice"]`, nil, hosttest.Who("bob"), "approver_not_eligible"},
		{"group member", `,"approverGroupRefs":["finance"]`, []string{"group"}, member("carol", []string{"ops", "finance"}, nil), "group:finance"},
		{"not a group member", `,"approverGroupRefs":["finance"]`, []string{"group"}, member("carol", []string{"ops"}, nil), "approver_not_eligible"},
		{"group refs not advertised", `,"approverGroupRefs":["finance"]`, []string{"principal"}, member("carol", nil, nil), "open:"},
		{"group refs not advertised beside a list", `,"approversList":["alice"],"approverGroupRefs":["finance"]`, []string{"principal"}, member("carol", []string{"finance"}, nil), "approver_not_eligible"},
		{"role holder", `,"approverRoleRefs":["manager"]`, []string{"role"}, member("dave", nil, []string{"manager"}), "role:manager"},
		{"role refs not advertised", `,"approverRoleRefs":["manager"]`, []string{"group"}, member("dave", nil, nil), "open:"},
		{"listed and in the group", `,"approversList":["erin"],"approverGroupRefs":["finance"]`, []string{"group"}, member("erin", []string{"finance"}, nil), "principal:erin+group:finance"},
		{"in the group, not listed", `,"approversList":["alice"],"approverGroupRefs":["ops"]`, []string{"group"}, member("carol", []string{"ops"}, nil), "approver_not_eligible"},
		{"listed, not in the group", `,"approversList":["alice"],"approverGroupRefs":["ops"]`, []string{"group"}, member("alice", []string{"finance"}, nil), "approver_not_eligible"},
		{"in the group, without the role", `,"approverGroupRefs":["ops"],"approverRoleRefs":["manager"]`, []string{"group", "role"}, member("carol", []string{"ops"}, nil), "approver_not_eligible"},
		{"in the group, holding the role", `,"approverGroupRefs":["ops","sre"],"approverRoleRefs":["manager"]`, []string{"group", "role"}, member("carol", []string{"sre"}, []string{"manager"}), "group:sre+role:manager"},
		{"a token for a listed principal where groups bind", `,"approversList":["alice"],"approverGroupRefs":["ops"]`, []string{"group"}, interrupt.Principal{Subject: "alice", Tenant: "acme", Token: "jti"}, "approver_not_eligible"},
		{"a token without a principal", `,"approversList":["alice"]`, nil, interrupt.Principal{Tenant: "acme", Token: "jti"}, "approver_not_eligible"},
		{"a token for a listed principal", `,"approversList":["alice"]`, nil, interrupt.Principal{Subject: "alice", Tenant: "acme", Token: "jti"}, "principal:alice"},
		{"a token without a principal, quorum 2", `,"requiredApprovals":2`, nil, interrupt.Principal{Tenant: "acme", Token: "jti"}, "approver_not_eligible"},
		{"audience grants nothing", `,"approversList":["alice"],"audience":["bob"]`, nil, hosttest.Who("bob"), "approver_not_eligible"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, l := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Config.RefKinds = tt.refKinds })
			if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: approvalWith(tt.data)}); err != nil {
				t.Fatal(err)
			}
			writes := l.Writes()
			_, err := resolveAs(ctx, h, tt.by, decision("accept"))
			if err != nil {
				if got := string(code(err)); got != tt.want {
					t.Fatalf("%v, want %s", err, tt.want)
				}
				if l.Writes() != writes {
					t.Errorf("a refused vote wrote")
				}
				return
			}
			page, err := h.Events(ctx, hosttest.Who("engine"), "r1", 1, 0, "")
			if err != nil {
				t.Fatal(err)
			}
			var vote interrupt.Vote
			if err := json.Unmarshal(page.Events[0].Payload, &vote); err != nil {
				t.Fatal(err)
			}
			got := vote.Eligibility.Via + ":" + vote.Eligibility.Ref
			for _, a := range vote.Eligibility.Also {
				got += "+" + a.Via + ":" + a.Ref
			}
			if got != tt.want {
				t.Errorf("recorded %s, want %s", got, tt.want)
			}
		})
	}
}

// TestIdempotency: a key replays its first answer for the same request, refuses another request
// with 422, is scoped to its caller, and outlives the interrupt's resolution; replays write
// nothing.
func TestIdempotency(t *testing.T) {
	ctx := context.Background()
	h, l := hosttest.MemHost(t)
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: approvalWith(`,"requiredApprovals":2`)}); err != nil {
		t.Fatal(err)
	}
	key := func(fingerprint string) *host.Idempotency {
		return &host.Idempotency{Key: "k1", Fingerprint: fingerprint}
	}
	first, err := h.Resolve(ctx, hosttest.Who("alice"), "r1", "gate", decision("accept"), key("f1"))
	if err != nil || first.Replay != nil || first.Status != interrupt.StatusPending {
		t.Fatalf("first: %+v %v", first, err)
	}
	writes := l.Writes()
	again, err := h.Resolve(ctx, hosttest.Who("alice"), "r1", "gate", decision("accept"), key("f1"))
	if err != nil || again.Replay == nil || again.Seq != first.Seq || string(again.ResumeValue) != string(first.ResumeValue) || *again.Tally != *first.Tally {
		t.Errorf("replay: %+v %v, want %+v", again, err, first)
	}
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), "r1", "gate", decision("reject"), key("f2")); code(err) != interrupt.CodeIdempotencyReuse {
		t.Errorf("another request with the key: %v, want 422", err)
	}
	if l.Writes() != writes {
		t.Errorf("replays wrote")
	}
	bob, err := h.Resolve(ctx, hosttest.Who("bob"), "r1", "gate", decision("accept"), key("f1"))
	if err != nil || bob.Replay != nil || bob.Status != interrupt.StatusResolved {
		t.Errorf("bob's k1 is bob's own key: %+v %v", bob, err)
	}
	late, err := h.Resolve(ctx, hosttest.Who("alice"), "r1", "gate", decision("accept"), key("f1"))
	if err != nil || late.Replay == nil || late.Seq != first.Seq {
		t.Errorf("a replay after resolution: %+v %v", late, err)
	}
	token := interrupt.Principal{Subject: "alice", Tenant: "acme", Token: "jti-9"}
	if _, err := h.Resolve(ctx, token, "r1", "gate", decision("accept"), key("f1")); code(err) != interrupt.CodeAlreadyResolved {
		t.Errorf("alice's k1 through a token is the token's own key: %v", err)
	}
}

// TestResumeValidation: a resume value is checked against everything its interrupt declares,
// failing paths named, and a refused value writes nothing.
func TestResumeValidation(t *testing.T) {
	tests := []struct {
		name, payload, value string
		by                   interrupt.Principal
		// want is "" for accepted, or the error code and the paths it names.
		want string
	}{
		{"resumeSchema holds", `{"kind":"custom","key":"k","data":{"customKind":"x"},"resumeSchema":{"type":"object","required":["ok"]}}`, `{"ok":true}`, hosttest.Who("a"), ""},
		{"resumeSchema fails", `{"kind":"custom","key":"k","data":{"customKind":"x"},"resumeSchema":{"type":"object","required":["ok"]}}`, `{}`, hosttest.Who("a"), "validation_error /resumeValue/ok"},
		{"every question answered", `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q1","question":"?","schema":{"type":"integer"}},{"id":"q2","question":"?"}]}}`, `{"answers":{"q1":3,"q2":"x"}}`, hosttest.Who("a"), ""},
		{"a question unanswered", `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q1","question":"?"},{"id":"q2","question":"?"}]}}`, `{"answers":{"q1":1}}`, hosttest.Who("a"), "validation_error /resumeValue/answers/q2"},
		{"an answer to no question", `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q1","question":"?"}]}}`, `{"answers":{"q1":1,"a/b":2}}`, hosttest.Who("a"), "validation_error /resumeValue/answers/a~1b"},
		{"an answer against its schema", `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q1","question":"?","schema":{"type":"integer"}}]}}`, `{"answers":{"q1":"three"}}`, hosttest.Who("a"), "validation_error /resumeValue/answers/q1"},
		{"answers not an object", `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q1","question":"?"}]}}`, `["q1"]`, hosttest.Who("a"), "validation_error /resumeValue"},
		{"outcomeSchema holds", `{"kind":"conversation.exchange","key":"k","data":{"conversationId":"c","prompt":"?","outcomeSchema":{"type":"string"}}}`, `"fine"`, hosttest.Who("a"), ""},
		{"outcomeSchema fails", `{"kind":"conversation.exchange","key":"k","data":{"conversationId":"c","prompt":"?","outcomeSchema":{"type":"string"}}}`, `7`, hosttest.Who("a"), "validation_error /resumeValue"},
		{"an action the approval does not allow", `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"]}}`, string(decision("reject")), hosttest.Who("a"), "validation_error /resumeValue/action"},
		{"refine without feedback", string(approvalWith(``)), `{"action":"refine","decidedAt":"2026-11-30T09:00:00Z"}`, hosttest.Who("a"), "validation_error /resumeValue/refineFeedback"},
		{"decidedBy is opaque", string(approvalWith(``)), `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","decidedBy":"user:alice"}`, hosttest.Who("alice"), ""},
		{"decidedBy the caller", string(approvalWith(``)), `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","decidedBy":"alice"}`, hosttest.Who("alice"), ""},
		{"no decidedBy from a token without a principal", string(approvalWith(``)), `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`, interrupt.Principal{Tenant: "acme", Token: "jti"}, "validation_error /resumeValue/decidedBy"},
		{"decidedBy from a token without a principal", string(approvalWith(``)), `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","decidedBy":"Ops desk"}`, interrupt.Principal{Tenant: "acme", Token: "jti"}, ""},
		{"no decidedBy from a token for a principal", string(approvalWith(``)), `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`, interrupt.Principal{Subject: "bob", Tenant: "acme", Token: "jti"}, ""},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, l := hosttest.MemHost(t)
			if strings.Contains(tt.payload, "conversation.exchange") {
				open := json.RawMessage(`{"kind":"conversation.start","key":"open","data":{"conversationId":"c"}}`)
				if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "open", Payload: open}); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: json.RawMessage(tt.payload)}); err != nil {
				t.Fatal(err)
			}
			writes := l.Writes()
			_, err := resolveAs(ctx, h, tt.by, json.RawMessage(tt.value))
			got := ""
			if err != nil {
				got = string(code(err))
				var e *interrupt.Error
				if errors.As(err, &e) {
					for _, f := range e.Fields {
						got += " " + f.Path
					}
				}
			}
			if got != tt.want {
				t.Errorf("%q (%v), want %q", got, err, tt.want)
			}
			if err != nil && l.Writes() != writes {
				t.Errorf("a refused value wrote")
			}
		})
	}
}

// TestClarificationRecordsWhoAnswered: a clarification's recorded answers say who answered, as
// an approval's decision does: decidedBy as sent, else the authenticated caller; no one for a
// token minted without a principal, nor where the interrupt's resumeSchema refuses the member;
// and when: decidedAt as sent, else the time it was recorded.
func TestClarificationRecordsWhoAnswered(t *testing.T) {
	const ask = `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q1","question":"?"}]}%s}`
	tests := []struct {
		name, resumeSchema, value string
		by                        interrupt.Principal
		want                      string
	}{
		{"the caller filled in", ``, `{"answers":{"q1":1}}`, hosttest.Who("alice"), `{"answers":{"q1":1},"decidedBy":"alice","decidedAt":"2026-11-30T09:00:00.000Z"}`},
		{"decidedBy kept as sent", ``, `{"answers":{"q1":1},"decidedBy":"Ops desk","decidedAt":"2026-12-02T09:00:00Z"}`, hosttest.Who("alice"), `{"answers":{"q1":1},"decidedBy":"Ops desk","decidedAt":"2026-12-02T09:00:00Z"}`},
		{"a token without a principal", ``, `{"answers":{"q1":1}}`, interrupt.Principal{Tenant: "acme", Token: "jti"}, `{"answers":{"q1":1},"decidedAt":"2026-11-30T09:00:00.000Z"}`},
		{"a resumeSchema without room for it", `,"resumeSchema":{"type":"object","additionalProperties":false,"properties":{"answers":{}}}`, `{"answers":{"q1":1}}`, hosttest.Who("alice"), `{"answers":{"q1":1}}`},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := hosttest.MemHost(t)
			if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: json.RawMessage(fmt.Sprintf(ask, tt.resumeSchema))}); err != nil {
				t.Fatal(err)
			}
			res, err := resolveAs(ctx, h, tt.by, json.RawMessage(tt.value))
			if err != nil {
				t.Fatal(err)
			}
			if string(res.ResumeValue) != tt.want {
				t.Errorf("recorded %s, want %s", res.ResumeValue, tt.want)
			}
		})
	}
	h, _ := hosttest.MemHost(t)
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: json.RawMessage(fmt.Sprintf(ask, ""))}); err != nil {
		t.Fatal(err)
	}
	if _, err := resolveAs(ctx, h, hosttest.Who("alice"), json.RawMessage(`{"answers":{"q1":1},"decidedBy":7}`)); code(err) != interrupt.CodeValidation {
		t.Errorf("a decidedBy that is not a string: %v", err)
	}
}

// TestDecidedByHoldsToTheResumeSchema: the caller filled in as an approval's decidedBy, unless
// the interrupt's resumeSchema has no room for it: the recorded value holds to the schema it was
// validated against.
func TestDecidedByHoldsToTheResumeSchema(t *testing.T) {
	t.Parallel()
	closed := `{"kind":"approval","key":"k","resumeSchema":{"type":"object","additionalProperties":false,"properties":{"action":{},"decidedAt":{}}},"data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"]}}`
	for _, c := range []struct{ name, payload, want string }{
		{"no resumeSchema", string(approvalWith(``)), `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","decidedBy":"alice"}`},
		{"a closed resumeSchema", closed, `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, _ := hosttest.MemHost(t)
			ctx := context.Background()
			if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: json.RawMessage(c.payload)}); err != nil {
				t.Fatal(err)
			}
			res, err := resolveAs(ctx, h, hosttest.Who("alice"), json.RawMessage(`{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`))
			if err != nil || string(res.ResumeValue) != c.want {
				t.Errorf("recorded %s (%v), want %s", res.ResumeValue, err, c.want)
			}
		})
	}
}

// TestConversationLifecycle: exchange and close need a conversation the run opened and has not
// closed; a closed conversation is never opened again, in this run or another.
func TestConversationLifecycle(t *testing.T) {
	ctx := context.Background()
	h, _ := hosttest.MemHost(t)
	conv := func(kind, key string) json.RawMessage {
		extra := ""
		if kind == "conversation.exchange" {
			extra = `,"prompt":"?"`
		}
		return json.RawMessage(`{"kind":"` + kind + `","key":"` + key + `","data":{"conversationId":"c1"` + extra + `}}`)
	}
	steps := []struct {
		run, node, kind, key string
		want                 interrupt.Code
	}{
		{"r1", "a", "conversation.exchange", "e0", interrupt.CodeConflict},
		{"r1", "b", "conversation.close", "x0", interrupt.CodeConflict},
		{"r1", "c", "conversation.start", "s1", ""},
		{"r1", "d", "conversation.start", "s2", interrupt.CodeConflict},
		{"r1", "e", "conversation.exchange", "e1", ""},
		{"r1", "f", "conversation.close", "x1", ""},
		{"r1", "g", "conversation.exchange", "e2", interrupt.CodeConflict},
		{"r1", "h", "conversation.close", "x2", interrupt.CodeConflict},
		{"r1", "i", "conversation.start", "s3", interrupt.CodeConflict},
		{"r2", "a", "conversation.start", "s1", interrupt.CodeConflict},
	}
	for i, s := range steps {
		_, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), s.run, host.Request{NodeID: s.node, Payload: conv(s.kind, s.key)})
		if got := interrupt.ErrorCode(err); got != s.want {
			t.Errorf("step %d, %s in %s: %v, want %q", i, s.kind, s.run, err, s.want)
		}
	}
}

// TestAgentDecisions: a decision below the run's threshold suspends its node in its own commit
// (agent.decided, node.suspended, the low-confidence interrupt), one above it is only recorded,
// the same key answers the first decision, and bad input changes nothing.
func TestAgentDecisions(t *testing.T) {
	ctx := context.Background()
	h, l := hosttest.MemHost(t)
	decide := func(run, node, key string, confidence float64) (host.Decided, bool, error) {
		return h.Decide(ctx, hosttest.Who("engine"), run, host.AgentDecision{NodeID: node, Key: key, AgentID: "triage", Confidence: confidence, Decision: json.RawMessage(`{"label":"billing"}`)})
	}
	if _, err := h.Configure(ctx, hosttest.Who("engine"), "r1", 0.8); err != nil {
		t.Fatal(err)
	}
	low, created, err := decide("r1", "classify", "d1", 0.41)
	if err != nil || !created || !low.Escalated || low.InterruptID == "" || low.Seq != 2 {
		t.Fatalf("below the threshold: %+v %v %v", low, created, err)
	}
	page, _ := h.Events(ctx, hosttest.Who("engine"), "r1", 1, 0, "")
	var types []string
	for _, e := range page.Events {
		types = append(types, e.Type)
		if e.Seq != 2 {
			t.Errorf("%s in commit %d, want all in 2", e.Type, e.Seq)
		}
	}
	if strings.Join(types, " ") != "agent.decided node.suspended interrupt.requested" {
		t.Errorf("events %v", types)
	}
	if !strings.Contains(string(page.Events[2].Payload), `"data":{"agentId":"triage","observed":0.41,"threshold":0.8}`) {
		t.Errorf("the interrupt: %s", page.Events[2].Payload)
	}
	if snap, _ := h.Snapshot(ctx, hosttest.Who("engine"), "r1"); snap.Status != interrupt.RunWaitingInput || snap.CurrentNodeID != "classify" {
		t.Errorf("snapshot %+v", snap)
	}
	high, created, err := decide("r1", "route", "d2", 0.93)
	if err != nil || !created || high.Escalated || high.InterruptID != "" {
		t.Errorf("above the threshold: %+v %v", high, err)
	}
	writes := l.Writes()
	again, created, err := decide("r1", "classify", "d1", 0.41)
	if err != nil || created || again != low || l.Writes() != writes {
		t.Errorf("the same key again: %+v %v %v, want %+v and no write", again, created, err, low)
	}
	if d, _, err := decide("r2", "n", "d1", 0.69); err != nil || !d.Escalated {
		t.Errorf("the host's threshold (0.7) where the run sets none: %+v %v", d, err)
	}
	for name, c := range map[string]struct {
		run, node, key string
		confidence     float64
		want           interrupt.Code
	}{
		"confidence over 1":      {"r1", "n", "k", 1.5, interrupt.CodeValidation},
		"confidence under 0":     {"r1", "n", "k", -0.1, interrupt.CodeValidation},
		"no key":                 {"r1", "n", "", 0.5, interrupt.CodeValidation},
		"a bad node id":          {"r1", "a#b", "k", 0.5, interrupt.CodeValidation},
		"a node already waiting": {"r1", "classify", "k3", 0.1, interrupt.CodeConflict},
		"an interrupt's key":     {"r3", "n", "kk", 0.5, interrupt.CodeConflict},
	} {
		if name == "an interrupt's key" {
			h.RequestInterrupt(ctx, hosttest.Who("engine"), "r3", host.Request{NodeID: "x", Payload: json.RawMessage(`{"kind":"custom","key":"kk","data":{"customKind":"x"}}`)})
		}
		writes := l.Writes()
		if _, _, err := decide(c.run, c.node, c.key, c.confidence); interrupt.ErrorCode(err) != c.want {
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
		if l.Writes() != writes {
			t.Errorf("%s wrote", name)
		}
	}
	for _, bad := range []float64{-0.01, 1.01} {
		if _, err := h.Configure(ctx, hosttest.Who("engine"), "r1", bad); interrupt.ErrorCode(err) != interrupt.CodeValidation {
			t.Errorf("threshold %v: %v", bad, err)
		}
	}
	if c, err := h.Configure(ctx, hosttest.Who("engine"), "r1", 0.8); err != nil || c.Seq != 1 {
		t.Errorf("the same threshold again: %+v %v, want the first configuration's commit", c, err)
	}
}

// TestAReentryKeyNamesOneInterrupt: a key requested again at its node for its kind replays the
// interrupt as it stands and writes nothing; at another node or for another kind it is
// key_reused and writes nothing, whether the interrupt is pending, resolved, or closed long ago
// and read from the archive.
func TestAReentryKeyNamesOneInterrupt(t *testing.T) {
	t.Parallel()
	approvalKeyed := json.RawMessage(strings.Replace(string(approvalWith("")), `"key":"k"`, `"key":"first"`, 1))
	states := map[string]func(t *testing.T, h *host.Host, l *inmem.Store){
		"pending": func(t *testing.T, h *host.Host, _ *inmem.Store) {
			if _, _, err := h.RequestInterrupt(context.Background(), hosttest.Who("engine"), "r1", host.Request{NodeID: "a", Payload: hosttest.Custom("first")}); err != nil {
				t.Fatal(err)
			}
		},
		"resolved": func(t *testing.T, h *host.Host, _ *inmem.Store) {
			ctx := context.Background()
			if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "a", Payload: hosttest.Custom("first")}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Resolve(ctx, hosttest.Who("alice"), "r1", "a", json.RawMessage(`{"v":1}`), nil); err != nil {
				t.Fatal(err)
			}
		},
		"archived": func(t *testing.T, h *host.Host, l *inmem.Store) {
			hosttest.NewLongRun(t, h, "r1", 4*runlog.CheckpointEvery)
			if cp, _, err := l.Tail(context.Background(), runlog.Key{Tenant: "acme", RunID: "r1"}); err != nil || cp == nil || !cp.Archived {
				t.Fatalf("the run's checkpoint %+v %v, want one that archived its first interrupt", cp, err)
			}
		},
	}
	for state, setUp := range states {
		for _, tc := range []struct {
			name, node string
			payload    json.RawMessage
			want       interrupt.Code
		}{
			{"its node and kind replay it", "a", hosttest.Custom("first"), ""},
			{"another node", "b", hosttest.Custom("first"), interrupt.CodeKeyReused},
			{"another kind", "a", approvalKeyed, interrupt.CodeKeyReused},
			{"another node and kind", "b", approvalKeyed, interrupt.CodeKeyReused},
		} {
			t.Run(state+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				h, l := hosttest.MemHost(t)
				setUp(t, h, l)
				writes := l.Writes()
				v, created, err := h.RequestInterrupt(context.Background(), hosttest.Who("engine"), "r1", host.Request{NodeID: tc.node, Payload: tc.payload})
				if code(err) != tc.want || created || l.Writes() != writes {
					t.Fatalf("%v created %v, %d writes; want %q and none", err, created, l.Writes()-writes, tc.want)
				}
				if tc.want == "" && (v.NodeID != "a" || v.Key != "first" || v.Kind != interrupt.KindCustom || v.Seq != 1) {
					t.Errorf("the replay %+v, want the interrupt requested at a in commit 1", v)
				}
				if tc.want != "" && !strings.Contains(err.Error(), "node a") {
					t.Errorf("the refusal %q does not name the key's node", err)
				}
			})
		}
	}
}

// TestAReplaySaysWhatItReplayed: a request whose key names an interrupt already answers that
// interrupt, and says whether the payload sent is the one first requested (member order aside).
func TestAReplaySaysWhatItReplayed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := hosttest.MemHost(t)
	first := `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"doc","title":"Pay 12","actions":["accept"]}}`
	view, created, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: json.RawMessage(first)})
	if err != nil || !created || view.SamePayload != nil {
		t.Fatalf("first: %+v %v %v", view, created, err)
	}
	for _, tt := range []struct {
		name, payload string
		same          bool
	}{
		{"the same, its members in another order", `{"key":"k","kind":"approval","data":{"title":"Pay 12","actions":["accept"],"artifactType":"doc","artifactId":"a"}}`, true},
		{"another title", `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"doc","title":"Pay 13","actions":["accept"]}}`, false},
		{"another quorum", `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"doc","title":"Pay 12","actions":["accept"],"requiredApprovals":2}}`, false},
	} {
		again, created, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: json.RawMessage(tt.payload)})
		if err != nil || created || again.InterruptID != view.InterruptID || again.SamePayload == nil || *again.SamePayload != tt.same {
			t.Errorf("%s: %+v created %v, %v; want the first interrupt, samePayload %v", tt.name, again, created, err, tt.same)
		}
	}
}

// TestAReplayComparesItsCall: a replay of an approval that allows a call says samePayload only
// for the call first asked (its arguments compared as canonical JSON, members in any order):
// another tool, other arguments, another receipt life, a call left out or added are another
// request under the key, whose payload alone is the same.
func TestAReplayComparesItsCall(t *testing.T) {
	t.Parallel()
	payload := json.RawMessage(`{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"refund","title":"Refund 4471","actions":["accept","reject"]}}`)
	call := func(name, args string, ttl int64) *interrupt.ToolCall {
		return &interrupt.ToolCall{Name: name, Arguments: json.RawMessage(args), ReceiptTTLMs: ttl}
	}
	first := call("issue_refund", `{"order":"4471","amountCents":124000,"currency":"EUR"}`, 0)
	for _, tt := range []struct {
		name        string
		first, sent *interrupt.ToolCall
		same        bool
	}{
		{"the same call", first, call("issue_refund", `{"order":"4471","amountCents":124000,"currency":"EUR"}`, 0), true},
		{"its members reordered and spaced", first, call("issue_refund", `{ "currency":"EUR", "order":"4471", "amountCents":1.24e5 }`, 0), true},
		{"the default receipt life spelled out", first, call("issue_refund", `{"order":"4471","amountCents":124000,"currency":"EUR"}`, interrupt.DefaultReceiptTTL.Milliseconds()), true},
		{"another amount", first, call("issue_refund", `{"order":"4471","amountCents":999999,"currency":"EUR"}`, 0), false},
		{"another tool", first, call("issue_credit", `{"order":"4471","amountCents":124000,"currency":"EUR"}`, 0), false},
		{"an argument more", first, call("issue_refund", `{"order":"4471","amountCents":124000,"currency":"EUR","to":"x"}`, 0), false},
		{"another receipt life", first, call("issue_refund", `{"order":"4471","amountCents":124000,"currency":"EUR"}`, 60_000), false},
		{"the call left out", first, nil, false},
		{"a call added", nil, first, false},
		{"no call either time", nil, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h, _ := hosttest.MemHost(t)
			view, created, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: payload, ToolCall: tt.first})
			if err != nil || !created {
				t.Fatalf("first: %+v %v %v", view, created, err)
			}
			again, created, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: payload, ToolCall: tt.sent})
			if err != nil || created || again.InterruptID != view.InterruptID || again.SamePayload == nil || *again.SamePayload != tt.same {
				t.Errorf("%+v created %v, %v; want the first interrupt, samePayload %v", again, created, err, tt.same)
			}
		})
	}
}

// TestRefusedWhenNoOneCouldDecide: an approval whose approversList leaves too few principals
// once its requester is left out is refused at the request (400 at approversList), and nothing
// is written; one that leaves enough is requested.
func TestRefusedWhenNoOneCouldDecide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name, data string
		refused    bool
	}{
		{"its requester alone", `"approversList":["engine"]`, true},
		{"its requester twice", `"approversList":["engine","engine"]`, true},
		{"a quorum of two with its requester among two", `"approversList":["engine","bob"],"requiredApprovals":2`, true},
		{"its requester beside a group", `"approversList":["engine"],"approverGroupRefs":["ops"]`, true},
		{"its requester and bob", `"approversList":["engine","bob"]`, false},
		{"a group alone", `"approverGroupRefs":["ops"]`, false},
	} {
		h, log := hosttest.MemHost(t)
		payload := fmt.Sprintf(`{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"doc","title":"t","actions":["accept"],%s}}`, tt.data)
		_, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: json.RawMessage(payload)})
		var e *interrupt.Error
		refused := errors.As(err, &e) && e.Code == interrupt.CodeValidation && len(e.Fields) == 1 && e.Fields[0].Path == "/payload/data/approversList"
		if refused != tt.refused || (!tt.refused && err != nil) {
			t.Errorf("%s: %v, want refused %v", tt.name, err, tt.refused)
		}
		if commits, _ := log.Read(ctx, runlog.Key{Tenant: "acme", RunID: "r1"}, 0, 0); tt.refused && len(commits) != 0 {
			t.Errorf("%s: refused, and wrote %d commits", tt.name, len(commits))
		}
	}
}

// TestKeyReusedReadsWell: the refusal of a key reused at another node names the interrupt's
// kind with its article ("an approval interrupt").
func TestKeyReusedReadsWell(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := hosttest.MemHost(t)
	payload := json.RawMessage(`{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"doc","title":"t","actions":["accept"]}}`)
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "n1", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "n2", Payload: payload})
	if interrupt.ErrorCode(err) != interrupt.CodeKeyReused || !strings.Contains(err.Error(), "an approval interrupt at node n1") {
		t.Errorf("%v", err)
	}
}
