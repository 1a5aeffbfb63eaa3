package outbound_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// stores are the implementations of outbound.Store that TestStoreContract holds to one
// behaviour; the DynamoDB one talks to the local stack (skipped under -short).
var stores = map[string]func(t *testing.T) outbound.Store{
	"inmem": func(*testing.T) outbound.Store { return inmem.NewOutbound() },
	"dynamo": func(t *testing.T) outbound.Store {
		db, table := localaws.NewTable(t)
		return dynamo.NewOutbound(db, table)
	},
}

// TestSubscriptionLimitHolds: a tenant's limit holds however many create at once (eight at 18
// of 20 made 22 when the limit was a count read before the write), a deletion frees a place,
// and another tenant's subscriptions count for nothing.
func TestSubscriptionLimitHolds(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			sub := func(tenant string, i int) outbound.Subscription {
				return outbound.Subscription{ID: fmt.Sprintf("sub_%d", i), Tenant: tenant, URL: "https://a.example/", Events: []string{"*"}, Format: outbound.FormatStandard, CreatedAt: time.Now()}
			}
			const limit = 20
			for i := range limit - 2 {
				if err := st.CreateSubscription(ctx, sub("acme", i), limit); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Go(func() { errs[i] = st.CreateSubscription(ctx, sub("acme", 100+i), limit) })
			}
			wg.Wait()
			made := 0
			for _, err := range errs {
				switch {
				case err == nil:
					made++
				case !errors.Is(err, outbound.ErrLimit):
					t.Fatalf("a refusal: %v", err)
				}
			}
			if subs, err := st.Subscriptions(ctx, "acme"); err != nil || len(subs) != limit || made != 2 {
				t.Fatalf("%d made of 8, %d held (%v), want 2 and %d", made, len(subs), err, limit)
			}
			if err := st.CreateSubscription(ctx, sub("globex", 1), limit); err != nil {
				t.Errorf("another tenant: %v", err)
			}
			if err := st.DeleteSubscription(ctx, "acme", "sub_0"); err != nil {
				t.Fatal(err)
			}
			if err := st.CreateSubscription(ctx, sub("acme", 200), limit); err != nil {
				t.Errorf("after a deletion: %v", err)
			}
			if err := st.CreateSubscription(ctx, sub("acme", 201), limit); !errors.Is(err, outbound.ErrLimit) {
				t.Errorf("past the limit again: %v", err)
			}
		})
	}
}

