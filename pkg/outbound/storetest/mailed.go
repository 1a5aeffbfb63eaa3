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
