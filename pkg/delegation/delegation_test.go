package delegation_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

var now = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)

func who(sub string, scopes ...string) interrupt.Principal {
	return interrupt.Principal{Subject: sub, Tenant: "acme", Scopes: scopes, Groups: []string{"finance"}}
}

// TestWhoSetsWhat: a principal sets their own delegation (recording their memberships), an
// administrator anyone's (recording none), no one else; the rules of a delegation are 400s
// that change nothing.
func TestWhoSetsWhat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	alice, admin := who("alice", interrupt.ScopeApprovalsRespond), who("ops", delegation.ScopeManage)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	for _, c := range []struct {
		name      string
		caller    interrupt.Principal
		principal string
		req       delegation.Request
		code      interrupt.Code
		groups    int
	}{
		{"alice sets her own", alice, "alice", delegation.Request{Delegate: "bob", Until: now.Add(24 * time.Hour)}, "", 1},
		{"an administrator sets alice's", admin, "alice", delegation.Request{Delegate: "bob", Until: now.Add(24 * time.Hour)}, "", 0},
		{"an administrator makes themself alice's delegate", admin, "alice", delegation.Request{Delegate: "ops", Until: now.Add(time.Hour)}, interrupt.CodeValidation, 0},
		{"bob sets alice's", who("bob", interrupt.ScopeApprovalsRespond), "alice", delegation.Request{Delegate: "bob", Until: now.Add(time.Hour)}, interrupt.CodeForbidden, 0},
		{"alice without approvals:respond", who("alice"), "alice", delegation.Request{Delegate: "bob", Until: now.Add(time.Hour)}, interrupt.CodeForbidden, 0},
		{"to herself", alice, "alice", delegation.Request{Delegate: "alice", Until: now.Add(time.Hour)}, interrupt.CodeValidation, 0},
		{"no until", alice, "alice", delegation.Request{Delegate: "bob"}, interrupt.CodeValidation, 0},
		{"a window past", alice, "alice", delegation.Request{Delegate: "bob", From: at(-2 * time.Hour), Until: now.Add(-time.Hour)}, interrupt.CodeValidation, 0},
		{"longer than 90 days", alice, "alice", delegation.Request{Delegate: "bob", Until: now.Add(91 * 24 * time.Hour)}, interrupt.CodeValidation, 0},
		{"until before from", alice, "alice", delegation.Request{Delegate: "bob", From: at(2 * time.Hour), Until: now.Add(time.Hour)}, interrupt.CodeValidation, 0},
		{"a kind no one is asked", alice, "alice", delegation.Request{Delegate: "bob", Until: now.Add(time.Hour), Kinds: []interrupt.Kind{interrupt.KindCustom}}, interrupt.CodeValidation, 0},
		{"to carol, away at the same time", alice, "alice", delegation.Request{Delegate: "carol", Until: now.Add(time.Hour)}, interrupt.CodeValidation, 0},
		{"to carol, after she is back", alice, "alice", delegation.Request{Delegate: "carol", From: at(3 * time.Hour), Until: now.Add(4 * time.Hour)}, "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			store := inmem.New()
			book := delegation.Book{Store: store, Now: func() time.Time { return now }}
			if _, err := book.Set(ctx, who("carol", interrupt.ScopeApprovalsRespond), "carol", delegation.Request{Delegate: "dave", Until: now.Add(2 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
			d, err := book.Set(ctx, c.caller, c.principal, c.req)
			if interrupt.ErrorCode(err) != c.code || (c.code == "" && err != nil) {
				t.Fatalf("%v, want %q", err, c.code)
			}
			got, gerr := store.Delegation(ctx, "acme", c.principal)
			if err != nil {
				if gerr == nil {
					t.Errorf("a refused delegation was kept: %+v", got)
				}
				return
			}
			if len(d.Groups) != c.groups || got.SetBy != c.caller.Subject || got.Version != 1 || len(got.Changes) != 1 {
				t.Errorf("kept %+v", got)
			}
		})
	}
}

// TestEndingADelegation: ended at once and kept, with who ended it; a second end is 404; a new
// delegation after it is the next version, its changes kept.
func TestEndingADelegation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := inmem.New()
	clock := now
	book := delegation.Book{Store: store, Now: func() time.Time { return clock }}
	alice := who("alice", interrupt.ScopeApprovalsRespond)
	if _, err := book.Set(ctx, alice, "alice", delegation.Request{Delegate: "bob", Until: now.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if held, _ := delegation.Held(ctx, store, "acme", "bob", clock); len(held) != 1 || held[0].Delegator != "alice" {
		t.Fatalf("bob holds %+v", held)
	}
	clock = now.Add(time.Hour)
	ended, err := book.End(ctx, who("ops", delegation.ScopeManage), "alice")
	if err != nil || ended.EndedBy != "ops" || !ended.EndedAt.Equal(clock) {
		t.Fatalf("ended: %+v %v", ended, err)
	}
	if held, _ := delegation.Held(ctx, store, "acme", "bob", clock); len(held) != 0 {
		t.Errorf("bob holds %+v after it ended", held)
	}
	if again, err := book.End(ctx, alice, "alice"); err != nil || again.Version != 2 || again.EndedBy != "ops" {
		t.Errorf("ended twice: %+v %v, want it as it was ended", again, err)
	}
	if _, err := book.End(ctx, alice, "carol"); interrupt.ErrorCode(err) != interrupt.CodeForbidden {
		t.Errorf("alice ends carol's: %v, want forbidden", err)
	}
	again, err := book.Set(ctx, alice, "alice", delegation.Request{Delegate: "carol", Until: clock.Add(time.Hour)})
	if err != nil || again.Version != 3 || len(again.Changes) != 3 || !again.EndedAt.IsZero() {
		t.Errorf("set again: %+v %v", again, err)
	}
	if _, err := book.List(ctx, alice); interrupt.ErrorCode(err) != interrupt.CodeForbidden {
		t.Errorf("alice lists the tenant's: %v, want forbidden", err)
	}
}

// recorder keeps the tenant's events recorded, failing while down.
type recorder struct {
	down   bool
	events []string
}

func (r *recorder) RecordTenantEvent(_ context.Context, _, _, typ string, payload any) error {
	if r.down {
		return interrupt.ErrUnavailable
	}
	r.events = append(r.events, fmt.Sprintf("%s v%d", typ, payload.(interrupt.DelegationChanged).Version))
	return nil
}

// TestAChangesEventIsAtLeastOnce: a change whose event fails to record stands and answers the
// failure; ending it again records its delegation.ended then, and a put again the next
// version's delegation.set.
func TestAChangesEventIsAtLeastOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	events := &recorder{}
	book := delegation.Book{Store: inmem.New(), Events: events, Now: func() time.Time { return now }}
	alice := who("alice", interrupt.ScopeApprovalsRespond)
	set := delegation.Request{Delegate: "bob", Until: now.Add(time.Hour)}
	if _, err := book.Set(ctx, alice, "alice", set); err != nil {
		t.Fatal(err)
	}
	events.down = true
	if _, err := book.End(ctx, alice, "alice"); !errors.Is(err, interrupt.ErrUnavailable) {
		t.Fatalf("ended while the log is down: %v, want unavailable", err)
	}
	if _, err := book.Set(ctx, alice, "alice", set); !errors.Is(err, interrupt.ErrUnavailable) {
		t.Fatalf("set again while the log is down: %v, want unavailable", err)
	}
	events.down = false
	if _, err := book.End(ctx, alice, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := book.End(ctx, alice, "alice"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"delegation.set v1", "delegation.ended v4", "delegation.ended v4"}; !slices.Equal(events.events, want) {
		t.Errorf("recorded %v, want %v", events.events, want)
	}
}
