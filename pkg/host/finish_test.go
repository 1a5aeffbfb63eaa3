package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
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

// TestAnArchivedReceiptKeepsItsRunOpen: in a run the host completes, what a checkpoint archived
// still counts. An accepted call's receipt keeps the run open after the checkpoint archived its
// interrupt (closed interrupts leave the live state), so closing the interrupt that waited
// across the checkpoint does not complete the run while the receipt may still be redeemed; and
// an interrupt requested after the checkpoint is still part of the run, which completes once it
// closes. Before the run kept both (runlog.State.EndsRun, OpenReceipts), the first close
// completed the run with the receipt unredeemed, and the late interrupt was no one's to end.
func TestAnArchivedReceiptKeepsItsRunOpen(t *testing.T) {
	t.Parallel()
	h, _ := hosttest.MemHost(t)
	tokens := hosttest.Tokens(h)
	ctx := context.Background()
	engine := hosttest.Who("engine")
	call := interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{"order":"4471"}`)}
	refund := json.RawMessage(`{"kind":"approval","key":"refund","data":{"artifactId":"4471","artifactType":"refund","title":"Refund","actions":["accept","reject"],"approversList":["alice"]}}`)
	asked, _, err := h.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: "refund", Payload: refund, ToolCall: &call, EndsRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), "r1", "refund", json.RawMessage(`{"action":"accept","decidedAt":"2026-12-05T09:00:00Z"}`), nil); err != nil {
		t.Fatal(err)
	}
	status := func() interrupt.RunStatus {
		t.Helper()
		snap, err := h.Snapshot(ctx, engine, "r1")
		if err != nil {
			t.Fatal(err)
		}
		return snap.Status
	}
	request := func(node string) {
		t.Helper()
		if _, _, err := h.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: node, Payload: hosttest.Custom(node)}); err != nil {
			t.Fatal(err)
		}
	}
	resolve := func(node string) {
		t.Helper()
		if _, err := h.Resolve(ctx, engine, "r1", node, json.RawMessage(`{}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	// "waits" (commit 3) stays pending across the checkpoint (commit CheckpointEvery), which
	// archives the refund.
	request("waits")
	for i := range runlog.CheckpointEvery/2 - 1 {
		node := fmt.Sprintf("step-%d", i)
		request(node)
		resolve(node)
	}
	resolve("waits")
	if s := status(); s == interrupt.RunCompleted {
		t.Fatalf("with the refund's receipt unredeemed, the last interrupt's close made the run %s", s)
	}
	request("late")
	out, err := tokens.InterruptOutcome(ctx, engine, "r1", asked.InterruptID)
	if err != nil || out.Receipt == nil {
		t.Fatalf("the receipt: %+v %v", out, err)
	}
	if _, err := tokens.RedeemReceipt(ctx, hosttest.Who("executor"), out.Receipt.Token, call); err != nil {
		t.Fatal(err)
	}
	if s := status(); s == interrupt.RunCompleted {
		t.Fatalf("with late pending, the redemption made the run %s", s)
	}
	resolve("late")
	if s := status(); s != interrupt.RunCompleted {
		t.Errorf("with everything closed the run is %s, want completed", s)
	}
	if n := hosttest.CountEvents(t, h, engine, "r1", interrupt.EventRunCompleted); n != 1 {
		t.Errorf("%d run.completed, want 1", n)
	}
}
