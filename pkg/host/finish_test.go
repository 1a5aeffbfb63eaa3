package host_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// TestARunMadeToEndCompletes: a request that makes its run with EndsRun has the host complete
// the run in the commit that closes its interrupt, once; a request with EndsRun in a run that
// exists records none (the run is its maker's to end), and one without it in a run the host
// completes is part of that run, which ends once both closed.
func TestARunMadeToEndCompletes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		requests []host.Request
		// ended is whether the run completed after each resolve, in order.
		ended []bool
	}{
		{"made to end", []host.Request{{NodeID: "a", Payload: hosttest.Custom("a"), EndsRun: true}}, []bool{true}},
		{"asked to end in a run that exists", []host.Request{
			{NodeID: "a", Payload: hosttest.Custom("a")}, {NodeID: "b", Payload: hosttest.Custom("b"), EndsRun: true},
		}, []bool{false, false}},
		{"asked in again", []host.Request{
			{NodeID: "a", Payload: hosttest.Custom("a"), EndsRun: true}, {NodeID: "b", Payload: hosttest.Custom("b")},
		}, []bool{false, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, _ := hosttest.MemHost(t)
			ctx := context.Background()
			engine := hosttest.Who("engine")
			for _, r := range c.requests {
				if _, _, err := h.RequestInterrupt(ctx, engine, "r1", r); err != nil {
					t.Fatal(err)
				}
			}
			for i, r := range c.requests {
				res, err := h.Resolve(ctx, engine, "r1", r.NodeID, json.RawMessage(`{}`), nil)
				if err != nil || res.Status != interrupt.StatusResolved {
					t.Fatal(res, err)
				}
				snap, err := h.Snapshot(ctx, engine, "r1")
				if err != nil {
					t.Fatal(err)
				}
				if ended := snap.Status == interrupt.RunCompleted; ended != c.ended[i] {
					t.Errorf("after resolving %s the run is %s, want ended %v", r.NodeID, snap.Status, c.ended[i])
				}
			}
			want := 0
			if c.ended[len(c.ended)-1] {
				want = 1
			}
			if n := hosttest.CountEvents(t, h, engine, "r1", interrupt.EventRunCompleted); n != want {
				t.Errorf("%d run.completed, want %d", n, want)
			}
		})
	}
}
