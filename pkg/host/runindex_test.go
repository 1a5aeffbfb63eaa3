package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// titled is an approval alice decides, of key with a title, expiring after timeoutMs (0: none).
func titled(key, title string, timeoutMs int) json.RawMessage {
	p := map[string]any{"kind": "approval", "key": key, "data": map[string]any{"artifactId": "a-" + key, "artifactType": "x", "title": title,
		"actions": []string{"accept", "reject"}, "approversList": []string{"alice"}, "requiredApprovals": 1}}
	if timeoutMs > 0 {
		p["timeoutMs"] = timeoutMs
	}
	b, _ := json.Marshal(p)
	return b
}

// TestEveryRun: the consumer files every run in the runs index, not only those that wait: a
// run waits, runs on, stopped waiting because what it asked expired, completed or was
// cancelled, each listed newest activity first, found by its status, its id's start or a word
// of a title, and an ended run's entry goes with its log.
func TestEveryRun(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	h, _ := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	step := func(run string, do func() error) {
		t.Helper()
		clock.Set(clock.Now().Add(time.Minute))
		if err := do(); err != nil {
			t.Fatalf("%s: %v", run, err)
		}
		hosttest.Reindex(t, h, alice, run)
	}
	request := func(run, node, title string, timeoutMs int) func() error {
		return func() error {
			_, _, err := h.RequestInterrupt(ctx, engine, run, host.Request{NodeID: node, Payload: titled(node, title, timeoutMs)})
			return err
		}
	}
	step("pay-1", request("pay-1", "approve", "Pay invoice 4471", 0))
	step("pay-2", request("pay-2", "approve", "Pay invoice 4472", 0))
	step("ship-1", request("ship-1", "pick", "Ship order 7", 30_000))
	step("pay-2", func() error {
		_, err := h.Resolve(ctx, alice, "pay-2", "approve", json.RawMessage(`{"action":"accept","decidedAt":"2026-12-01T09:00:00Z"}`), nil)
		return err
	})
	step("pay-1", func() error {
		_, err := h.EndRun(ctx, alice, "pay-1", interrupt.RunCancelled, "duplicate")
		return err
	})
	step("ship-1", func() error {
		_, err := h.Sweep(ctx)
		return err
	})
	step("done", request("done", "ask", "Which carrier?", 0))
	step("done", func() error {
		_, err := h.EndRun(ctx, alice, "done", interrupt.RunCompleted, "")
		return err
	})
	step("wait", request("wait", "ask", "Which carrier for order 9?", 0))

	list := func(search host.RunSearch) []string {
		t.Helper()
		var got []string
		for {
			page, _, err := h.Runs(ctx, alice, search)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Runs {
				got = append(got, e.Key.RunID+":"+string(e.Phase))
			}
			if page.Next == "" {
				return got
			}
			search.After = page.Next
		}
	}
	for _, tt := range []struct {
		name   string
		search host.RunSearch
		want   []string
	}{
		{"every run, newest activity first", host.RunSearch{},
			[]string{"wait:waiting", "done:completed", "ship-1:expired", "pay-1:cancelled", "pay-2:running"}},
		{"a page at a time", host.RunSearch{Limit: 2},
			[]string{"wait:waiting", "done:completed", "ship-1:expired", "pay-1:cancelled", "pay-2:running"}},
		{"cancelled", host.RunSearch{Status: "cancelled"}, []string{"pay-1:cancelled"}},
		{"stopped waiting", host.RunSearch{Status: "expired"}, []string{"ship-1:expired"}},
		{"waits", host.RunSearch{Status: "waiting"}, []string{"wait:waiting"}},
		{"a run id's start, in id order", host.RunSearch{Text: "pay"}, []string{"pay-1:cancelled", "pay-2:running"}},
		{"a word no run id starts with: titles", host.RunSearch{Text: "invoice"}, []string{"pay-1:cancelled", "pay-2:running"}},
		{"a word of a title, a page at a time", host.RunSearch{Text: "carrier", Limit: 1}, []string{"wait:waiting", "done:completed"}},
		{"words", host.RunSearch{Text: "Invoice 4472"}, []string{"pay-2:running"}},
		{"words and a status", host.RunSearch{Text: "carrier", Status: "completed"}, []string{"done:completed"}},
		{"a time range", host.RunSearch{Since: t0.Add(5 * time.Minute), Until: t0.Add(8 * time.Minute)}, []string{"ship-1:expired", "pay-1:cancelled"}},
	} {
		if got := list(tt.search); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	for _, bad := range []host.RunSearch{
		{Status: "waiting-approval"}, {Since: t0.Add(time.Hour), Until: t0}, {Text: "a b c d e f g h i"},
	} {
		if _, _, err := h.Runs(ctx, alice, bad); interrupt.ErrorCode(err) != interrupt.CodeValidation {
			t.Errorf("%+v: %v, want a validation error", bad, err)
		}
	}
	other := interrupt.Principal{Subject: "mallory", Tenant: "evilcorp"}
	if page, _, err := h.Runs(ctx, other, host.RunSearch{}); err != nil || len(page.Runs) != 0 {
		t.Errorf("another tenant lists %+v %v, want nothing", page, err)
	}
}

// TestARunEntry: a run's entry says its phase as its log stands, its titles newest first, and
// the expiry of an ended run's log.
func TestARunEntry(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	h, l := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	k := runlog.Key{Tenant: alice.Tenant, RunID: "r1"}
	for _, node := range []string{"a", "b"} {
		if _, _, err := h.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: node, Payload: titled(node, "Step "+node, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.EndRun(ctx, alice, "r1", interrupt.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	cp, commits, err := l.Tail(ctx, k)
	if err != nil || cp != nil {
		t.Fatal(cp, err)
	}
	st, err := runlog.Fold(commits)
	if err != nil {
		t.Fatal(err)
	}
	e := st.RunEntry(k, 30*24*time.Hour)
	if e.Phase != runlog.PhaseCompleted || e.Waiting != 0 || !slices.Equal(e.Titles, []string{"Step b", "Step a"}) ||
		!e.Expires.Equal(e.At.Add(30*24*time.Hour)) || e.Seq != 3 || e.Words() != " step b a " {
		t.Errorf("entry %+v (words %q)", e, e.Words())
	}
}
