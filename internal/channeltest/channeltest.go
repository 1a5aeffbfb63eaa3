// Package channeltest holds every chat channel to the decider model: the same table of who may
// decide what, driven through each channel's own proof (its message's buttons, its signed
// clicks), as the store suites hold every store to one behaviour. A channel's package runs
// Exercise with a Harness that clicks as its service would.
package channeltest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// World is what a harness is built over: a host over memory, its store (the log, contacts and
// the channels' app registrations), its clock, and the tenant every case is of.
type World struct {
	Host   *host.Host
	Store  *inmem.Store
	Clock  *testclock.Clock
	Tenant string
}

// A Harness drives one channel as its service would.
type Harness interface {
	// Enrol registers the tenant's app with the channel and gives each person a chat account
	// that their contact names; a person not enrolled clicks from an account no contact names.
	Enrol(t *testing.T, people ...string)
	// Offers reports whether the channel's message of the interrupt's request (the commit that
	// holds it, and the event) offers a decision.
	Offers(t *testing.T, c runlog.Commit, e runlog.Envelope) bool
	// Click clicks action on the interrupt from person's account, as the service would send
	// it, signed, and reports whether the channel recorded it.
	Click(t *testing.T, person, runID, interruptID string, action interrupt.Action) bool
}

// click is one click of a case, and whether it must be recorded.
type click struct {
	person   string
	action   interrupt.Action
	recorded bool
}

