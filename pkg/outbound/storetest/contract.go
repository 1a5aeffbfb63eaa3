package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/outbound"
)

// contract: subscriptions per tenant, cursors saved only over the version read,
// attempts newest first and looked up by event (one recorded again kept once, none past its
// expiry), the retry index in time order up to now (an entry filed or dropped again is no
// error), and what is not there answered without an error.
func contract(t *testing.T, open func(t *testing.T) outbound.Store) {
	ctx := context.Background()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	st := open(t)
	a := outbound.Subscription{ID: "sub_a", Tenant: "acme", URL: "https://a.example/", Events: []string{"*"}, Format: outbound.FormatStandard, CreatedAt: at}
	b := outbound.Subscription{ID: "sub_b", Tenant: "acme", URL: "https://b.example/", Events: []string{"interrupt.resolved", "run.completed"}, Format: "slack", CreatedAt: at.Add(time.Second),
		Conversation: &outbound.Conversation{ServiceURL: "https://smba.trafficmanager.net/emea/", ConversationID: "19:abc@thread.tacv2"}}
	other := outbound.Subscription{ID: "sub_c", Tenant: "globex", URL: "https://c.example/", Events: []string{"*"}, Format: outbound.FormatStandard, CreatedAt: at}
	for _, s := range []outbound.Subscription{b, a, other} {
		if err := st.CreateSubscription(ctx, s, outbound.MaxSubscriptions); err != nil {
			t.Fatal(err)
		}
	}
	subs, err := st.Subscriptions(ctx, "acme")
	if err != nil || len(subs) != 2 || subs[0].ID != "sub_a" || subs[1].ID != "sub_b" || subs[1].Events[1] != "run.completed" || subs[1].Format != "slack" || !subs[1].CreatedAt.Equal(b.CreatedAt) ||
		subs[1].Conversation == nil || *subs[1].Conversation != *b.Conversation || subs[0].Conversation != nil {
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
}
