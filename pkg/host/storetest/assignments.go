package storetest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// assignmentsContract: an inbox lists its entries in place order (nearest deadline, none last,
// then oldest request) after a place, each tenant's and inbox's apart; a write of an earlier
// commit of the same run never replaces a later one, another run's (a reused id's) always does;
// a removal takes only an entry of its commit or an earlier one, or another run's; what it keeps
// reads back as it was written.
func assignmentsContract(t *testing.T, open func(*testing.T) host.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 123456000, time.UTC)
	tally := interrupt.Tally{Approvals: 1, Required: 2}
	entry := func(tenant, ref, run, id string, seq int64, deadline time.Time, requested int) runlog.Assignment {
		return runlog.Assignment{
			Key: runlog.Key{Tenant: tenant, RunID: run}, Seq: seq, Origin: "first-run", Ref: ref, Voters: []string{"bob"},
			Alone: true,
			Summary: runlog.Summary{NodeID: "n-" + id, InterruptID: id, Key: "k-" + id, Kind: interrupt.KindApproval, Title: "Invoice ✓", Seq: 1,
				RequestedAt: t0.Add(time.Duration(requested) * time.Second), Deadline: deadline, Tally: &tally, RequestedBy: "engine"},
		}
	}
	alice := interrupt.Ref{Kind: interrupt.RefPrincipal, Ref: "alice"}.Inbox()
	soon, later := t0.Add(time.Hour), t0.Add(2*time.Hour)
	st := open(t)
	late := entry("acme", alice, "r1", "int_c", 5, time.Time{}, 1)   // no deadline: last
	first := entry("acme", alice, "r2", "int_a", 3, soon, 9)         // nearest deadline
	second := entry("acme", alice, "r1", "int_b", 5, later, 2)       // then a later one
	sameDeadline := entry("acme", alice, "r3", "int_d", 2, later, 3) // same deadline, requested after
	finance := entry("acme", interrupt.Ref{Kind: interrupt.RefGroup, Ref: "finance"}.Inbox(), "r1", "int_b", 5, later, 2)
	evilcorp := entry("evilcorp", alice, "r1", "int_b", 5, later, 2)
	for _, a := range []runlog.Assignment{late, first, second, sameDeadline, finance, evilcorp} {
		if err := st.FileAssignment(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	older := first
	older.Seq, older.Voters = 2, nil // a record read late does not move it back
	if err := st.FileAssignment(ctx, older); err != nil {
		t.Fatal(err)
	}
	list := func(tenant, ref, after string, limit int) []runlog.Assignment {
		t.Helper()
		got, err := st.Assigned(ctx, tenant, ref, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := []runlog.Assignment{first, second, sameDeadline, late}
	if got := list("acme", alice, "", 10); !reflect.DeepEqual(got, want) {
		t.Fatalf("alice's inbox:\n%+v\nwant\n%+v", got, want)
	}
	if got := list("acme", alice, first.Place(), 2); !reflect.DeepEqual(got, want[1:3]) {
		t.Errorf("a page after the first: %+v", got)
	}
	if got := list("acme", interrupt.Ref{Kind: interrupt.RefGroup, Ref: "finance"}.Inbox(), "", 10); !reflect.DeepEqual(got, []runlog.Assignment{finance}) {
		t.Errorf("finance's inbox: %+v", got)
	}
	if got := list("evilcorp", alice, "", 10); !reflect.DeepEqual(got, []runlog.Assignment{evilcorp}) {
		t.Errorf("the other tenant's alice: %+v", got)
	}
	if got := list("acme", interrupt.Anyone, "", 10); len(got) != 0 {
		t.Errorf("an inbox with nothing filed: %+v", got)
	}
	// A removal as of an earlier commit keeps the entry; as of its own or a later one, or of
	// another run of the id, takes it.
	for _, a := range []runlog.Assignment{
		func() runlog.Assignment { a := late; a.Seq = 4; return a }(), // earlier: it stays
		second, // its own commit: it goes
		func() runlog.Assignment { a := sameDeadline; a.Seq, a.Origin = 1, "second-run"; return a }(), // another run: it goes
	} {
		if err := st.UnfileAssignment(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if got := list("acme", alice, "", 10); !reflect.DeepEqual(got, []runlog.Assignment{first, late}) {
		t.Errorf("after the removals: %+v", got)
	}
	if err := st.UnfileAssignment(ctx, second); err != nil {
		t.Errorf("removing what is gone: %v", err)
	}
	reused := late
	reused.Seq, reused.Origin = 1, "second-run"
	if err := st.FileAssignment(ctx, reused); err != nil {
		t.Fatal(err)
	}
	if got := list("acme", alice, "", 10); !reflect.DeepEqual(got, []runlog.Assignment{first, reused}) {
		t.Errorf("a reused id's entry over the old run's: %+v", got)
	}
	long := entry("acme", interrupt.Ref{Kind: interrupt.RefGroup, Ref: strings.Repeat("g", 2000)}.Inbox(), "r1", "int_e", 1, soon, 1)
	if err := st.FileAssignment(ctx, long); err != nil {
		t.Fatal(err)
	}
	if got := list("acme", long.Ref, "", 10); !reflect.DeepEqual(got, []runlog.Assignment{long}) {
		t.Errorf("the inbox of a long ref: %+v", got)
	}
	bad := first
	bad.Key.RunID = "a#b"
	if err := st.FileAssignment(ctx, bad); !errors.Is(err, runlog.ErrInvalidKey) {
		t.Errorf("a run id that is no key: %v", err)
	}
	if _, err := st.Assigned(ctx, "a#b", alice, "", 10); !errors.Is(err, runlog.ErrInvalidKey) {
		t.Errorf("a tenant that is no id: %v", err)
	}
}
