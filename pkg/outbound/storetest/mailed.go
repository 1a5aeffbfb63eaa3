package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// mailed: a store remembers which addresses an event's delivery reached, per subscription and
// event, until the mark expires; a mark made again is no error; keys that name no event are
// refused.
func mailed(t *testing.T, open func(*testing.T) outbound.Store) {
	ctx := context.Background()
	st := open(t)
	later := time.Now().Add(time.Hour)
	was := func(sub, event, address string) bool {
		t.Helper()
		ok, err := st.Mailed(ctx, outbound.MailedKey{Tenant: "acme", Subscription: sub, EventID: event, Address: address})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if was("sub_1", "run-1:1:0", "alice@example.com") {
		t.Fatal("mailed before any mark")
	}
	for range 2 {
		if err := st.MarkMailed(ctx, outbound.MailedKey{Tenant: "acme", Subscription: "sub_1", EventID: "run-1:1:0", Address: "alice@example.com"}, later); err != nil {
			t.Fatal(err)
		}
	}
	if !was("sub_1", "run-1:1:0", "alice@example.com") {
		t.Error("the mark is not kept")
	}
	for _, other := range [][3]string{{"sub_1", "run-1:1:0", "bob@example.com"}, {"sub_1", "run-1:2:0", "alice@example.com"}, {"sub_2", "run-1:1:0", "alice@example.com"}} {
		if was(other[0], other[1], other[2]) {
			t.Errorf("%v reads as mailed", other)
		}
	}
	if ok, err := st.Mailed(ctx, outbound.MailedKey{Tenant: "evilcorp", Subscription: "sub_1", EventID: "run-1:1:0", Address: "alice@example.com"}); err != nil || ok {
		t.Errorf("another tenant's: %v %v", ok, err)
	}
	if err := st.MarkMailed(ctx, outbound.MailedKey{Tenant: "acme", Subscription: "sub_1", EventID: "run-1:3:0", Address: "alice@example.com"}, time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if was("sub_1", "run-1:3:0", "alice@example.com") {
		t.Error("an expired mark reads as mailed")
	}
	if _, err := st.Mailed(ctx, outbound.MailedKey{Tenant: "acme", Subscription: "sub_1", EventID: "not an event", Address: "alice@example.com"}); !errors.Is(err, runlog.ErrInvalidKey) {
		t.Errorf("an event id that is none: %v, want ErrInvalidKey", err)
	}
}

// asked: a store keeps whom a subscription asked about an interrupt, replaced by a later record,
// per subscription, run and interrupt, until it expires or is dropped; a run's kept records are
// listed together.
func asked(t *testing.T, open func(*testing.T) outbound.Store) {
	ctx := context.Background()
	st := open(t)
	int1 := outbound.AskedKey{Tenant: "acme", Subscription: "sub_1", RunID: "run_1", InterruptID: "int_1"}
	if _, ok, err := st.Asked(ctx, int1); err != nil || ok {
		t.Fatalf("before any record: %v %v", ok, err)
	}
	if got, err := st.AskedInRun(ctx, "acme", "sub_1", "run_1"); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("a run's records before any: %v %v, want an empty list", got, err)
	}
	a := outbound.Asked{RunID: "run_1", InterruptID: "int_1", Title: "Pay “inv-1”", To: []outbound.Addressee{{Address: "alice@example.com", Name: "Alice", Principal: "alice"}, {Address: "team@example.com"}}}
	if err := st.RecordAsked(ctx, "acme", "sub_1", a, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := st.Asked(ctx, int1)
	if err != nil || !ok || got.Title != a.Title || got.RunID != "run_1" || got.InterruptID != "int_1" || len(got.To) != 2 || got.To[0] != a.To[0] || got.To[1] != a.To[1] {
		t.Fatalf("read back %+v %v %v", got, ok, err)
	}
	for _, other := range []outbound.AskedKey{
		{Tenant: "acme", Subscription: "sub_2", RunID: "run_1", InterruptID: "int_1"},
		{Tenant: "acme", Subscription: "sub_1", RunID: "run_1", InterruptID: "int_2"},
		{Tenant: "acme", Subscription: "sub_1", RunID: "run_2", InterruptID: "int_1"},
		{Tenant: "evilcorp", Subscription: "sub_1", RunID: "run_1", InterruptID: "int_1"},
	} {
		if _, ok, err := st.Asked(ctx, other); err != nil || ok {
			t.Errorf("%v: %v %v", other, ok, err)
		}
	}
	// A run's records: its own, kept ones only, by interrupt id.
	b := a
	b.InterruptID, b.Title = "int_0", "Ship"
	other := a
	other.RunID = "run_10" // its prefix is run_1's: a store must not mistake it for run_1's
	expired := a
	expired.InterruptID = "int_3"
	for _, r := range []struct {
		a       outbound.Asked
		expires time.Time
	}{{b, time.Now().Add(time.Hour)}, {other, time.Now().Add(time.Hour)}, {expired, time.Now().Add(-time.Second)}} {
		if err := st.RecordAsked(ctx, "acme", "sub_1", r.a, r.expires); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, _ := st.Asked(ctx, outbound.AskedKey{Tenant: "acme", Subscription: "sub_1", RunID: "run_1", InterruptID: "int_3"}); ok {
		t.Error("an expired record is read")
	}
	list, err := st.AskedInRun(ctx, "acme", "sub_1", "run_1")
	if err != nil || len(list) != 2 || list[0].InterruptID != "int_0" || list[1].InterruptID != "int_1" || list[1].To[0] != a.To[0] {
		t.Errorf("run_1's records: %+v %v, want int_0 and int_1", list, err)
	}
	if err := st.DropAsked(ctx, int1); err != nil {
		t.Fatal(err)
	}
	if err := st.DropAsked(ctx, int1); err != nil {
		t.Errorf("dropping a record again: %v, want no error", err)
	}
	if _, ok, err := st.Asked(ctx, int1); err != nil || ok {
		t.Errorf("a dropped record: %v %v", ok, err)
	}
	if list, err := st.AskedInRun(ctx, "acme", "sub_1", "run_1"); err != nil || len(list) != 1 || list[0].InterruptID != "int_0" {
		t.Errorf("run_1's records after a drop: %+v %v", list, err)
	}
	bad := a
	bad.InterruptID = "int#1"
	if err := st.RecordAsked(ctx, "acme", "sub_1", bad, time.Now().Add(time.Hour)); !errors.Is(err, runlog.ErrInvalidKey) {
		t.Errorf("an interrupt id that is none: %v, want ErrInvalidKey", err)
	}
	if _, err := st.AskedInRun(ctx, "acme", "sub_1", "run#1"); !errors.Is(err, runlog.ErrInvalidKey) {
		t.Errorf("a run id that is none: %v, want ErrInvalidKey", err)
	}
}

// mailCount: a tenant's messages are counted by hour up to the limit, never past it however
// many take at once; another hour and another tenant count apart; a tenant that is no id is
// refused.
func mailCount(t *testing.T, open func(*testing.T) outbound.Store) {
	ctx := context.Background()
	st := open(t)
	at := time.Date(2026, 12, 3, 9, 59, 0, 0, time.UTC)
	const limit = 5
	var wg sync.WaitGroup
	var mu sync.Mutex
	took := 0
	for range 12 {
		wg.Go(func() {
			ok, err := st.TakeMail(ctx, "acme", at, limit)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				took++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if took != limit {
		t.Errorf("12 takers at once took %d, want the limit %d", took, limit)
	}
	if ok, err := st.TakeMail(ctx, "acme", at, limit); err != nil || ok {
		t.Errorf("past the limit: %v %v", ok, err)
	}
	for _, other := range []struct {
		tenant string
		at     time.Time
	}{{"acme", at.Add(time.Minute)}, {"globex", at}} {
		if ok, err := st.TakeMail(ctx, other.tenant, other.at, limit); err != nil || !ok {
			t.Errorf("%s at %s: %v %v, want its own count", other.tenant, other.at, ok, err)
		}
	}
	if _, err := st.TakeMail(ctx, "not an id", at, limit); !errors.Is(err, runlog.ErrInvalidKey) {
		t.Errorf("a tenant that is no id: %v", err)
	}
}
