// Package storetest holds every delegation.Store to one behaviour: each store's own tests run
// Exercise (pkg/inmem's and pkg/dynamo's), so the in-memory store the fast tests use answers as
// DynamoDB does.
package storetest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Exercise runs the contract on stores open makes, an empty one each call.
func Exercise(t *testing.T, open func(t *testing.T) delegation.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	to := func(principal, delegate string, version int64) delegation.Delegation {
		return delegation.Delegation{Tenant: "acme", Principal: principal, Delegate: delegate, From: t0, Until: t0.Add(7 * 24 * time.Hour),
			Kinds: []interrupt.Kind{interrupt.KindApproval}, Groups: []string{"finance"}, SetBy: principal, SetAt: t0, Version: version,
			Changes: []delegation.Change{{At: t0, By: principal, What: "set", Delegate: delegate, Until: t0.Add(7 * 24 * time.Hour)}}}
	}
	principals := func(ds []delegation.Delegation) []string {
		out := []string{}
		for _, d := range ds {
			out = append(out, d.Principal+">"+d.Delegate)
		}
		return out
	}
	t.Run("a delegation reads back whole, and its delegate's read finds it", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		if _, err := st.Delegation(ctx, "acme", "alice"); !errors.Is(err, delegation.ErrNotFound) {
			t.Fatalf("none: %v, want delegation.ErrNotFound", err)
		}
		d := to("alice", "bob", 1)
		if err := st.PutDelegation(ctx, d, delegation.Delegation{}); err != nil {
			t.Fatal(err)
		}
		if got, err := st.Delegation(ctx, "acme", "alice"); err != nil || !reflect.DeepEqual(got, d) {
			t.Errorf("read back: %+v %v\nwant %+v", got, err, d)
		}
		if got, err := st.HeldBy(ctx, "acme", "bob"); err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], d) {
			t.Errorf("bob holds %+v %v, want alice's", got, err)
		}
		if got, err := st.HeldBy(ctx, "other", "bob"); err != nil || len(got) != 0 {
			t.Errorf("another tenant's bob holds %+v %v, want none", got, err)
		}
	})
	t.Run("a new delegate: the former holds nothing", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		first := to("alice", "bob", 1)
		if err := st.PutDelegation(ctx, first, delegation.Delegation{}); err != nil {
			t.Fatal(err)
		}
		if err := st.PutDelegation(ctx, to("dave", "bob", 1), delegation.Delegation{}); err != nil {
			t.Fatal(err)
		}
		if err := st.PutDelegation(ctx, to("alice", "carol", 2), first); err != nil {
			t.Fatal(err)
		}
		if got, err := st.HeldBy(ctx, "acme", "bob"); err != nil || !reflect.DeepEqual(principals(got), []string{"dave>bob"}) {
			t.Errorf("bob holds %v %v, want dave's alone", principals(got), err)
		}
		if got, err := st.HeldBy(ctx, "acme", "carol"); err != nil || !reflect.DeepEqual(principals(got), []string{"alice>carol"}) {
			t.Errorf("carol holds %v %v, want alice's", principals(got), err)
		}
		if got, err := st.Delegations(ctx, "acme"); err != nil || !reflect.DeepEqual(principals(got), []string{"alice>carol", "dave>bob"}) {
			t.Errorf("the tenant's: %v %v", principals(got), err)
		}
	})
	t.Run("a write from a stale read is ErrConflict and changes nothing", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		first := to("alice", "bob", 1)
		if err := st.PutDelegation(ctx, first, delegation.Delegation{}); err != nil {
			t.Fatal(err)
		}
		if err := st.PutDelegation(ctx, to("alice", "mallory", 1), delegation.Delegation{}); !errors.Is(err, delegation.ErrConflict) {
			t.Errorf("a second first version: %v, want ErrConflict", err)
		}
		if err := st.PutDelegation(ctx, to("alice", "mallory", 3), first); !errors.Is(err, delegation.ErrConflict) {
			t.Errorf("a version skipped: %v, want ErrConflict", err)
		}
		if got, _ := st.Delegation(ctx, "acme", "alice"); got.Delegate != "bob" {
			t.Errorf("after the refused writes: %+v", got)
		}
		if got, _ := st.HeldBy(ctx, "acme", "mallory"); len(got) != 0 {
			t.Errorf("mallory holds %v", principals(got))
		}
	})
	t.Run("of two concurrent changes from one read, one lands", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		first := to("alice", "bob", 1)
		if err := st.PutDelegation(ctx, first, delegation.Delegation{}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, who := range []string{"carol", "dave"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = st.PutDelegation(ctx, to("alice", who, 2), first)
			}()
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("both or neither landed: %v", errs)
		}
		got, _ := st.Delegation(ctx, "acme", "alice")
		held, _ := st.HeldBy(ctx, "acme", got.Delegate)
		if len(held) != 1 {
			t.Errorf("the winner %s holds %v", got.Delegate, principals(held))
		}
	})
	t.Run("an ended delegation is kept, and read", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		first := to("alice", "bob", 1)
		if err := st.PutDelegation(ctx, first, delegation.Delegation{}); err != nil {
			t.Fatal(err)
		}
		ended := first
		ended.Version, ended.EndedBy, ended.EndedAt = 2, "alice", t0.Add(time.Hour)
		if err := st.PutDelegation(ctx, ended, first); err != nil {
			t.Fatal(err)
		}
		if got, err := st.Delegation(ctx, "acme", "alice"); err != nil || !got.EndedAt.Equal(ended.EndedAt) || got.EndedBy != "alice" {
			t.Errorf("the ended delegation: %+v %v", got, err)
		}
		if got, err := st.HeldBy(ctx, "acme", "bob"); err != nil || len(got) != 0 {
			t.Errorf("bob holds %v %v after it ended", principals(got), err)
		}
	})
	t.Run("a tenant that is no id", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		if _, err := st.HeldBy(ctx, "a b", "bob"); !errors.Is(err, runlog.ErrInvalidKey) {
			t.Errorf("%v, want runlog.ErrInvalidKey", err)
		}
	})
}
