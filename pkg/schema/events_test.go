package schema_test

import (
	"encoding/json"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/schemas"
)

// TestEventTypes holds the one list of event types to the published schema's enum, and the
// legacy aliases to the kinds that have a legacy family.
func TestEventTypes(t *testing.T) {
	t.Parallel()
	raw, err := fs.ReadFile(schemas.FS, schema.RunEventPayloads)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.Properties.Type.Enum, interrupt.Events) {
		t.Errorf("the schema's event types %v, the host's %v", doc.Properties.Type.Enum, interrupt.Events)
	}
	for _, typ := range interrupt.Events {
		prefix, suffix, _ := strings.Cut(typ, ".")
		alias := (suffix == "requested" || suffix == "resolved") && (prefix == interrupt.KindApproval.LegacyPrefix() || prefix == interrupt.KindClarification.LegacyPrefix())
		if interrupt.IsLegacyType(typ) != alias {
			t.Errorf("%s: IsLegacyType %v", typ, !alias)
		}
	}
}

// TestEventPayloads: the typed payload of each event the host writes is what the published
// schema defines for it.
func TestEventPayloads(t *testing.T) {
	t.Parallel()
	s := load(t)
	for typ, payload := range map[string]any{
		interrupt.EventAsked:         interrupt.Asked{NodeID: "n", InterruptID: "int_1", Principal: "alice", ResumeValue: json.RawMessage(`{"action":"ask"}`)},
		interrupt.EventExpired:       interrupt.Expired{NodeID: "n", InterruptID: "int_1", Kind: interrupt.KindApproval, Deadline: "2026-11-30T09:00:00.000Z"},
		interrupt.EventRunCancelled:  interrupt.Ended{By: "engine", Reason: "done"},
		interrupt.EventRunCompleted:  interrupt.Ended{By: "engine"},
		interrupt.EventRunConfigured: interrupt.Configured{EscalationThreshold: 0.5, By: "ops"},
		interrupt.EventAgentDecided:  interrupt.AgentDecided{NodeID: "n", Key: "k", AgentID: "a", Confidence: 0.2, Threshold: 0.5, Decision: json.RawMessage(`{"go":true}`)},
		interrupt.EventNodeSuspended: interrupt.Suspended{NodeID: "n", Reason: interrupt.ReasonLowConfidence, InterruptID: "int_1"},
		interrupt.EventVoted: interrupt.Vote{NodeID: "n", InterruptID: "int_1", Principal: "alice", Action: interrupt.ActionReject, ResumeValue: json.RawMessage(`{"action":"reject"}`),
			Eligibility: interrupt.Eligibility{Via: interrupt.RefPrincipal, Ref: "alice", Also: []interrupt.Admission{{Via: interrupt.RefGroup, Ref: "ops"}}},
			Reason:      interrupt.ReasonQuorumUnreachable, Tally: interrupt.Tally{Approvals: 1, Rejections: 1, Required: 2}},
		interrupt.EventResolved: interrupt.Resolved{NodeID: "n", InterruptID: "int_1", Kind: interrupt.KindCustom, ResumeValue: json.RawMessage(`{}`)},
		interrupt.EventReceiptRedeemed: interrupt.Redeemed{NodeID: "n", InterruptID: "int_1", Name: "issue_refund",
			ArgumentsDigest: "9f2b5d1c0e4a7b3f6d8c2e1a5b7f9d3c4e6a8b0d2f4c6e8a0b2d4f6c8e0a2b4d", By: "executor"},
	} {
		body, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		envelope, _ := json.Marshal(map[string]any{"seq": 1, "index": 0, "type": typ, "runId": "r", "at": "2026-11-30T09:00:00.000Z", "payload": json.RawMessage(body)})
		if fields := s.Validate(schema.RunEventPayloads, envelope, ""); len(fields) > 0 {
			t.Errorf("%s %s: %+v", typ, body, fields)
		}
	}
}
