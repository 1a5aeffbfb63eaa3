package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// refusedKeys: ids that are not ids (runlog.ValidID), and event ids ParseEventID
// refuses, answer runlog.ErrInvalidKey from every method that makes a key of them (a
// subscription's read answers none) and write nothing.
func refusedKeys(t *testing.T, open func(t *testing.T) outbound.Store) {
	ctx := context.Background()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
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
}
