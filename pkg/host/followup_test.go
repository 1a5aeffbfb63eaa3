package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// followUps are a run's interrupt.reminded and interrupt.escalated payloads, in order, as
// "reminded 1 [principal:alice ...]" and "escalated [group:ops]".
func followUps(t *testing.T, h *host.Host, run string) []string {
	t.Helper()
	page, err := h.Events(context.Background(), hosttest.Who("engine"), run, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range page.Events {
		switch e.Type {
		case interrupt.EventReminded:
			var r interrupt.Reminded
			if err := json.Unmarshal(e.Payload, &r); err != nil {
				t.Fatal(err)
			}
			s := fmt.Sprintf("reminded %d", r.Reminder)
			for _, to := range r.Recipients {
				s += " " + to.String()
			}
			out = append(out, s)
		case interrupt.EventEscalated:
			var x interrupt.Escalated
			if err := json.Unmarshal(e.Payload, &x); err != nil {
				t.Fatal(err)
			}
			s := "escalated"
			for _, to := range x.To {
				s += " " + to.String()
			}
			out = append(out, s)
		}
	}
	return out
}

// TestRemindersAndEscalation: an approval's reminders go, each once, to whom has not voted, on
// the sweep that finds them due; its escalation once, to the refs it names; none once it closed;
// and an overlapping sweep records nothing twice.
func TestRemindersAndEscalation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 10, 0, time.UTC)
	clock := testclock.New(t0)
	h, _ := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	req := host.Request{NodeID: "gate", Payload: approvalWith(`,"approversList":["alice","bob"],"approverGroupRefs":["finance"],"requiredApprovals":2`),
		FollowUp: interrupt.FollowUp{
			Reminders:  &interrupt.Reminders{AfterMs: 1000, EveryMs: 1000, Count: 3},
			Escalation: &interrupt.Escalation{AfterMs: 1500, To: []interrupt.Ref{{Kind: "group", Ref: "ops"}}},
		}}
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", req); err != nil {
		t.Fatal(err)
	}
	sweepAt := func(after time.Duration) {
		t.Helper()
		clock.Set(t0.Add(after))
		if _, err := h.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	sweepAt(500 * time.Millisecond)
	if got := followUps(t, h, "r1"); len(got) != 0 {
		t.Fatalf("before anything is due: %v", got)
	}
	sweepAt(time.Second)
	alice := interrupt.Principal{Subject: "alice", Tenant: "acme", Groups: []string{"finance"}}
	if _, err := h.Resolve(ctx, alice, "r1", "gate", decision("accept"), nil); err != nil {
		t.Fatal(err)
	}
	sweepAt(2 * time.Second)
	sweepAt(2 * time.Second) // an overlapping sweep records nothing again
	want := []string{"reminded 1 principal:alice principal:bob group:finance", "escalated group:ops", "reminded 2 principal:bob group:finance"}
	if got := followUps(t, h, "r1"); !slices.Equal(got, want) {
		t.Fatalf("follow-ups %v, want %v", got, want)
	}
	bob := interrupt.Principal{Subject: "bob", Tenant: "acme", Groups: []string{"finance"}}
	if _, err := h.Resolve(ctx, bob, "r1", "gate", decision("accept"), nil); err != nil {
		t.Fatal(err)
	}
	sweepAt(5 * time.Second)
	if got := followUps(t, h, "r1"); !slices.Equal(got, want) {
		t.Errorf("after it closed: %v, want %v", got, want)
	}
}

// TestFollowUpRules: bounds are refused at their member, a kind no person decides takes none,
// the deployment's defaults fill what the request leaves out, and a refusal writes nothing.
func TestFollowUpRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	defaults := interrupt.FollowUp{Reminders: &interrupt.Reminders{AfterMs: 60000, Count: 1}}
	clock := testclock.New(time.Date(2026, 11, 30, 9, 0, 10, 0, time.UTC))
	h, _ := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Config.FollowUp, s.Env.Now = defaults, clock.Now })
	for _, c := range []struct {
		name string
		f    interrupt.FollowUp
		path string
	}{
		{"a reminder too soon", interrupt.FollowUp{Reminders: &interrupt.Reminders{AfterMs: 10, Count: 1}}, "/reminders/afterMs"},
		{"too many reminders", interrupt.FollowUp{Reminders: &interrupt.Reminders{AfterMs: 1000, EveryMs: 1000, Count: 11}}, "/reminders/count"},
		{"reminders without a period", interrupt.FollowUp{Reminders: &interrupt.Reminders{AfterMs: 1000, Count: 2}}, "/reminders/everyMs"},
		{"an escalation to no one", interrupt.FollowUp{Escalation: &interrupt.Escalation{AfterMs: 1000}}, "/escalation/to"},
		{"an escalation to a ref of no kind", interrupt.FollowUp{Escalation: &interrupt.Escalation{AfterMs: 1000, To: []interrupt.Ref{{Kind: "team", Ref: "ops"}}}}, "/escalation/to/0"},
	} {
		_, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "n", Payload: approvalWith(``), FollowUp: c.f})
		var e *interrupt.Error
		if !errors.As(err, &e) || e.Code != interrupt.CodeValidation || len(e.Fields) == 0 || e.Fields[0].Path != c.path {
			t.Errorf("%s: %v, want 400 at %s", c.name, err, c.path)
		}
	}
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r2", host.Request{NodeID: "n", Payload: hosttest.Custom("k"), FollowUp: interrupt.FollowUp{Reminders: &interrupt.Reminders{AfterMs: 1000, Count: 1}}}); interrupt.ErrorCode(err) != interrupt.CodeValidation {
		t.Errorf("a custom interrupt with reminders: %v", err)
	}
	for _, run := range []string{"r1", "r2"} {
		if _, err := h.Snapshot(ctx, hosttest.Who("engine"), run); interrupt.ErrorCode(err) != interrupt.CodeNotFound {
			t.Errorf("a refused request wrote %s: %v", run, err)
		}
	}
	// The defaults: a reminder a minute on, to the approval's audience.
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r3", host.Request{NodeID: "n", Payload: approvalWith(`,"audience":["carol"]`)}); err != nil {
		t.Fatal(err)
	}
	clock.Set(clock.Now().Add(time.Minute))
	if _, err := h.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := followUps(t, h, "r3"); !slices.Equal(got, []string{"reminded 1 principal:carol"}) {
		t.Errorf("the default reminder: %v", got)
	}
}

// TestRemindersOutlastALaggingSweep: a sweep that comes long after a reminder was due files the
// next ahead of now, where the sweep's cursor has not been: every reminder is still recorded.
func TestRemindersOutlastALaggingSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 10, 0, time.UTC)
	clock := testclock.New(t0)
	h, _ := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	req := host.Request{NodeID: "gate", Payload: approvalWith(`,"approversList":["alice"]`),
		FollowUp: interrupt.FollowUp{Reminders: &interrupt.Reminders{AfterMs: 1000, EveryMs: 1000, Count: 3}}}
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", req); err != nil {
		t.Fatal(err)
	}
	// Three minutes late: the minute the reminders were due in is closed, and the cursor passes
	// it.
	for _, at := range []time.Duration{3 * time.Minute, 3*time.Minute + 2*time.Second, 3*time.Minute + 4*time.Second, 3*time.Minute + 6*time.Second} {
		clock.Set(t0.Add(at))
		if _, err := h.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"reminded 1 principal:alice", "reminded 2 principal:alice", "reminded 3 principal:alice"}
	if got := followUps(t, h, "r1"); !slices.Equal(got, want) {
		t.Errorf("follow-ups %v, want %v", got, want)
	}
}
