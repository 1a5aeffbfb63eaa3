package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// TestDelegationDecides walks issue 57's story through the host over memory: alice away until
// tomorrow, bob her delegate; bob's vote fills alice's place (onBehalfOf), alice's own then is
// already_voted, carol releases; dave is refused; ended, bob is refused; bob's own delegate
// decides nothing of alice's; a request alice made is not bob's to decide for her.
func TestDelegationDecides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := testclock.New(hosttest.T0)
	h, store := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	book := delegation.Book{Store: store, Now: clock.Now}
	self := func(sub string) interrupt.Principal {
		p := hosttest.Who(sub)
		p.Scopes = []string{interrupt.ScopeApprovalsRespond}
		return p
	}
	if _, err := book.Set(ctx, self("alice"), "alice", delegation.Request{Delegate: "bob", Until: clock.Now().Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	ask := func(run, requester string) string {
		t.Helper()
		view, _, err := h.RequestInterrupt(ctx, hosttest.Who(requester), run, host.Request{NodeID: "gate",
			Payload: approvalWith(`,"approversList":["alice","carol"],"requiredApprovals":2`)})
		if err != nil {
			t.Fatal(err)
		}
		return view.InterruptID
	}
	accept := decision("accept")
	decide := func(run, who string) (host.Resolution, error) {
		return h.Resolve(ctx, hosttest.Who(who), run, "gate", accept, nil)
	}
	id := ask("r1", "engine")
	if _, err := decide("r1", "dave"); interrupt.ErrorCode(err) != interrupt.CodeNotEligible {
		t.Errorf("dave, no delegation: %v, want approver_not_eligible", err)
	}
	if res, err := decide("r1", "bob"); err != nil || res.Status != interrupt.StatusPending {
		t.Fatalf("bob for alice: %+v %v", res, err)
	}
	if _, err := decide("r1", "alice"); interrupt.ErrorCode(err) != interrupt.CodeAlreadyVoted {
		t.Errorf("alice after bob voted for her: %v, want already_voted", err)
	}
	if res, err := decide("r1", "carol"); err != nil || res.Status != interrupt.StatusResolved {
		t.Fatalf("carol releases: %+v %v", res, err)
	}
	o, err := h.InterruptOutcome(ctx, hosttest.Who("engine"), "r1", id)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Votes) != 2 || o.Votes[0].Principal != "bob" || o.Votes[0].OnBehalfOf != "alice" || o.Votes[1].OnBehalfOf != "" {
		t.Errorf("the outcome's votes: %+v, want bob for alice, then carol", o.Votes)
	}

	// bob delegates to dave: dave decides nothing of alice's (no cascade).
	if _, err := book.Set(ctx, self("bob"), "bob", delegation.Request{Delegate: "dave", Until: clock.Now().Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	ask("r2", "engine")
	if _, err := decide("r2", "dave"); interrupt.ErrorCode(err) != interrupt.CodeNotEligible {
		t.Errorf("dave, bob's delegate, on alice's: %v, want approver_not_eligible", err)
	}
	// A request alice made is not bob's to decide for her.
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("alice"), "r3", host.Request{NodeID: "gate", Payload: approvalWith(`,"approversList":["alice","carol"]`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := decide("r3", "bob"); interrupt.ErrorCode(err) != interrupt.CodeNotEligible {
		t.Errorf("bob on alice's own request: %v, want approver_not_eligible", err)
	}
	// Ended: bob decides nothing more for alice.
	if _, err := book.End(ctx, self("alice"), "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := decide("r2", "bob"); interrupt.ErrorCode(err) != interrupt.CodeNotEligible {
		t.Errorf("bob after alice ended it: %v, want approver_not_eligible", err)
	}
}

// TestADelegationsWindow: a delegation decides nothing before its from nor at its until.
func TestADelegationsWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := testclock.New(hosttest.T0)
	h, store := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	from := clock.Now().Add(time.Hour)
	admin := hosttest.Who("ops")
	admin.Scopes = []string{delegation.ScopeManage}
	if _, err := (delegation.Book{Store: store, Now: clock.Now}).Set(ctx, admin, "alice", delegation.Request{Delegate: "bob", From: &from, Until: from.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "gate", Payload: approvalWith(`,"approversList":["alice"]`)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Time
		code interrupt.Code
	}{{hosttest.T0, interrupt.CodeNotEligible}, {from.Add(2 * time.Hour), interrupt.CodeNotEligible}} {
		clock.Set(c.at)
		if _, err := h.Resolve(ctx, hosttest.Who("bob"), "r1", "gate", decision("accept"), nil); interrupt.ErrorCode(err) != c.code {
			t.Errorf("bob at %s: %v, want %s", c.at, err, c.code)
		}
	}
	clock.Set(from)
	if res, err := h.Resolve(ctx, hosttest.Who("bob"), "r1", "gate", decision("accept"), nil); err != nil || res.Status != interrupt.StatusResolved {
		t.Errorf("bob within the window: %+v %v", res, err)
	}
}

// TestAnEscalationThatDelegates: its target decides in the unreached approver's place after
// the escalation, not before; one that only tells hands nothing on.
func TestAnEscalationThatDelegates(t *testing.T) {
	t.Parallel()
	for _, delegate := range []bool{true, false} {
		ctx := context.Background()
		t0 := hosttest.T0
		clock := testclock.New(t0)
		h, _ := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
		req := host.Request{NodeID: "gate", Payload: approvalWith(`,"approversList":["alice","carol"],"requiredApprovals":2`),
			FollowUp: interrupt.FollowUp{Escalation: &interrupt.Escalation{AfterMs: 1000, Delegate: delegate, To: []interrupt.Ref{{Kind: "principal", Ref: "mgr"}}}}}
		view, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", req)
		if err != nil {
			t.Fatal(err)
		}
		mgr := func() error {
			_, err := h.Resolve(ctx, hosttest.Who("mgr"), "r1", "gate", decision("accept"), nil)
			return err
		}
		if _, err := h.Resolve(ctx, hosttest.Who("carol"), "r1", "gate", decision("accept"), nil); err != nil {
			t.Fatal(err)
		}
		if err := mgr(); interrupt.ErrorCode(err) != interrupt.CodeNotEligible {
			t.Errorf("delegate %v: mgr before the escalation: %v, want approver_not_eligible", delegate, err)
		}
		clock.Set(t0.Add(2 * time.Second))
		if _, err := h.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		err = mgr()
		switch {
		case delegate && err != nil:
			t.Errorf("mgr after an escalation that delegates: %v", err)
		case !delegate && interrupt.ErrorCode(err) != interrupt.CodeNotEligible:
			t.Errorf("mgr after an escalation that tells: %v, want approver_not_eligible", err)
		}
		if delegate {
			o, _ := h.InterruptOutcome(ctx, hosttest.Who("engine"), "r1", view.InterruptID)
			if o.Status != interrupt.StatusResolved || len(o.Votes) != 2 || o.Votes[1].OnBehalfOf != "alice" {
				t.Errorf("the outcome: %+v, want resolved with mgr for alice", o)
			}
		}
	}
}

// TestADelegatesInbox: during alice's delegation, bob's inbox lists what waits on alice (by
// name, or through the group she held when she set it), each for alice and voted once her
// place is filled; never what bob requested; nothing of hers before or after the window.
func TestADelegatesInbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := testclock.New(hosttest.T0)
	h, store := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	alice := hosttest.Who("alice")
	alice.Scopes, alice.Groups = []string{interrupt.ScopeApprovalsRespond}, []string{"finance"}
	bob := hosttest.Who("bob")
	from := clock.Now().Add(time.Hour)
	if _, err := (delegation.Book{Store: store, Now: clock.Now}).Set(ctx, alice, "alice", delegation.Request{Delegate: "bob", From: &from, Until: from.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ run, by, data string }{
		{"r1", "engine", `,"approversList":["alice","carol"],"requiredApprovals":2`},
		{"r2", "engine", `,"approverGroupRefs":["finance"]`},
		{"r3", "bob", `,"approversList":["alice"]`},
		{"r4", "engine", `,"approversList":["carol"]`},
	} {
		if _, _, err := h.RequestInterrupt(ctx, hosttest.Who(r.by), r.run, host.Request{NodeID: "n", Payload: approvalWith(r.data)}); err != nil {
			t.Fatal(err)
		}
		hosttest.Reindex(t, h, hosttest.Who("engine"), r.run)
	}
	list := func() []string {
		t.Helper()
		page, err := h.Inbox(ctx, bob, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range page.Items {
			s := it.RunID
			if it.For != nil {
				s += " for " + it.For.Principal
			}
			if it.Voted {
				s += ":v"
			}
			out = append(out, s)
		}
		return out
	}
	if got := list(); len(got) != 0 {
		t.Errorf("before the window: %v", got)
	}
	clock.Set(from)
	if got, want := list(), []string{"r1 for alice", "r2 for alice"}; !slices.Equal(got, want) {
		t.Errorf("within the window: %v, want %v", got, want)
	}
	if _, err := h.Resolve(ctx, bob, "r1", "n", decision("accept"), nil); err != nil {
		t.Fatal(err)
	}
	hosttest.Reindex(t, h, hosttest.Who("engine"), "r1")
	if got, want := list(), []string{"r1 for alice:v", "r2 for alice"}; !slices.Equal(got, want) {
		t.Errorf("after bob voted for alice: %v, want %v", got, want)
	}
	clock.Set(from.Add(25 * time.Hour))
	if got := list(); len(got) != 0 {
		t.Errorf("after the window: %v", got)
	}
}

// TestADelegationsChangesAreTheTenantsEvents: setting and ending a delegation each commit the
// tenant's event (delegation.set, delegation.ended) to the tenant's own log, in order, naming
// who changed it; the log is no run: no API call reads it, and the read models list it nowhere.
func TestADelegationsChangesAreTheTenantsEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := testclock.New(hosttest.T0)
	h, store := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	book := delegation.Book{Store: store, Events: h, Now: clock.Now}
	admin := hosttest.Who("ops")
	admin.Scopes = []string{delegation.ScopeManage}
	if _, err := book.Set(ctx, admin, "alice", delegation.Request{Delegate: "bob", Until: clock.Now().Add(time.Hour), Note: "On leave"}); err != nil {
		t.Fatal(err)
	}
	if _, err := book.End(ctx, admin, "alice"); err != nil {
		t.Fatal(err)
	}
	k := runlog.Key{Tenant: "acme", RunID: runlog.TenantLog}
	commits, err := store.Read(ctx, k, 0, 0)
	if err != nil || len(commits) != 2 {
		t.Fatalf("the tenant's log: %d commits %v", len(commits), err)
	}
	for i, want := range []string{interrupt.EventDelegationSet, interrupt.EventDelegationEnded} {
		c := commits[i]
		var d interrupt.DelegationChanged
		if len(c.Events) != 1 || c.Events[0].Type != want || c.By != "ops" || json.Unmarshal(c.Events[0].Payload, &d) != nil ||
			d.Principal != "alice" || d.Delegate != "bob" || d.By != "ops" || d.Version != int64(i+1) || d.Note != "On leave" {
			t.Errorf("commit %d: %+v", i+1, c)
		}
	}
	if _, err := h.Events(ctx, hosttest.Who("engine"), runlog.TenantLog, 0, 0, ""); interrupt.ErrorCode(err) != interrupt.CodeNotFound {
		t.Errorf("list-events of the tenant's log: %v, want not_found", err)
	}
	if err := h.Reindex(ctx, k, commits...); err != nil {
		t.Fatal(err)
	}
	if page, _, err := h.Runs(ctx, hosttest.Who("engine"), host.RunSearch{}); err != nil || len(page.Runs) != 0 {
		t.Errorf("the runs index after the tenant's log: %+v %v", page, err)
	}
}

// TestAnEscalationDelegatesOnlyNamedPlaces: an escalation that delegates is refused (400, at
// /escalation/delegate) for a request whose deciders a handed place could not satisfy: one a
// group binds too, one that names no approver, one no approval.
func TestAnEscalationDelegatesOnlyNamedPlaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := hosttest.MemHost(t)
	esc := interrupt.FollowUp{Escalation: &interrupt.Escalation{AfterMs: 1000, Delegate: true, To: []interrupt.Ref{{Kind: "principal", Ref: "mgr"}}}}
	for _, c := range []struct {
		name    string
		payload string
		ok      bool
	}{
		{"named principals", string(approvalWith(`,"approversList":["alice"]`)), true},
		{"a group binds too", string(approvalWith(`,"approversList":["alice"],"approverGroupRefs":["finance"]`)), false},
		{"open to anyone", string(approvalWith(``)), false},
		{"a question", `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q","question":"Which?"}]}}`, false},
	} {
		_, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r-"+strings.ReplaceAll(c.name, " ", "-"), host.Request{NodeID: "n", Payload: json.RawMessage(c.payload), FollowUp: esc})
		var ie *interrupt.Error
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.ok && (!errors.As(err, &ie) || len(ie.Fields) != 1 || ie.Fields[0].Path != "/escalation/delegate"):
			t.Errorf("%s: %v, want 400 at /escalation/delegate", c.name, err)
		}
	}
}
