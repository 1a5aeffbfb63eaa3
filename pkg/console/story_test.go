package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/console"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webkit"
)

// t0 is when each test's run begins: its first commit. Its commits follow a minute apart.
var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// olga is the operator who reads the runs, of tenant acme.
var olga = interrupt.Principal{Subject: "olga", Tenant: "acme"}

// fixture is a request payload from testdata.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// requested is the interrupt.requested event of interrupt id at node, as the host records a
// request (runlog.Requested), with what the host keeps beside it.
func requested(t *testing.T, node, id, raw string, with runlog.With) runlog.Event {
	t.Helper()
	var p interrupt.Payload
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatalf("payload of %s: %v", id, err)
	}
	return runlog.Requested(node, id, with, p, json.RawMessage(raw))
}

// event is an event of type typ with its typed payload, as the host builds one (runlog.NewEvent).
func event(t *testing.T, typ, node, id string, payload any) runlog.Event {
	t.Helper()
	e, err := runlog.NewEvent(typ, node, id, payload)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// commit is one commit of a run by by ("" for the host); storyOf gives it its seq and time.
func commit(by string, events ...runlog.Event) runlog.Commit {
	return runlog.Commit{By: by, Events: events}
}

// storyOf is the run's story as the console's function reads it: the commits appended, in
// order, to an in-memory store (the ith at t0 plus i minutes), then read back by the host's
// Story at now.
func storyOf(t *testing.T, runID string, now time.Time, commits ...runlog.Commit) host.Story {
	t.Helper()
	ctx := context.Background()
	store := inmem.New()
	k := runlog.Key{Tenant: olga.Tenant, RunID: runID}
	for i, c := range commits {
		c.Seq, c.ID, c.At = int64(i+1), fmt.Sprintf("c%d", i+1), t0.Add(time.Duration(i)*time.Minute)
		if err := store.Append(ctx, k, c); err != nil {
			t.Fatalf("commit %d: %v", c.Seq, err)
		}
	}
	h := host.New(host.Env{Stores: host.StoresOf(store), Now: func() time.Time { return now }}, host.Config{})
	s, err := h.Story(ctx, olga, runID, 0, host.MaxStoryChapters)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// iso is value as the console inserts it into its words: between FIRST STRONG ISOLATE and POP
// DIRECTIONAL ISOLATE (words.Isolated; TestTheConsolesWordsStayInOrder shows a hostile one).
func iso(value string) string { return "\u2068" + value + "\u2069" }

// said is what a line of the story says, without its time and data.
type said struct{ Who, Text, Quote string }

func saidOf(lines []console.Line) []said {
	var out []said
	for _, l := range lines {
		out = append(out, said{l.Who, l.Text, l.Quote})
	}
	return out
}

// TestTheStoryInWords: each event of a run's log is a sentence, who made it first (the author
// of its commit, the principal a vote or an ask names, whoever an end or a redemption names),
// with what was written quoted as written; each legacy alias the log's reader adds is told
// once, as its interrupt.* event; an event the console has no sentence for is still told.
func TestTheStoryInWords(t *testing.T) {
	t.Parallel()
	invoice := fixture(t, "invoice.json")
	for _, tt := range []struct {
		name    string
		commits func(t *testing.T) []runlog.Commit
		want    []said
	}{
		{"an approval voted on, asked about and decided", func(t *testing.T) []runlog.Commit {
			return []runlog.Commit{
				commit("engine", requested(t, "approve", "int_1", invoice, runlog.With{})),
				commit("alice", event(t, interrupt.EventVoted, "approve", "int_1", interrupt.Vote{NodeID: "approve", InterruptID: "int_1", Principal: "alice",
					Action: interrupt.ActionAccept, ResumeValue: json.RawMessage(`{"action":"accept","feedback":"Fine by me"}`), Tally: interrupt.Tally{Approvals: 1, Required: 2}})),
				// Bob opens a link minted for no one, and names himself: the link's bearer commits.
				commit("token:jti-2", event(t, interrupt.EventAsked, "approve", "int_1", interrupt.Asked{NodeID: "approve", InterruptID: "int_1", Principal: "bob",
					ResumeValue: json.RawMessage(`{"action":"ask","feedback":"Which purchase order?"}`)})),
				// A releasing vote is stored without its value: the resolve beside it carries it.
				commit("token:jti-2",
					event(t, interrupt.EventVoted, "approve", "int_1", interrupt.Vote{NodeID: "approve", InterruptID: "int_1", Principal: "bob",
						Action: interrupt.ActionAccept, Tally: interrupt.Tally{Approvals: 2, Required: 2}}),
					event(t, interrupt.EventResolved, "approve", "int_1", interrupt.Resolved{NodeID: "approve", InterruptID: "int_1", Kind: interrupt.KindApproval,
						ResumeValue: json.RawMessage(`{"action":"accept","feedback":"PO 12, fine"}`)})),
			}
		}, []said{
			{iso("engine"), "asked for an approval at step approve: “" + iso("Pay invoice 4471") + "”, to be decided by Mon 30 Nov 2026, 10:00:00 UTC", ""},
			{iso("alice"), "voted accept (1 of 2 approvals)", "Fine by me"},
			{iso("bob"), "asked a question", "Which purchase order?"},
			{iso("bob"), "voted accept (2 of 2 approvals)", "PO 12, fine"},
			{"a signed link's holder", "decided the approval at step approve: accepted", "PO 12, fine"},
		}},
		{"a question from a signed link, followed up and expired", func(t *testing.T) []runlog.Commit {
			return []runlog.Commit{
				commit("token:jti-1", requested(t, "clarify", "int_2", `{"kind":"clarification","key":"k2","timeoutMs":180000,"data":{"questions":[{"id":"po","question":"Which purchase order?"}]}}`, runlog.With{})),
				commit("", event(t, interrupt.EventReminded, "clarify", "int_2", interrupt.Reminded{NodeID: "clarify", InterruptID: "int_2", Reminder: 1,
					Recipients: []interrupt.Ref{{Kind: interrupt.RefPrincipal, Ref: "alice"}, {Kind: interrupt.RefGroup, Ref: "finance"}}})),
				commit("", event(t, interrupt.EventEscalated, "clarify", "int_2", interrupt.Escalated{NodeID: "clarify", InterruptID: "int_2"})),
				commit("", event(t, interrupt.EventExpired, "clarify", "int_2", interrupt.Expired{NodeID: "clarify", InterruptID: "int_2", Kind: interrupt.KindClarification,
					Deadline: "2026-11-30T09:03:00.000Z"})),
			}
		}, []said{
			{"a signed link's holder", "asked a question at step clarify: “" + iso("Which purchase order?") + "”, to be decided by Mon 30 Nov 2026, 09:03:00 UTC", ""},
			{"the host", "sent reminder 1 for step clarify to principal " + iso("alice") + ", group " + iso("finance"), ""},
			{"the host", "escalated step clarify to no one", ""},
			{"the host", "recorded that step clarify expired: its deadline 2026-11-30T09:03:00.000Z passed without a decision", ""},
		}},
		{"an agent unsure, an external event, and the run completed", func(t *testing.T) []runlog.Commit {
			return []runlog.Commit{
				commit("engine", event(t, interrupt.EventRunConfigured, "", "", interrupt.Configured{EscalationThreshold: 0.7, By: "engine"})),
				commit("engine",
					event(t, interrupt.EventAgentDecided, "triage", "", interrupt.AgentDecided{NodeID: "triage", AgentID: "triage-bot", Confidence: 0.42, Threshold: 0.7}),
					event(t, interrupt.EventNodeSuspended, "triage", "", interrupt.Suspended{NodeID: "triage", Reason: interrupt.ReasonLowConfidence}),
					requested(t, "triage", "int_3", `{"kind":"low-confidence","key":"k3","data":{"agentId":"triage-bot"}}`, runlog.With{})),
				commit("", requested(t, "pay", "int_4", `{"kind":"external-event","key":"k4","data":{"eventType":"payment.succeeded"}}`, runlog.With{})),
				commit("", event(t, interrupt.EventResolved, "pay", "int_4", interrupt.Resolved{NodeID: "pay", InterruptID: "int_4", Kind: interrupt.KindExternalEvent,
					ResumeValue: json.RawMessage(`{"paid":true}`)})),
				// The operator's principal ends it through a service: the end names the operator.
				commit("console", event(t, interrupt.EventRunCompleted, "", "", interrupt.Ended{By: "olga", Reason: "Done by hand"})),
			}
		}, []said{
			{iso("engine"), "set the run's escalation threshold to 0.70", ""},
			{iso("engine"), "recorded agent " + iso("triage-bot") + "'s decision, 0.42 confident against a threshold of 0.70", ""},
			{iso("engine"), "suspended step triage (low-confidence)", ""},
			{iso("engine"), "asked for a low-confidence decision at step triage", ""},
			{"the host", "began waiting for an external event at step pay", ""},
			{"the host", "resolved the external event at step pay", ""},
			{iso("olga"), "completed the run", "Done by hand"},
		}},
		{"a rejection, an answer, a receipt redeemed, an event of no sentence", func(t *testing.T) []runlog.Commit {
			return []runlog.Commit{
				commit("engine",
					requested(t, "refund", "int_5", `{"kind":"approval","key":"k5","data":{"title":"Refund 80 EUR","actions":["accept","reject"]}}`, runlog.With{}),
					requested(t, "ask", "int_6", `{"kind":"clarification","key":"k6","data":{"questions":[{"id":"po","question":"Which order?"}]}}`, runlog.With{})),
				commit("carol", event(t, interrupt.EventResolved, "refund", "int_5", interrupt.Resolved{NodeID: "refund", InterruptID: "int_5", Kind: interrupt.KindApproval,
					ResumeValue: json.RawMessage(`{"action":"reject","feedback":"Too much"}`)})),
				commit("dave", event(t, interrupt.EventResolved, "ask", "int_6", interrupt.Resolved{NodeID: "ask", InterruptID: "int_6", Kind: interrupt.KindClarification,
					ResumeValue: json.RawMessage(`{"answers":{"po":"4471"}}`)})),
				commit("payments", event(t, interrupt.EventReceiptRedeemed, "refund", "int_5", interrupt.Redeemed{NodeID: "refund", InterruptID: "int_5", Name: "issue_refund", By: "agent-7"})),
				commit("engine", runlog.Event{Type: "run.annotated", Payload: json.RawMessage(`{"note":"later kinds of event"}`)}),
				commit("", event(t, interrupt.EventRunCancelled, "", "", interrupt.Ended{})),
			}
		}, []said{
			{iso("engine"), "asked for an approval at step refund: “" + iso("Refund 80 EUR") + "”", ""},
			{iso("engine"), "asked a question at step ask: “" + iso("Which order?") + "”", ""},
			{iso("carol"), "decided the approval at step refund: rejected", "Too much"},
			{iso("dave"), "answered the question at step ask", ""},
			{iso("agent-7"), "redeemed the receipt of the approved call " + iso("issue_refund") + " at step refund", ""},
			{iso("engine"), "recorded run.annotated", ""},
			{"the host", "cancelled the run", ""},
		}},
		{"a delegate's vote, and an escalation that handed a place on", func(t *testing.T) []runlog.Commit {
			return []runlog.Commit{
				commit("engine", requested(t, "approve", "int_8", `{"kind":"approval","key":"k8","data":{"title":"Pay","actions":["accept","reject"],"approversList":["alice","carol"],"requiredApprovals":2}}`, runlog.With{})),
				commit("bob", event(t, interrupt.EventVoted, "approve", "int_8", interrupt.Vote{NodeID: "approve", InterruptID: "int_8", Principal: "bob", OnBehalfOf: "alice",
					Action: interrupt.ActionAccept, ResumeValue: json.RawMessage(`{"action":"accept"}`), Tally: interrupt.Tally{Approvals: 1, Required: 2}})),
				commit("", event(t, interrupt.EventEscalated, "approve", "int_8", interrupt.Escalated{NodeID: "approve", InterruptID: "int_8",
					To: []interrupt.Ref{{Kind: interrupt.RefPrincipal, Ref: "mgr"}}, Handed: []interrupt.Handing{{Principal: "carol", To: "mgr", At: t0}}})),
			}
		}, []said{
			{iso("engine"), "asked for an approval at step approve: “" + iso("Pay") + "”", ""},
			{iso("bob") + ", for " + iso("alice"), "voted accept (1 of 2 approvals)", ""},
			{"the host", "escalated step approve to principal " + iso("mgr") + "; " + iso("mgr") + " decides for " + iso("carol"), ""},
		}},
		{"a call asked under a policy, approved at once by its standing approval", func(t *testing.T) []runlog.Commit {
			ref := interrupt.PolicyRef{Tool: "issue_refund", Version: 3}
			call := &interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{"amountCents":1200}`), Policy: &ref}
			return []runlog.Commit{
				commit("agent-7", requested(t, "refund", "int_7", `{"kind":"approval","key":"k7","data":{"title":"Refund 12 EUR","actions":["accept","reject"],"approversList":["alice"]}}`, runlog.With{ToolCall: call})),
				commit("policy:issue_refund@3",
					event(t, interrupt.EventVoted, "refund", "int_7", interrupt.Vote{NodeID: "refund", InterruptID: "int_7", Principal: "policy:issue_refund@3", Action: interrupt.ActionAccept,
						Eligibility: interrupt.Eligibility{Via: interrupt.EligiblePolicy, Ref: "issue_refund"}, Tally: interrupt.Tally{Approvals: 1, Required: 1},
						Standing: &interrupt.StandingMatch{Index: 0, Description: "refunds up to 50.00"}}),
					event(t, interrupt.EventResolved, "refund", "int_7", interrupt.Resolved{NodeID: "refund", InterruptID: "int_7", Kind: interrupt.KindApproval,
						ResumeValue: json.RawMessage(`{"action":"accept","decidedBy":"policy:issue_refund@3"}`)})),
			}
		}, []said{
			{iso("agent-7"), "asked for an approval at step refund: “" + iso("Refund 12 EUR") + "”, under Policy issue_refund v3 (the tenant's rule for who decides calls of " + iso("issue_refund") + ")", ""},
			{iso("policy:issue_refund@3"), "approved the call at once, no person asked: it matched the policy's standing approval", "refunds up to 50.00"},
			{iso("policy:issue_refund@3"), "decided the approval at step refund: accepted", ""},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := storyOf(t, "r1", t0.Add(time.Hour), tt.commits(t)...)
			r := console.RunOf(console.RunParams{Story: s, CSRF: "csrf", Now: t0.Add(time.Hour)})
			if got := saidOf(r.Story); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("the story says\n%s\nwant\n%s", lines(got), lines(tt.want))
			}
		})
	}
}

func lines(s []said) string {
	var b strings.Builder
	for _, l := range s {
		fmt.Fprintf(&b, "\t%s | %s | %s\n", l.Who, l.Text, l.Quote)
	}
	return b.String()
}

// TestAStoryLinesData: a line tells when its commit was made and anchors the event by seq and
// index (the index the log's reader gives it, aliases counted); a request's data is laid out
// as the approval page lays it out (webkit.Sections: plain members as facts, an object a
// section, a list of records a table), its artifact's data when it has one; every line keeps
// its event's JSON, indented, for whoever needs it exact.
func TestAStoryLinesData(t *testing.T) {
	t.Parallel()
	invoice := fixture(t, "invoice.json")
	question := `{"kind":"clarification","key":"k2","data":{"questions":[{"id":"po","question":"Which purchase order?"}]}}`
	s := storyOf(t, "r1", t0.Add(time.Hour),
		commit("engine", requested(t, "approve", "int_1", invoice, runlog.With{})),
		commit("engine", requested(t, "clarify", "int_2", question, runlog.With{})),
		commit("", event(t, interrupt.EventRunCancelled, "", "", interrupt.Ended{By: "olga"})),
	)
	story := console.RunOf(console.RunParams{Story: s, CSRF: "csrf", Now: t0.Add(time.Hour)}).Story
	if len(story) != 3 {
		t.Fatalf("%d lines, want 3: %+v", len(story), story)
	}
	for _, tt := range []struct {
		name           string
		line           console.Line
		when, anchor   string
		sections       []webkit.Section
		jsonStartsWith string
	}{
		{"an approval's artifact data", story[0], "Mon 30 Nov 2026, 09:00:00 UTC", "seq-1-0", []webkit.Section{
			{Title: "Details", Facts: []webkit.Fact{{Label: "Supplier", Value: "ACME"}, {Label: "Amount", Value: "1,240"}}},
			{Title: "Lines", Table: &webkit.Table{Columns: []string{"Sku", "Qty", "Note"}, Rows: [][]string{{"A-1", "2", ""}, {"B-2", "1", "rush"}}}},
			{Title: "Ship to", Facts: []webkit.Fact{{Label: "City", Value: "Lyon"}, {Label: "Zip", Value: "69001"}}},
		}, "{\n  \"kind\": \"approval\",\n  \"key\": \"k1\","},
		// The alias after the approval's request is index 1 of commit 1; this request is commit 2's first.
		{"a question's data, which is no artifact", story[1], "Mon 30 Nov 2026, 09:01:00 UTC", "seq-2-0", []webkit.Section{
			{Title: "Questions", Table: &webkit.Table{Columns: []string{"Id", "Question"}, Rows: [][]string{{"po", "Which purchase order?"}}}},
		}, "{\n  \"kind\": \"clarification\","},
		{"an end, which has no data", story[2], "Mon 30 Nov 2026, 09:02:00 UTC", "seq-3-0", nil, "{\n  \"by\": \"olga\"\n}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.line.When != tt.when || tt.line.Anchor != tt.anchor {
				t.Errorf("when %q, anchor %q; want %q, %q", tt.line.When, tt.line.Anchor, tt.when, tt.anchor)
			}
			if !reflect.DeepEqual(tt.line.Sections, tt.sections) {
				t.Errorf("sections %+v, want %+v", tt.line.Sections, tt.sections)
			}
			if !strings.HasPrefix(tt.line.JSON, tt.jsonStartsWith) {
				t.Errorf("JSON\n%s\nwant it to start\n%s", tt.line.JSON, tt.jsonStartsWith)
			}
		})
	}
}
