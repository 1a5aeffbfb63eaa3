package storetest

import (
	"context"
	"errors"
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
		ok, err := st.Mailed(ctx, "acme", sub, event, address)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if was("sub_1", "run-1:1:0", "alice@example.com") {
		t.Fatal("mailed before any mark")
	}
	for range 2 {
		if err := st.MarkMailed(ctx, "acme", "sub_1", "run-1:1:0", "alice@example.com", later); err != nil {
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
	if ok, err := st.Mailed(ctx, "evilcorp", "sub_1", "run-1:1:0", "alice@example.com"); err != nil || ok {
		t.Errorf("another tenant's: %v %v", ok, err)
	}
	if err := st.MarkMailed(ctx, "acme", "sub_1", "run-1:3:0", "alice@example.com", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if was("sub_1", "run-1:3:0", "alice@example.com") {
		t.Error("an expired mark reads as mailed")
	}
	if _, err := st.Mailed(ctx, "acme", "sub_1", "not an event", "alice@example.com"); !errors.Is(err, runlog.ErrInvalidKey) {
		t.Errorf("an event id that is none: %v, want ErrInvalidKey", err)
	}
}

// asked: a store keeps whom a subscription asked about an interrupt, replaced by a later record,
// per subscription and interrupt, until it expires.
func asked(t *testing.T, open func(*testing.T) outbound.Store) {
	ctx := context.Background()
	st := open(t)
	if _, ok, err := st.Asked(ctx, "acme", "sub_1", "int_1"); err != nil || ok {
		t.Fatalf("before any record: %v %v", ok, err)
	}
	a := outbound.Asked{Title: "Pay “inv-1”", To: []outbound.Addressee{{Address: "alice@example.com", Name: "Alice", Principal: "alice"}, {Address: "team@example.com"}}}
	if err := st.RecordAsked(ctx, "acme", "sub_1", "int_1", a, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := st.Asked(ctx, "acme", "sub_1", "int_1")
	if err != nil || !ok || got.Title != a.Title || len(got.To) != 2 || got.To[0] != a.To[0] || got.To[1] != a.To[1] {
		t.Fatalf("read back %+v %v %v", got, ok, err)
	}
	for _, other := range [][3]string{{"acme", "sub_2", "int_1"}, {"acme", "sub_1", "int_2"}, {"evilcorp", "sub_1", "int_1"}} {
		if _, ok, err := st.Asked(ctx, other[0], other[1], other[2]); err != nil || ok {
			t.Errorf("%v: %v %v", other, ok, err)
		}
	}
	if err := st.RecordAsked(ctx, "acme", "sub_1", "int_3", a, time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.Asked(ctx, "acme", "sub_1", "int_3"); ok {
		t.Error("an expired record is read")
	}
	if err := st.RecordAsked(ctx, "acme", "sub_1", "int#1", a, time.Now().Add(time.Hour)); !errors.Is(err, runlog.ErrInvalidKey) {
		t.Errorf("an interrupt id that is none: %v, want ErrInvalidKey", err)
	}
}
