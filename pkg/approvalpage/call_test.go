package approvalpage

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// TestTheCallsValuesAreIsolated: the page's sentence of a call puts every value the call and its
// requester wrote in <bdi>, its own directional controls shown as U+FFFD, so that a right-to-left
// override in an argument or the requester's name cannot reorder the words after it; as does
// the sentence of a call approved with edits.
func TestTheCallsValuesAreIsolated(t *testing.T) {
	t.Parallel()
	asked := json.RawMessage(`{"memo":"\u202e0001 tnuoma","amountCents":124000,"currency":"EUR"}`)
	for _, tt := range []struct {
		name    string
		status  interrupt.Status
		outcome string
		want    []string
	}{
		{"pending", interrupt.StatusPending, "", []string{
			`<p class="sentence"><bdi>Refunds` + "\ufffd" + ` desk</bdi> will call <bdi>issue_refund</bdi> with <bdi>memo</bdi> <bdi>` + "\ufffd" + `0001 tnuoma</bdi>, <bdi>amount</bdi> 1,240.00 EUR</p>`,
		}},
		{"approved with edits", interrupt.StatusResolved, `{"action":"edit-accept","decidedAt":"2026-11-30T09:00:00Z","editedArtifactData":{"memo":"\u2069\u202eok","amountCents":100,"currency":"EUR"}}`, []string{
			`<p class="sentence approved">Approved with edits: <bdi>issue_refund</bdi> with <bdi>memo</bdi> <bdi>` + "\ufffd\ufffd" + `ok</bdi>, <bdi>amount</bdi> 1.00 EUR</p>`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			payload := `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"refund","title":"Refund","actions":["accept","edit-accept"]}}`
			o := host.Opened{
				RunID: "r1", NodeID: "n", InterruptID: "int_1", Raw: json.RawMessage(payload), Status: tt.status, CanResolve: true,
				ToolCall: &interrupt.ToolCall{Name: "issue_refund", Arguments: asked},
				Display:  &interrupt.Display{RequesterName: "Refunds\u202e desk"},
			}
			if err := json.Unmarshal(o.Raw, &o.Payload); err != nil {
				t.Fatal(err)
			}
			if tt.outcome != "" {
				o.Outcome = json.RawMessage(tt.outcome)
			}
			page, err := Render(ReadOnly(o, 200, nil))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.want {
				if !strings.Contains(string(page), want) {
					t.Errorf("the page does not hold %s:\n%s", want, page)
				}
			}
		})
	}
}

// TestThePageSaysThePolicy: a call asked under a tenant's policy says so among the facts: who
// decides was the tenant's rule, not the agent's choice.
func TestThePageSaysThePolicy(t *testing.T) {
	t.Parallel()
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"refund","title":"Refund","actions":["accept","reject"],"approversList":["alice"]}}`
	o := host.Opened{
		RunID: "r1", NodeID: "n", InterruptID: "int_1", Raw: json.RawMessage(payload), Status: interrupt.StatusPending, CanResolve: true,
		ToolCall: &interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{"order":"4471"}`), Policy: &interrupt.PolicyRef{Tool: "issue_refund", Version: 3}},
	}
	if err := json.Unmarshal(o.Raw, &o.Payload); err != nil {
		t.Fatal(err)
	}
	page, err := Render(ReadOnly(o, 200, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Policy issue_refund v3, the tenant&#39;s rule for who decides calls of issue_refund"; !strings.Contains(string(page), want) {
		t.Errorf("the page does not say the policy (%s):\n%s", want, page)
	}
}

// TestAQuestionsTitle: a question's display title and description head its page, as an
// approval's payload's do.
func TestAQuestionsTitle(t *testing.T) {
	t.Parallel()
	o := host.Opened{
		RunID: "r1", NodeID: "n", InterruptID: "int_1", Raw: json.RawMessage(`{"kind":"clarification","key":"k","data":{"questions":[{"id":"po","question":"Which purchase order?"}]}}`),
		Status: interrupt.StatusPending, CanResolve: true,
		Display: &interrupt.Display{Title: "Purchase order for invoice 4471", Description: "Finance needs the one to pay against."},
	}
	if err := json.Unmarshal(o.Raw, &o.Payload); err != nil {
		t.Fatal(err)
	}
	page, err := Render(ReadOnly(o, 200, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>Purchase order for invoice 4471", "<h1>Purchase order for invoice 4471</h1>", "Finance needs the one to pay against."} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
}

// TestThePageSaysForWhom: a delegate's page says whose place they decide in and until when;
// once that place is filled, who filled it; a vote cast in someone's place reads "bob, for
// alice".
func TestThePageSaysForWhom(t *testing.T) {
	t.Parallel()
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"invoice","title":"Pay","actions":["accept","reject"],"approversList":["alice","carol"],"requiredApprovals":2}}`
	open := func() host.Opened {
		o := host.Opened{RunID: "r1", NodeID: "n", InterruptID: "int_1", Raw: json.RawMessage(payload), Status: interrupt.StatusPending, CanResolve: true,
			Principal: "bob", For: &interrupt.Delegated{Delegator: "alice", Until: time.Date(2026, 12, 14, 0, 0, 0, 0, time.UTC)}}
		if err := json.Unmarshal(o.Raw, &o.Payload); err != nil {
			t.Fatal(err)
		}
		return o
	}
	page := func(v View) string {
		t.Helper()
		b, err := Render(SignedIn(v, "bob", "acme", "c", "signin/signout"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	deciding := page(Decide(open(), "key", nil, nil))
	for _, want := range []string{"bob, for alice (away until 14 December)", "You decide for alice (away until 14 December): your vote fills their place."} {
		if !strings.Contains(deciding, want) {
			t.Errorf("the delegate's page lacks %q:\n%s", want, deciding)
		}
	}
	filled := open()
	filled.Voted = &interrupt.Vote{Principal: "alice", Action: interrupt.ActionAccept}
	filled.Votes = []interrupt.Vote{*filled.Voted}
	if got := page(Decide(filled, "key", nil, nil)); !strings.Contains(got, "alice voted accept for alice, whose place you would fill.") {
		t.Errorf("the page of a place alice filled herself:\n%s", got)
	}
	cast := open()
	cast.Voted = &interrupt.Vote{Principal: "bob", OnBehalfOf: "alice", Action: interrupt.ActionAccept}
	cast.Votes = []interrupt.Vote{*cast.Voted}
	if got := page(Decide(cast, "key", nil, nil)); !strings.Contains(got, "You voted accept for alice.") {
		t.Errorf("the page after bob voted for alice:\n%s", got)
	}
	cast.Status = interrupt.StatusResolved
	cast.Votes = append(cast.Votes, interrupt.Vote{Principal: "carol", Action: interrupt.ActionAccept})
	if got := page(ReadOnly(cast, 200, nil)); !strings.Contains(got, "bob, for alice accepted") {
		t.Errorf("the decided page does not say bob voted for alice:\n%s", got)
	}
}
