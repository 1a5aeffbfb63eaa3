package outboundtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// ConcurrentDeliverers, a case of every outbound store's contract (pkg/outbound/storetest) that
// needs a World, so each store's test runs it beside that suite: two deliverers (two invocations, as Lambda may run after a retry)
// take the same batch at once over the store's conditional writes (DynamoDB's, on a table),
// while the retrier runs: each event reaches the receiver, and after dedupe every run's events
// arrived in seq order.
func ConcurrentDeliverers(t *testing.T, open func(t *testing.T) outbound.Store) {
	w := NewWorld(t, open(t))
	r := w.Receiver()
	r.Ignore = true // the clock runs ahead for the retrier
	r.Fail = func(id string, try int) bool {
		return try == 1 && (strings.HasPrefix(id, "run-1:") || strings.HasPrefix(id, "run-3:"))
	}
	w.Subscribe("acme", r, "*")
	var batch []runlog.StreamRecord
	for i := range 5 {
		for run := range 4 {
			batch = append(batch, w.Commit("acme", fmt.Sprint("run-", run), Requested(fmt.Sprint("n", i), fmt.Sprint("i", i), Approval)))
		}
	}
	deliverer := func() *outbound.Deliverer {
		d := *w.D
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
		w.Clock.Advance(time.Minute)
		if _, err := deliverer().Retries(context.Background(), 100); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	last := map[string]int{}
	for _, d := range r.Deliveries() {
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
