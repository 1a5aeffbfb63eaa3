package schema_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// TestTheClientsPayloadsAreTheSchemas: every kind's typed payload of the engine's client, with
// each of its fields set and with only the required ones, marshals to an InterruptPayload the
// host's schema admits; one without its re-entry key is refused by the client itself.
func TestTheClientsPayloadsAreTheSchemas(t *testing.T) {
	t.Parallel()
	set, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	obj := json.RawMessage(`{"type":"object"}`)
	for name, d := range map[string]client.Data{
		"approval, whole": client.Approval{ArtifactID: "inv-1", ArtifactType: "invoice", Title: "Pay", Description: "d", ArtifactData: json.RawMessage(`{"amount":1}`),
			Actions: []string{"accept", "reject", "refine", "edit-accept", "ask"}, RequiredApprovals: 2, RejectionPolicy: "majority", OverrideBypassesQuorum: true,
			ApproversList: []string{"alice", "bob"}, ApproverGroupRefs: []string{"finance"}, ApproverRoleRefs: []string{"manager"}, Audience: []string{"alice"}},
		"approval, required":    client.Approval{ArtifactID: "inv-1", ArtifactType: "invoice", Title: "Pay", Actions: []string{"accept"}},
		"clarification":         client.Clarification{Questions: []client.Question{{ID: "q", Question: "Which?", Schema: json.RawMessage(`{"type":"string"}`)}, {ID: "r", Question: "Why?"}}},
		"external event":        client.ExternalEvent{EventType: "payment_intent.succeeded", Correlation: "order-1"},
		"custom":                client.Custom{CustomKind: "x", Payload: json.RawMessage(`{"a":1}`)},
		"low confidence":        client.LowConfidence{AgentID: "agent-1", Threshold: 0.7, Observed: 0.4},
		"conversation start":    client.ConversationStart{ConversationID: "c1"},
		"conversation exchange": client.ConversationExchange{ConversationID: "c1", Prompt: "Go on?", OutcomeSchema: obj},
		"conversation close":    client.ConversationClose{ConversationID: "c1"},
	} {
		raw, err := client.Payload(d, "k", time.Hour, obj)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fields := set.Validate(schema.SuspendRequest, raw, ""); len(fields) > 0 {
			t.Errorf("%s: %s is refused: %+v", name, raw, fields)
		}
	}
	if _, err := client.Payload(client.Custom{CustomKind: "x"}, "", 0, nil); err == nil {
		t.Error("a payload without its key")
	}
}
