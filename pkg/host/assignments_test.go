package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// inboxOf lists every page of p's inbox, as "run:voted" (voted "v") in page order.
func inboxOf(t *testing.T, h *host.Host, p interrupt.Principal, limit int) (got []string, pages int) {
	t.Helper()
	after := ""
	for {
		page, err := h.Inbox(context.Background(), p, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, it := range page.Items {
			s := it.RunID
			if it.Voted {
				s += ":v"
			}
			got = append(got, s)
		}
		if page.Next == "" {
			return got, pages
		}
		after = page.Next
	}
}

// TestInboxListsWhatEachMayDecide: each caller's inbox holds the interrupts a resolve would let
// it decide (its principal, groups and roles, every eligibility field that binds; a question's
// audience; what anyone may decide), never its own requests nor another tenant's, nearest
// deadline first; a vote marks it voted and it stays until the interrupt closes; an entry its
// log went past is answered from the log and repaired.
func TestInboxListsWhatEachMayDecide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, l := hosttest.MemHost(t)
	var (
		alice = interrupt.Principal{Subject: "alice", Tenant: "acme", Groups: []string{"finance"}}
		bob   = interrupt.Principal{Subject: "bob", Tenant: "acme"}
		carol = interrupt.Principal{Subject: "carol", Tenant: "acme", Roles: []string{"manager"}}
		dave  = interrupt.Principal{Subject: "dave", Tenant: "acme"}
		other = interrupt.Principal{Subject: "alice", Tenant: "other", Groups: []string{"finance"}}
	)
	requests := []struct {
		run, payload string
		display      *interrupt.Display
	}{
		{"r1", `{"kind":"approval","key":"k","timeoutMs":7200000,"data":{"artifactId":"a","artifactType":"t","title":"Both","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`, nil},
		{"r2", `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"a","artifactType":"t","title":"Finance","actions":["accept"],"approverGroupRefs":["finance"]}}`, nil},
		{"r3", string(approvalWith(`,"approverRoleRefs":["manager"]`)), nil},
		{"r4", string(approvalWith(``)), nil},
		{"r5", `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q","question":"Which?"}]}}`, &interrupt.Display{Audience: []string{"carol"}}},
		{"r6", `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q","question":"Anyone?"}]}}`, nil},
		{"r7", string(approvalWith(`,"approversList":["alice"],"approverGroupRefs":["ops"]`)), nil},
		{"r8", `{"kind":"external-event","key":"k","data":{"eventType":"payment_intent.succeeded","correlation":"pi_1"}}`, nil},
	}
	for _, r := range requests {
		if _, _, err := h.RequestInterrupt(ctx, engine, r.run, host.Request{NodeID: "n", Payload: json.RawMessage(r.payload), Display: r.display}); err != nil {
			t.Fatalf("%s: %v", r.run, err)
		}
		hosttest.Reindex(t, h, engine, r.run)
	}
	if _, _, err := h.RequestInterrupt(ctx, other, "r1", host.Request{NodeID: "n", Payload: approvalWith(`,"approverGroupRefs":["finance"]`)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who  interrupt.Principal
		want []string
	}{
		{alice, []string{"r2", "r1", "r4", "r6"}}, // r7 needs ops too; r3 a manager; r5 is carol's
		{bob, []string{"r1", "r4", "r6"}},
		{carol, []string{"r3", "r4", "r5", "r6"}},
		{dave, []string{"r4", "r6"}},
		{engine, nil}, // it requested them all
		{other, nil},  // its run is not indexed yet: another tenant's are never listed
	} {
		if got, _ := inboxOf(t, h, c.who, 0); !slices.Equal(got, c.want) {
			t.Errorf("%s/%s's inbox: %v, want %v", c.who.Tenant, c.who.Subject, got, c.want)
		}
	}
	// Whom each waits on, as the pending list tells an operator.
	for run, want := range map[string][]string{"r1": {"principal:alice", "principal:bob"}, "r2": {"group:finance"}, "r5": {"principal:carol"}, "r6": {interrupt.Anyone}, "r8": nil} {
		page, err := h.PendingInRun(ctx, engine, run)
		if err != nil || len(page.Interrupts) != 1 || !slices.Equal(page.Interrupts[0].WaitingOn, want) {
			t.Errorf("%s waits on %+v %v, want %v", run, page.Interrupts, err, want)
		}
	}
	if got, pages := inboxOf(t, h, alice, 1); !slices.Equal(got, []string{"r2", "r1", "r4", "r6"}) || pages < 4 {
		t.Errorf("alice's inbox a page of one at a time: %v in %d pages", got, pages)
	}

	// alice votes on the quorum of two: it stays, voted, with the tally.
	if _, err := h.Resolve(ctx, alice, "r1", "n", decision("accept"), nil); err != nil {
		t.Fatal(err)
	}
	hosttest.Reindex(t, h, engine, "r1")
	page, err := h.Inbox(ctx, alice, "", 0)
	if err != nil || len(page.Items) < 2 || page.Items[1].RunID != "r1" || !page.Items[1].Voted || page.Items[1].Tally == nil || page.Items[1].Tally.Approvals != 1 {
		t.Fatalf("alice's inbox after her vote: %+v %v", page, err)
	}
	if got, _ := inboxOf(t, h, bob, 0); !slices.Equal(got, []string{"r1", "r4", "r6"}) {
		t.Errorf("bob's inbox after alice's vote: %v", got)
	}
	// bob's vote closes it; before the stream's consumer takes the commit, the inbox reads the
	// log past the entry, leaves it out, and removes it.
	if _, err := h.Resolve(ctx, bob, "r1", "n", decision("accept"), nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := inboxOf(t, h, alice, 0); !slices.Equal(got, []string{"r2", "r4", "r6"}) {
		t.Errorf("alice's inbox once r1 closed, not reindexed: %v", got)
	}
	left, err := l.Assigned(ctx, "acme", interrupt.Ref{Kind: interrupt.RefPrincipal, Ref: "alice"}.Inbox(), "", 10)
	if err != nil || len(left) != 1 || left[0].Key.RunID != "r7" { // r7's, which the ops group keeps from her
		t.Errorf("alice's entries after the repair: %+v %v", left, err)
	}
	// A put of an older read landing after the removal (a late writer) leaves an entry behind:
	// the reader that meets it finds its log gone past it and removes it.
	late := runlog.Assignment{Key: runlog.Key{Tenant: "acme", RunID: "r1"}, Seq: 1, Origin: origin(t, l, "r1"), Ref: interrupt.Ref{Kind: interrupt.RefPrincipal, Ref: "alice"}.Inbox(),
		Summary: runlog.Summary{NodeID: "n", InterruptID: page.Items[1].InterruptID, Kind: interrupt.KindApproval, RequestedAt: hosttest.T0, Deadline: hosttest.T0.Add(2 * time.Hour)}}
	if err := l.FileAssignment(ctx, late); err != nil {
		t.Fatal(err)
	}
	twice := alice
	twice.Groups = []string{"finance", "finance", "", "finance"} // a claim repeated: read once each
	if got, _ := inboxOf(t, h, twice, 0); !slices.Equal(got, []string{"r2", "r4", "r6"}) {
		t.Errorf("alice's inbox with a late entry of the closed r1: %v", got)
	}
	if left, err := l.Assigned(ctx, "acme", late.Ref, "", 10); err != nil || len(left) != 1 || left[0].Key.RunID != "r7" {
		t.Errorf("alice's entries after the reader met the late one: %+v %v", left, err)
	}
	// An entry its inbox alone does not decide, of a run that does not exist (gone past its
	// retention): the reader reads the run to judge it, finds none, and removes it.
	ghost := late
	ghost.Key.RunID, ghost.Alone = "ghost", false
	if err := l.FileAssignment(ctx, ghost); err != nil {
		t.Fatal(err)
	}
	if got, _ := inboxOf(t, h, alice, 0); !slices.Equal(got, []string{"r2", "r4", "r6"}) {
		t.Errorf("alice's inbox with an entry of no run: %v", got)
	}
	if left, err := l.Assigned(ctx, "acme", ghost.Ref, "", 10); err != nil || len(left) != 1 || left[0].Key.RunID != "r7" {
		t.Errorf("alice's entries after the reader met one of no run: %+v %v", left, err)
	}
	// A question answered leaves everyone's inbox once reindexed.
	if _, err := h.Resolve(ctx, dave, "r6", "n", json.RawMessage(`{"answers":{"q":"yes"}}`), nil); err != nil {
		t.Fatal(err)
	}
	hosttest.Reindex(t, h, engine, "r6")
	if got, _ := inboxOf(t, h, carol, 0); !slices.Equal(got, []string{"r3", "r4", "r5"}) {
		t.Errorf("carol's inbox once r6 was answered: %v", got)
	}
	anyone, err := l.Assigned(ctx, "acme", interrupt.Anyone, "", 10)
	if err != nil || len(anyone) != 1 || anyone[0].Key.RunID != "r4" {
		t.Errorf("the inbox of anyone after r6 closed: %+v %v", anyone, err)
	}
}

// origin is run's origin in the tenant acme: its log's first commit's id.
func origin(t *testing.T, l host.Runs, run string) string {
	t.Helper()
	commits, err := l.Read(context.Background(), runlog.Key{Tenant: "acme", RunID: run}, 0, 1)
	if err != nil || len(commits) == 0 {
		t.Fatalf("run %s's first commit: %v", run, err)
	}
	return commits[0].ID
}