// Exercise runs the decider table through the channel newHarness builds over a world: what a
// message offers, and which clicks count, for named approvers and a quorum, a group-bound and
// an open approval, the requester's own request, an override principal (a click never
// overrides), a delegate's click in an approver's place, and a request past its deadline. After each case the interrupt's status and
// decider are what the recorded clicks alone make them.
func Exercise(t *testing.T, newHarness func(t *testing.T, w World) Harness) {
	approval := func(data string) string {
		return `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept","reject"]` + data + `}}`
	}
	for _, c := range []struct {
		name      string
		payload   string
		requester string
		offers    bool
		expire    bool
		// away are delegations in force, delegator to delegate, set before the clicks.
		away      map[string]string
		clicks    []click
		status    interrupt.Status
		decidedBy string
	}{
		{name: "named approvers, two of two", payload: approval(`,"approversList":["alice","bob"],"requiredApprovals":2`), offers: true,
			clicks: []click{{"alice", interrupt.ActionAccept, true}, {"alice", interrupt.ActionAccept, false}, {"carol", interrupt.ActionAccept, false},
				{"mallory", interrupt.ActionAccept, false}, {"bob", interrupt.ActionAccept, true}, {"carol", interrupt.ActionReject, false}},
			status: interrupt.StatusResolved, decidedBy: "bob"},
		{name: "a rejection closes it", payload: approval(`,"approversList":["alice","bob"]`), offers: true,
			clicks: []click{{"bob", interrupt.ActionReject, true}, {"alice", interrupt.ActionAccept, false}},
			status: interrupt.StatusResolved, decidedBy: "bob"},
		{name: "bound by a group: a chat account proves no membership", payload: approval(`,"approversList":["alice"],"approverGroupRefs":["finance"]`),
			clicks: []click{{"alice", interrupt.ActionAccept, false}}, status: interrupt.StatusPending},
		{name: "open to anyone: a click is no one in particular", payload: approval(``),
			clicks: []click{{"alice", interrupt.ActionAccept, false}}, status: interrupt.StatusPending},
		{name: "the requester never decides", payload: approval(`,"approversList":["alice","bob"]`), requester: "alice", offers: true,
			clicks: []click{{"alice", interrupt.ActionAccept, false}, {"bob", interrupt.ActionAccept, true}},
			status: interrupt.StatusResolved, decidedBy: "bob"},
		{name: "an override principal's click is one vote", payload: approval(`,"approversList":["boss","alice","bob"],"requiredApprovals":2,"overrideBypassesQuorum":true`), offers: true,
			clicks: []click{{"boss", interrupt.ActionAccept, true}, {"alice", interrupt.ActionAccept, true}},
			status: interrupt.StatusResolved, decidedBy: "alice"},
		{name: "a delegate's click fills the delegator's place", payload: approval(`,"approversList":["alice","carol"],"requiredApprovals":2`), offers: true,
			away:   map[string]string{"alice": "bob"},
			clicks: []click{{"bob", interrupt.ActionAccept, true}, {"alice", interrupt.ActionAccept, false}, {"bob", interrupt.ActionAccept, false}, {"carol", interrupt.ActionAccept, true}},
			status: interrupt.StatusResolved, decidedBy: "carol"},
		{name: "past its deadline", payload: strings.Replace(approval(`,"approversList":["alice"]`), `"timeoutMs":3600000`, `"timeoutMs":1000`, 1), offers: true, expire: true,
			clicks: []click{{"alice", interrupt.ActionAccept, false}}, status: interrupt.StatusExpired},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			// The present, as a service's signature is checked against it (Slack's library reads
			// the machine's clock); a deadline passes by a second's advance.
			clock := testclock.New(time.Now().UTC())
			h, store := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
			w := World{Host: h, Store: store, Clock: clock, Tenant: "acme"}
			ch := newHarness(t, w)
			ch.Enrol(t, "alice", "bob", "carol", "boss")
			requester := interrupt.Principal{Subject: "engine", Tenant: w.Tenant}
			if c.requester != "" {
				requester.Subject = c.requester
			}
			view, _, err := h.RequestInterrupt(ctx, requester, "run-1", host.Request{NodeID: "approve", Payload: json.RawMessage(c.payload)})
			if err != nil {
				t.Fatal(err)
			}
			commits, err := store.Read(ctx, runlog.Key{Tenant: w.Tenant, RunID: "run-1"}, 0, 0)
			if err != nil || len(commits) != 1 {
				t.Fatalf("the request's commit: %d %v", len(commits), err)
			}
			requested := eventOf(t, commits[0], interrupt.EventRequested)
			e := runlog.Envelope{Seq: 1, Type: requested.Type, RunID: "run-1", NodeID: requested.NodeID, InterruptID: requested.InterruptID,
				At: commits[0].At.Format(runlog.TimeFormat), Payload: requested.Payload}
			if got := ch.Offers(t, commits[0], e); got != c.offers {
				t.Errorf("the request's message offers a decision: %v, want %v", got, c.offers)
			}
			if c.expire {
				clock.Advance(2 * time.Second)
			}
			for delegator, delegate := range c.away {
				d := delegation.Delegation{Tenant: w.Tenant, Principal: delegator, Delegate: delegate, From: clock.Now().Add(-time.Minute), Until: clock.Now().Add(time.Hour), Version: 1}
				if err := store.PutDelegation(ctx, d, delegation.Delegation{}); err != nil {
					t.Fatal(err)
				}
			}
			for i, k := range c.clicks {
				if got := ch.Click(t, k.person, "run-1", view.InterruptID, k.action); got != k.recorded {
					t.Errorf("click %d, %s's %s: recorded %v, want %v", i, k.person, k.action, got, k.recorded)
				}
			}
			o, _ := h.OpenAs(ctx, interrupt.Principal{Tenant: w.Tenant}, "run-1", view.InterruptID)
			if o.Status != c.status || o.DecidedBy != c.decidedBy {
				t.Errorf("the interrupt is %s, decided by %q; want %s by %q", o.Status, o.DecidedBy, c.status, c.decidedBy)
			}
		})
	}
}

// eventOf is the commit's event of type typ.
func eventOf(t *testing.T, c runlog.Commit, typ string) runlog.Event {
	t.Helper()
	for _, e := range c.Events {
		if e.Type == typ {
			return e
		}
	}
	t.Fatalf("no %s in commit %d", typ, c.Seq)
	return runlog.Event{}
}
