package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/outbound"
)

// subscriptionLimit: a tenant's limit holds however many create at once (eight at 18
// of 20 made 22 when the limit was a count read before the write), a deletion frees a place,
// and another tenant's subscriptions count for nothing.
func subscriptionLimit(t *testing.T, open func(t *testing.T) outbound.Store) {
	ctx := context.Background()
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
}
