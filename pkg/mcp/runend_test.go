package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/mcp"
)

// ending is one run an agent asks in, and what becomes of it, over the MCP tools.
type ending struct {
	t     *testing.T
	h     *host.Host
	cs    *sdk.ClientSession
	clock *testclock.Clock
	asked mcp.Requested
}

func (e *ending) decide(who, value string) {
	e.t.Helper()
	if _, err := e.h.Resolve(context.Background(), hosttest.Who(who), e.asked.RunID, e.asked.NodeID, json.RawMessage(value), nil); err != nil {
		e.t.Fatal(err)
	}
}

func (e *ending) outcome() mcp.Outcome {
	e.t.Helper()
	var out mcp.Outcome
	if msg := call(e.t, e.cs, "get_outcome", map[string]any{"runId": e.asked.RunID, "interruptId": e.asked.InterruptID}, &out); msg != "" {
		e.t.Fatal(msg)
	}
	return out
}

func (e *ending) sweepAfter(d time.Duration) {
	e.t.Helper()
	e.clock.Advance(d)
	if _, err := e.h.Sweep(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *ending) status() interrupt.RunStatus {
	e.t.Helper()
	snap, err := e.h.Snapshot(context.Background(), hosttest.Who("agent-7"), e.asked.RunID)
	if err != nil {
		e.t.Fatal(err)
	}
	return snap.Status
}

// TestARunTheEndpointMadeCompletes: a run request_approval or ask_question made (no runId) is
// completed by the host, once, in the commit that closes the last of it: a rejection, an expiry,
// an answer, a redemption of an accepted call's receipt, or the sweep once that receipt expired
// unredeemed; an accepted call keeps it running while its receipt may be redeemed. What was
// decided stays readable through get_outcome. A run the agent named is the agent's to end, and
// so is one whose made run it asked in again until that one closes too.
func TestARunTheEndpointMadeCompletes(t *testing.T) {
	t.Parallel()
	const (
		reject = `{"action":"reject","decidedAt":"2026-12-02T09:00:00Z","feedback":"no"}`
		accept = `{"action":"accept","decidedAt":"2026-12-02T09:00:00Z"}`
	)
	approval := map[string]any{"title": "Pay", "approvers": []string{"alice"}}
	with := func(args map[string]any, more map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range args {
			out[k] = v
		}
		for k, v := range more {
			out[k] = v
		}
		return out
	}
	refund := map[string]any{"name": "issue_refund", "arguments": map[string]any{"order": "4471", "amountCents": 124000, "currency": "EUR"}, "receiptTtlMs": 60_000}
	redeem := func(e *ending) {
		e.t.Helper()
		out := e.outcome()
		args, _ := json.Marshal(out.ApprovedCall.Arguments)
		if _, err := hosttest.Tokens(e.h).RedeemReceipt(context.Background(), interrupt.Principal{Subject: "executor", Tenant: "acme"}, out.Receipt, interrupt.ToolCall{Name: out.ApprovedCall.Name, Arguments: args}); err != nil {
			e.t.Fatal(err)
		}
	}
	type step struct {
		name string
		do   func(*ending)
		// ended is whether the run has completed after the step.
		ended bool
	}
	cases := []struct {
		name  string
		tool  string
		args  map[string]any
		steps []step
		// want is get_outcome's status at the end, and check what else it must answer.
		want  string
		check func(mcp.Outcome) bool
	}{
		{
			name: "a rejection", tool: "request_approval", args: approval,
			steps: []step{{"rejected", func(e *ending) { e.decide("alice", reject) }, true}},
			want:  "resolved", check: func(o mcp.Outcome) bool { return o.Action == "reject" && o.DecidedBy == "alice" && o.Feedback == "no" },
		},
		{
			name: "an expiry", tool: "request_approval", args: with(approval, map[string]any{"timeoutMs": 60_000}),
			steps: []step{
				{"past its deadline, not swept", func(e *ending) { e.clock.Advance(2 * time.Minute) }, false},
				{"swept", func(e *ending) { e.sweepAfter(host.SweepGrace) }, true},
			},
			want: "expired", check: func(o mcp.Outcome) bool { return o.Action == "" },
		},
		{
			name: "a question answered", tool: "ask_question", args: map[string]any{"questions": []map[string]any{{"id": "po", "question": "Which purchase order?"}}},
			steps: []step{{"answered on the page", func(e *ending) {
				if _, err := e.h.ResolveInterrupt(context.Background(), hosttest.Who("carol"), e.asked.RunID, e.asked.InterruptID, []byte(`{"answers":{"po":"PO-7"}}`), nil); err != nil {
					e.t.Fatal(err)
				}
			}, true}},
			want: "resolved", check: func(o mcp.Outcome) bool { return o.Answers["po"] == "PO-7" && o.AnsweredBy == "carol" },
		},
		{
			name: "an accepted call, redeemed", tool: "request_approval", args: with(approval, map[string]any{"toolCall": refund}),
			steps: []step{
				{"accepted", func(e *ending) { e.decide("alice", accept) }, false},
				{"redeemed", redeem, true},
			},
			want: "resolved", check: func(o mcp.Outcome) bool {
				return o.Action == "accept" && o.ApprovedCall != nil && o.Receipt != "" && o.Redeemed != nil && o.Redeemed.By == "executor"
			},
		},
		{
			name: "an accepted call whose receipt expired", tool: "request_approval", args: with(approval, map[string]any{"toolCall": refund}),
			steps: []step{
				{"accepted", func(e *ending) { e.decide("alice", accept) }, false},
				{"swept while the receipt redeems", func(e *ending) { e.sweepAfter(59 * time.Second) }, false},
				{"swept once it expired", func(e *ending) { e.sweepAfter(2 * time.Second) }, true},
			},
			want: "resolved", check: func(o mcp.Outcome) bool {
				return o.Action == "accept" && o.ApprovedCall != nil && o.Receipt != "" && o.Redeemed == nil
			},
		},
		{
			name: "a rejected call", tool: "request_approval", args: with(approval, map[string]any{"toolCall": refund}),
			steps: []step{{"rejected", func(e *ending) { e.decide("alice", reject) }, true}},
			want:  "resolved", check: func(o mcp.Outcome) bool { return o.Action == "reject" && o.ApprovedCall == nil && o.Receipt == "" },
		},
		{
			name: "a run the agent named", tool: "request_approval", args: with(approval, map[string]any{"runId": "agents-own", "key": "pay"}),
			steps: []step{{"rejected", func(e *ending) { e.decide("alice", reject) }, false}},
			want:  "resolved", check: func(o mcp.Outcome) bool { return o.Action == "reject" },
		},
		{
			name: "a made run the agent asked in again", tool: "request_approval", args: approval,
			steps: []step{
				{"asked again in it, then the first rejected", func(e *ending) {
					var more mcp.Requested
					args := map[string]any{"questions": []map[string]any{{"id": "q", "question": "Why?"}}, "runId": e.asked.RunID, "key": "why"}
					if msg := call(e.t, e.cs, "ask_question", args, &more); msg != "" || !more.Created {
						e.t.Fatalf("%+v %q", more, msg)
					}
					e.decide("alice", reject)
					e.asked = more
				}, false},
				{"the second answered", func(e *ending) { e.decide("carol", `{"answers":{"q":"budget"}}`) }, true},
			},
			want: "resolved", check: func(o mcp.Outcome) bool { return o.Answers["q"] == "budget" },
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clock := testclock.New(hosttest.T0)
			h, _, url := serve(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
			e := &ending{t: t, h: h, cs: connect(t, url, engine), clock: clock}
			if msg := call(t, e.cs, c.tool, c.args, &e.asked); msg != "" || !e.asked.Created {
				t.Fatalf("%+v %q", e.asked, msg)
			}
			run := e.asked.RunID
			for _, s := range c.steps {
				s.do(e)
				if got := e.status(); (got == interrupt.RunCompleted) != s.ended {
					t.Fatalf("after %s the run is %s, want ended %v", s.name, got, s.ended)
				}
			}
			ended := c.steps[len(c.steps)-1].ended
			page, err := h.Events(context.Background(), hosttest.Who("agent-7"), run, 0, 0, interrupt.ModeDebug)
			if err != nil {
				t.Fatal(err)
			}
			var completed []string
			for _, ev := range page.Events {
				if ev.Type == interrupt.EventRunCompleted || ev.Type == interrupt.EventRunCancelled {
					completed = append(completed, string(ev.Payload))
				}
			}
			switch {
			case !ended && len(completed) > 0:
				t.Errorf("a run the host does not end ended: %v", completed)
			case ended && (len(completed) != 1 || !strings.Contains(completed[0], `"by":"host"`)):
				t.Errorf("the run's ends: %v, want one run.completed by the host", completed)
			}
			if out := e.outcome(); out.Status != c.want || !c.check(out) {
				t.Errorf("get_outcome answered %+v, want %s", out, c.want)
			}
		})
	}
}
