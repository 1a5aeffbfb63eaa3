package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// correlationsContract: every store keeps endpoints, keeps the first live event of a correlation
// item and registers waiters beside it, orders Confirm with Deliver, settles only the event kept,
// records answers outside slots once, answers what is not there without an error, and refuses a
// slot of a tenant that is no id.
func correlationsContract(t *testing.T, open func(t *testing.T) host.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	k := webhook.Key{Tenant: "acme", Endpoint: "we_1", EventType: "payment_intent.succeeded", Value: "order#7/é"}
	delivery := func(id string) webhook.Delivery {
		return webhook.Delivery{EndpointID: "we_1", EventID: id, Body: json.RawMessage(`{"id":"` + id + `"}`), ReceivedAt: t0, Expires: t0.Add(time.Hour)}
	}
	w1 := webhook.Waiter{RunID: "r1", NodeID: "n1", InterruptID: "int_1"}
	w2 := webhook.Waiter{RunID: "r2", NodeID: "n1", InterruptID: "int_2"}
	t.Run("endpoints", func(t *testing.T) {
		t.Parallel()
		l := open(t)
		e := webhook.Endpoint{ID: "we_1", Tenant: "acme", Provider: "stripe", Correlation: []string{"/data/id"}, CreatedAt: t0}
		if err := l.CreateEndpoint(ctx, e, host.MaxEndpoints); err != nil {
			t.Fatal(err)
		}
		got, err := l.Endpoint(ctx, "we_1")
		if err != nil || got.Tenant != "acme" || got.Provider != "stripe" || got.Correlation[0] != "/data/id" || !got.CreatedAt.Equal(t0) {
			t.Errorf("read %+v %v", got, err)
		}
		if err := l.DeleteEndpoint(ctx, "we_1"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Endpoint(ctx, "we_1"); !errors.Is(err, webhook.ErrNoEndpoint) {
			t.Errorf("a deleted endpoint: %v", err)
		}
	})
	t.Run("a tenant's endpoints are listed", func(t *testing.T) {
		t.Parallel()
		l := open(t)
		for _, e := range []webhook.Endpoint{
			{ID: "we_a", Tenant: "acme", Provider: "stripe", Correlation: []string{"/data/id"}, CreatedAt: t0},
			{ID: "we_b", Tenant: "acme", Provider: "standard-webhooks", Correlation: []string{"/data/id"}, CreatedAt: t0},
			{ID: "we_g", Tenant: "globex", Provider: "stripe", Correlation: []string{"/data/id"}, CreatedAt: t0},
		} {
			if err := l.CreateEndpoint(ctx, e, host.MaxEndpoints); err != nil {
				t.Fatal(err)
			}
		}
		list := func(tenant string) []string {
			ids, err := l.Endpoints(ctx, tenant)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(ids)
			return ids
		}
		if got := list("acme"); !slices.Equal(got, []string{"we_a", "we_b"}) {
			t.Errorf("acme's: %v", got)
		}
		if err := l.DeleteEndpoint(ctx, "we_a"); err != nil {
			t.Fatal(err)
		}
		if got := list("acme"); !slices.Equal(got, []string{"we_b"}) {
			t.Errorf("acme's after a deletion: %v", got)
		}
		if got := list("initech"); len(got) != 0 {
			t.Errorf("a tenant with none: %v", got)
		}
	})
	t.Run("a tenant's limit of endpoints holds at once", func(t *testing.T) {
		t.Parallel()
		l := open(t)
		const limit = 5
		endpoint := func(tenant string, i int) webhook.Endpoint {
			return webhook.Endpoint{ID: fmt.Sprintf("we_%s_%d", tenant, i), Tenant: tenant, Provider: "stripe", Correlation: []string{"/data/id"}, CreatedAt: t0}
		}
		for i := range limit - 2 {
			if err := l.CreateEndpoint(ctx, endpoint("acme", i), limit); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		var made atomic.Int32
		for i := range 8 {
			wg.Go(func() {
				switch err := l.CreateEndpoint(ctx, endpoint("acme", 100+i), limit); {
				case err == nil:
					made.Add(1)
				case !errors.Is(err, webhook.ErrLimit):
					t.Errorf("a refusal: %v", err)
				}
			})
		}
		wg.Wait()
		if made.Load() != 2 {
			t.Fatalf("%d of 8 made at %d of %d, want 2", made.Load(), limit-2, limit)
		}
		if err := l.CreateEndpoint(ctx, endpoint("globex", 1), limit); err != nil {
			t.Errorf("another tenant: %v", err)
		}
		if err := l.DeleteEndpoint(ctx, "we_acme_0"); err != nil {
			t.Fatal(err)
		}
		if err := l.CreateEndpoint(ctx, endpoint("acme", 200), limit); err != nil {
			t.Errorf("after a deletion: %v", err)
		}
		if err := l.CreateEndpoint(ctx, endpoint("acme", 201), limit); !errors.Is(err, webhook.ErrLimit) {
			t.Errorf("past the limit again: %v", err)
		}
	})
	t.Run("a slot keeps the first live event and its waiters", func(t *testing.T) {
		t.Parallel()
		l := open(t)
		if e, err := l.Wait(ctx, k, w1, t0); err != nil || e != nil {
			t.Fatalf("wait on an empty slot: %v %v", e, err)
		}
		slot, err := l.Deliver(ctx, k, delivery("evt_1"), t0)
		if err != nil || slot.Event == nil || slot.Event.EventID != "evt_1" || len(slot.Waiters) != 1 || slot.Waiters[0] != w1 {
			t.Fatalf("deliver: %+v %v", slot, err)
		}
		if slot, _ := l.Deliver(ctx, k, delivery("evt_2"), t0); slot.Event.EventID != "evt_1" {
			t.Errorf("a second event replaced the first: %+v", slot.Event)
		}
		if e, err := l.Wait(ctx, k, w2, t0); err != nil || e == nil || string(e.Body) != `{"id":"evt_1"}` {
			t.Errorf("wait beside a live event: %+v %v", e, err)
		}
		if e, err := l.Confirm(ctx, k, w2, t0); err != nil || e == nil || e.EventID != "evt_1" {
			t.Errorf("confirm beside a live event: %+v %v", e, err)
		}
		settled := delivery("evt_1")
		settled.Answer = json.RawMessage(`{"outcome":"resolved"}`)
		if err := l.Settle(ctx, k, settled, []webhook.Waiter{w1}); err != nil {
			t.Fatal(err)
		}
		if err := l.Settle(ctx, k, delivery("evt_2"), []webhook.Waiter{w2}); err != nil {
			t.Fatal(err)
		}
		slot, _ = l.Deliver(ctx, k, delivery("evt_1"), t0)
		if string(slot.Event.Answer) != `{"outcome":"resolved"}` || len(slot.Waiters) != 1 || slot.Waiters[0] != w2 {
			t.Errorf("after settling: %+v (answer %s)", slot, slot.Event.Answer)
		}
		later := t0.Add(2 * time.Hour)
		if e, err := l.Confirm(ctx, k, w2, later); err != nil || e != nil {
			t.Errorf("confirm past the kept event's expiry: %+v %v", e, err)
		}
		third := delivery("evt_3")
		third.Expires = later.Add(time.Hour)
		if slot, _ := l.Deliver(ctx, k, third, later); slot.Event == nil || slot.Event.EventID != "evt_3" || slot.Event.Answer != nil {
			t.Errorf("an expired event is replaced: %+v", slot.Event)
		}
		for _, other := range []webhook.Key{
			{Tenant: "evilcorp", Endpoint: k.Endpoint, EventType: k.EventType, Value: k.Value},
			{Tenant: k.Tenant, Endpoint: "we_2", EventType: k.EventType, Value: k.Value},
		} {
			if slot, _ := l.Deliver(ctx, other, delivery("evt_9"), t0); slot.Event.EventID != "evt_9" || len(slot.Waiters) != 0 {
				t.Errorf("the slot of %+v: %+v", other, slot)
			}
		}
	})
	t.Run("what is not there is no error", func(t *testing.T) {
		t.Parallel()
		l := open(t)
		if err := l.DeleteEndpoint(ctx, "we_none"); err != nil {
			t.Errorf("deleting an endpoint not held: %v", err)
		}
		if err := l.Settle(ctx, k, delivery("evt_1"), []webhook.Waiter{w1}); err != nil {
			t.Errorf("settling an empty slot: %v", err)
		}
		if e, err := l.Confirm(ctx, k, w1, t0); err != nil || e != nil {
			t.Errorf("confirm on an empty slot: %+v %v", e, err)
		}
		if slot, err := l.Deliver(ctx, k, delivery("evt_1"), t0); err != nil || slot.Event == nil || slot.Event.Answer != nil || len(slot.Waiters) != 1 {
			t.Errorf("the slot after a settle of nothing: %+v %v", slot, err)
		}
	})
	t.Run("a slot of a tenant that is no id is refused", func(t *testing.T) {
		t.Parallel()
		l := open(t)
		for _, tenant := range []string{"acme#corr#x", ""} {
			bad := k
			bad.Tenant = tenant
			for op, err := range map[string]error{
				"wait":    second(l.Wait(ctx, bad, w1, t0)),
				"confirm": second(l.Confirm(ctx, bad, w1, t0)),
				"deliver": second(l.Deliver(ctx, bad, delivery("evt_1"), t0)),
				"settle":  l.Settle(ctx, bad, delivery("evt_1"), nil),
			} {
				if !errors.Is(err, runlog.ErrInvalidKey) {
					t.Errorf("%s at tenant %q: %v", op, tenant, err)
				}
			}
		}
	})
	t.Run("answers outside slots are recorded once", func(t *testing.T) {
		t.Parallel()
		l := open(t)
		if got, err := l.Recorded(ctx, "we_1", "evt_1"); err != nil || got != nil {
			t.Fatalf("nothing recorded yet: %s %v", got, err)
		}
		for _, answer := range []string{`{"n":1}`, `{"n":2}`} {
			if err := l.Record(ctx, "we_1", "evt_1", json.RawMessage(answer), t0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := l.Recorded(ctx, "we_1", "evt_1"); err != nil || string(got) != `{"n":1}` {
			t.Errorf("recorded %s %v, want the first answer", got, err)
		}
	})
}