// TestStoreContract: subscriptions per tenant, cursors saved only over the version read,
// attempts newest first and looked up by event (one recorded again kept once, none past its
// expiry), the retry index in time order up to now (an entry filed or dropped again is no
// error), and what is not there answered without an error.
func TestStoreContract(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			a := outbound.Subscription{ID: "sub_a", Tenant: "acme", URL: "https://a.example/", Events: []string{"*"}, Format: outbound.FormatStandard, CreatedAt: at}
			b := outbound.Subscription{ID: "sub_b", Tenant: "acme", URL: "https://b.example/", Events: []string{"interrupt.resolved", "run.completed"}, Format: outbound.FormatSlack, CreatedAt: at.Add(time.Second)}
			other := outbound.Subscription{ID: "sub_c", Tenant: "globex", URL: "https://c.example/", Events: []string{"*"}, Format: outbound.FormatStandard, CreatedAt: at}
			for _, s := range []outbound.Subscription{b, a, other} {
				if err := st.CreateSubscription(ctx, s, outbound.MaxSubscriptions); err != nil {
					t.Fatal(err)
				}
			}
			subs, err := st.Subscriptions(ctx, "acme")
			if err != nil || len(subs) != 2 || subs[0].ID != "sub_a" || subs[1].ID != "sub_b" || subs[1].Events[1] != "run.completed" || subs[1].Format != outbound.FormatSlack || !subs[1].CreatedAt.Equal(b.CreatedAt) {
				t.Fatalf("subscriptions of acme: %+v %v", subs, err)
			}
			if _, err := st.Subscription(ctx, "globex", "sub_a"); !errors.Is(err, outbound.ErrNoSubscription) {
				t.Errorf("another tenant's subscription: %v", err)
			}
			if err := st.DeleteSubscription(ctx, "acme", "sub_b"); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Subscription(ctx, "acme", "sub_b"); !errors.Is(err, outbound.ErrNoSubscription) {
				t.Errorf("a deleted subscription: %v", err)
			}

			c, err := st.Cursor(ctx, "acme", "sub_a", "run-1")
			if err != nil || c.Version != 0 || c.RunID != "run-1" {
				t.Fatalf("a cursor never saved: %+v %v", c, err)
			}
			c.Next, c.Attempts, c.FailingSince, c.RetryAt, c.LastError = outbound.Position{Seq: 3, Index: 1}, 2, at, at.Add(5*time.Second), "the receiver answered 500"
			if err := st.SaveCursor(ctx, c, at.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if err := st.SaveCursor(ctx, c, at.Add(time.Hour)); !errors.Is(err, outbound.ErrCursorMoved) {
				t.Errorf("a second save over version 0: %v", err)
			}
			got, err := st.Cursor(ctx, "acme", "sub_a", "run-1")
			if err != nil || got.Version != 1 || got.Next != c.Next || got.Attempts != 2 || !got.FailingSince.Equal(at) || !got.RetryAt.Equal(c.RetryAt) || got.LastError != c.LastError {
				t.Fatalf("cursor read back %+v %v, want %+v", got, err, c)
			}
			got.RetryAt, got.LastError = time.Time{}, ""
			if err := st.SaveCursor(ctx, got, at.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if again, _ := st.Cursor(ctx, "acme", "sub_a", "run-1"); again.Version != 2 || !again.RetryAt.IsZero() {
				t.Errorf("cursor after the second save: %+v", again)
			}

			for i, id := range []string{"r:1:0", "r:1:1", "r:2:0"} {
				a := outbound.Attempt{EventID: id, EventType: "interrupt.requested", RunID: "r", Status: outbound.StatusDelivered, Attempts: 1, At: at.Add(time.Duration(i) * time.Millisecond)}
				if err := st.RecordAttempt(ctx, "acme", "sub_a", a, time.Now().Add(time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			attempts, err := st.Attempts(ctx, "acme", "sub_a", 2)
			if err != nil || len(attempts) != 2 || attempts[0].EventID != "r:2:0" || attempts[1].EventID != "r:1:1" {
				t.Errorf("the two latest attempts: %+v %v", attempts, err)
			}
			for _, c := range []struct {
				tenant, sub, event string
				want               bool
			}{
				{"acme", "sub_a", "r:1:1", true},
				{"acme", "sub_a", "r:3:0", false},
				{"acme", "sub_b", "r:1:1", false},
				{"globex", "sub_a", "r:1:1", false},
			} {
				if got, err := st.Attempted(ctx, c.tenant, c.sub, c.event); err != nil || got != c.want {
					t.Errorf("%s attempted by %s/%s: %v %v, want %v", c.event, c.tenant, c.sub, got, err, c.want)
				}
			}

			// An attempt is listed by its time, however late it is recorded; one recorded again
			// is kept once; one past its expiry is not kept.
			late := outbound.Attempt{EventID: "late:1:0", EventType: "interrupt.requested", RunID: "late", Status: outbound.StatusDelivered, Attempts: 1, At: at.Add(-time.Millisecond)}
			gone := outbound.Attempt{EventID: "gone:1:0", EventType: "interrupt.requested", RunID: "gone", Status: outbound.StatusDelivered, Attempts: 1, At: at.Add(-time.Hour)}
			for _, rec := range []struct {
				a       outbound.Attempt
				expires time.Time
			}{{late, time.Now().Add(time.Hour)}, {late, time.Now().Add(time.Hour)}, {gone, time.Now().Add(-time.Second)}} {
				if err := st.RecordAttempt(ctx, "acme", "sub_a", rec.a, rec.expires); err != nil {
					t.Fatal(err)
				}
			}
			attempts, err = st.Attempts(ctx, "acme", "sub_a", 10)
			var ids []string
			for _, a := range attempts {
				ids = append(ids, a.EventID)
			}
			if err != nil || !slices.Equal(ids, []string{"r:2:0", "r:1:1", "r:1:0", "late:1:0"}) {
				t.Errorf("every attempt kept: %v %v", ids, err)
			}
			if got, err := st.Attempted(ctx, "acme", "sub_a", "gone:1:0"); err != nil || got {
				t.Errorf("an expired attempt is attempted: %v %v", got, err)
			}
			if got, err := st.Attempts(ctx, "acme", "sub_b", 10); err != nil || len(got) != 0 {
				t.Errorf("the attempts of a subscription with none: %+v %v", got, err)
			}

			r1 := outbound.Retry{At: at.Add(2 * time.Second), Tenant: "acme", Subscription: "sub_a", RunID: "run-1"}
			r2 := outbound.Retry{At: at.Add(time.Second), Tenant: "globex", Subscription: "sub_c", RunID: "run-9"}
			r3 := outbound.Retry{At: at.Add(time.Minute), Tenant: "acme", Subscription: "sub_a", RunID: "run-2"}
			for _, r := range []outbound.Retry{r1, r2, r3, r1} { // r1 filed again is one entry
				if err := st.ScheduleRetry(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			due, err := st.DueRetries(ctx, at.Add(2*time.Second), 10)
			if err != nil || len(due) != 2 || due[0].RunID != "run-9" || due[1].RunID != "run-1" || !due[1].At.Equal(r1.At) {
				t.Fatalf("due at +2s: %+v %v", due, err)
			}
			for range 2 { // one dropped already is no error
				if err := st.DropRetry(ctx, due[0]); err != nil {
					t.Fatal(err)
				}
			}
			if due, _ := st.DueRetries(ctx, at.Add(time.Hour), 1); len(due) != 1 || due[0].RunID != "run-1" {
				t.Errorf("due at +1h, one: %+v", due)
			}
			if err := st.DeleteSubscription(ctx, "acme", "sub_b"); err != nil {
				t.Errorf("deleting a subscription deleted already: %v", err)
			}
			if subs, err := st.Subscriptions(ctx, "initech"); err != nil || len(subs) != 0 {
				t.Errorf("the subscriptions of a tenant with none: %+v %v", subs, err)
			}
		})
	}
}

// TestStoreRefusesKeys: ids that are not ids (runlog.ValidID), and event ids ParseEventID
// refuses, answer runlog.ErrInvalidKey from every method that makes a key of them (a
// subscription's read answers none) and write nothing.
func TestStoreRefusesKeys(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			for _, bad := range []string{"acme#subs", "", "a b"} {
				sub := outbound.Subscription{ID: bad, Tenant: bad, URL: "https://a.example/", Events: []string{"*"}, Format: outbound.FormatStandard, CreatedAt: at}
				a := outbound.Attempt{EventID: "r:1:0", EventType: "interrupt.requested", RunID: "r", Status: outbound.StatusDelivered, Attempts: 1, At: at}
				c := outbound.Cursor{Tenant: "acme", Subscription: "sub_a", RunID: bad}
				r := outbound.Retry{At: at, Tenant: "acme", Subscription: bad, RunID: "run-1"}
				for op, err := range map[string]error{
					"create":        st.CreateSubscription(ctx, sub, outbound.MaxSubscriptions),
					"delete":        st.DeleteSubscription(ctx, "acme", bad),
					"list":          second(st.Subscriptions(ctx, bad)),
					"cursor":        second(st.Cursor(ctx, bad, "sub_a", "run-1")),
					"save cursor":   st.SaveCursor(ctx, c, at.Add(time.Hour)),
					"record":        st.RecordAttempt(ctx, "acme", bad, a, time.Now().Add(time.Hour)),
					"attempts":      second(st.Attempts(ctx, bad, "sub_a", 10)),
					"attempted":     second(st.Attempted(ctx, "acme", bad, "r:1:0")),
					"schedule":      st.ScheduleRetry(ctx, r),
					"drop":          st.DropRetry(ctx, r),
					"record event":  st.RecordAttempt(ctx, "acme", "sub_a", outbound.Attempt{EventID: bad, At: at}, time.Now().Add(time.Hour)),
					"attempted evt": second(st.Attempted(ctx, "acme", "sub_a", bad)),
				} {
					if !errors.Is(err, runlog.ErrInvalidKey) {
						t.Errorf("%s with %q: %v", op, bad, err)
					}
				}
				if _, err := st.Subscription(ctx, "acme", bad); !errors.Is(err, outbound.ErrNoSubscription) {
					t.Errorf("the subscription %q: %v", bad, err)
				}
			}
			if due, err := st.DueRetries(ctx, at.Add(time.Hour), 10); err != nil || len(due) != 0 {
				t.Errorf("refused retries were filed: %+v %v", due, err)
			}
		})
	}
}

// second is the error of a call that answers more.
func second[T any](_ T, err error) error { return err }

// TestConcurrentDeliverers: two deliverers (two invocations, as Lambda may run after a retry)
// take the same batch at once over DynamoDB's conditional writes, while the retrier runs: each
// event reaches the receiver, and after dedupe every run's events arrived in seq order.
func TestConcurrentDeliverers(t *testing.T) {
	db, table := localaws.NewTable(t)
	w := newWorld(t)
	store := dynamo.NewOutbound(db, table)
	w.store = nil
	w.subs.Store = store
	r := w.receiver()
	r.ignore = true // the clock runs ahead for the retrier
	r.fail = func(id string, try int) bool {
		return try == 1 && (strings.HasPrefix(id, "run-1:") || strings.HasPrefix(id, "run-3:"))
	}
	w.subscribe("acme", r, "*")
	var batch []outbound.Committed
	for i := range 5 {
		for run := range 4 {
			batch = append(batch, w.commit("acme", fmt.Sprint("run-", run), requested(fmt.Sprint("n", i), fmt.Sprint("i", i), approval)))
		}
	}
	deliverer := func() *outbound.Deliverer {
		d := *w.d
		d.Store = store
		return &d
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, errs := deliverer().Commits(context.Background(), batch); errors.Join(errs...) != nil {
				t.Error(errors.Join(errs...))
			}
		})
	}
	wg.Go(func() {
		if _, err := deliverer().Retries(context.Background(), 100); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	for range 20 {
		w.clock.Advance(time.Minute)
		if _, err := deliverer().Retries(context.Background(), 100); err != nil {
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	last := map[string]int{}
	for _, d := range r.got {
		if seen[d.ID] {
			continue
		}
		seen[d.ID] = true
		run, seq := d.Msg.Data.RunID, int(d.Msg.Data.Seq)*10+d.Msg.Data.Index
		if seq < last[run] {
			t.Errorf("%s arrived after a later event of its run", d.ID)
		}
		last[run] = seq
	}
	if len(seen) != 40 {
		t.Errorf("%d distinct events delivered, want 40", len(seen))
	}
}
