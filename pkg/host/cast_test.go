package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// TestACastReadsTheRunOnce: a ballot reads the run's log once, whatever becomes of it (a vote,
// the vote that releases, a repeat of a form answered from its record, a value its surface
// refuses, a second vote, a ballot after the outcome), and answers the interrupt as the
// decision left it; a refused ballot writes nothing.
func TestACastReadsTheRunOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reads := &hosttest.Reading{}
	h, log := hosttest.MemHostOn(t, func(s host.Store) host.Store { reads.Store = s; return reads })
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`
	view, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "run-1", host.Request{NodeID: "approve", Payload: json.RawMessage(payload)})
	if err != nil {
		t.Fatal(err)
	}
	accept := func(host.Opened) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"accept","decidedAt":"` + hosttest.T0.Format(runlog.TimeFormat) + `"}`), nil
	}
	errForm := errors.New("the form is not the page's")
	refused := func(host.Opened) (json.RawMessage, error) { return nil, errForm }
	ballot := func(who string, value func(host.Opened) (json.RawMessage, error), idem *host.Idempotency) host.Ballot {
		return host.Ballot{Principal: hosttest.Who(who), RunID: "run-1", InterruptID: view.InterruptID, Value: value, Idem: idem}
	}
	form := &host.Idempotency{Key: "form-1", Fingerprint: "accept"}
	for _, c := range []struct {
		name   string
		ballot host.Ballot
		err    error          // nil, or what the error is
		code   interrupt.Code // or its code
		writes int
		status interrupt.Status
		tally  int
		replay bool
	}{
		{"alice's vote", ballot("alice", accept, form), nil, "", 1, interrupt.StatusPending, 1, false},
		{"alice's form again", ballot("alice", accept, form), nil, "", 0, interrupt.StatusPending, 1, true},
		{"a value the page refuses", ballot("bob", refused, nil), errForm, "", 0, interrupt.StatusPending, 1, false},
		{"alice's second vote", ballot("alice", accept, nil), nil, interrupt.CodeAlreadyVoted, 0, interrupt.StatusPending, 1, false},
		{"carol, not named", ballot("carol", accept, nil), nil, interrupt.CodeNotEligible, 0, interrupt.StatusPending, 1, false},
		{"bob's vote releases it", ballot("bob", accept, nil), nil, "", 2, interrupt.StatusResolved, 2, false},
		{"a ballot after the outcome", ballot("bob", accept, nil), nil, interrupt.CodeAlreadyResolved, 0, interrupt.StatusResolved, 2, false},
	} {
		before, _ := log.Read(ctx, runKey("run-1"), 0, 0)
		reads.Logs = 0
		got, err := h.Cast(ctx, c.ballot)
		switch {
		case c.err != nil && !errors.Is(err, c.err), c.err == nil && c.code == "" && err != nil, c.code != "" && interrupt.ErrorCode(err) != c.code:
			t.Errorf("%s: %v, want %v%s", c.name, err, c.err, c.code)
		}
		after, _ := log.Read(ctx, runKey("run-1"), 0, 0)
		if reads.Logs != 1 || got.Interrupt.Status != c.status || got.Interrupt.Tally.Approvals != c.tally {
			t.Errorf("%s: %d reads of the log, the interrupt %s with %d approvals; want 1, %s, %d", c.name, reads.Logs, got.Interrupt.Status, got.Interrupt.Tally.Approvals, c.status, c.tally)
		}
		if events := countEvents(before, after); events != c.writes {
			t.Errorf("%s wrote %d events, want %d", c.name, events, c.writes)
		}
		if (got.Resolution.Replay != nil) != c.replay {
			t.Errorf("%s: replay %s, want a replay %v", c.name, got.Resolution.Replay, c.replay)
		}
	}
}

func runKey(run string) runlog.Key { return runlog.Key{Tenant: "acme", RunID: run} }

// countEvents is how many events the commits of after that before lacks hold.
func countEvents(before, after []runlog.Commit) int {
	n := 0
	for _, c := range after[len(before):] {
		n += len(c.Events)
	}
	return n
}

// TestATokensCastReadsTheRunOnce: a signed link's decision on the page reads the run once, as
// its principal; an inspect token's is refused 403 with the interrupt, a second vote is already
// voted, and a refusal writes nothing.
func TestATokensCastReadsTheRunOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reads := &hosttest.Reading{}
	h, log := hosttest.MemHostOn(t, func(s host.Store) host.Store { reads.Store = s; return reads })
	tokens := hosttest.Tokens(h)
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "run-1", host.Request{NodeID: "approve", Payload: json.RawMessage(payload)}); err != nil {
		t.Fatal(err)
	}
	delegate := interrupt.Principal{Subject: "mailer", Tenant: "acme", Scopes: []string{interrupt.ScopeTokensDelegate}}
	mint := func(intent, principal string) host.Grant {
		tv, err := tokens.MintToken(ctx, delegate, "run-1", "approve", host.TokenRequest{Intent: intent, Principal: principal})
		if err != nil {
			t.Fatal(err)
		}
		g, err := tokens.Verify(ctx, tv.Token)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	accept := func(host.Opened) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"accept","decidedAt":"` + hosttest.T0.Format(runlog.TimeFormat) + `"}`), nil
	}
	for _, c := range []struct {
		name   string
		grant  host.Grant
		code   interrupt.Code
		writes int
		voted  string
	}{
		{"an inspect token", mint("inspect", "alice"), interrupt.CodeForbidden, 0, ""},
		{"alice's link", mint("resolve", "alice"), "", 1, "alice"},
		{"alice's link again", mint("resolve", "alice"), interrupt.CodeAlreadyVoted, 0, "alice"},
	} {
		before, _ := log.Read(ctx, runKey("run-1"), 0, 0)
		reads.Logs = 0
		got, err := h.CastByToken(ctx, c.grant, host.Ballot{Value: accept})
		if interrupt.ErrorCode(err) != c.code || (c.code == "" && err != nil) {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
		}
		after, _ := log.Read(ctx, runKey("run-1"), 0, 0)
		if events := countEvents(before, after); events != c.writes {
			t.Errorf("%s wrote %d events, want %d", c.name, events, c.writes)
		}
		if reads.Logs != 1 || !got.Interrupt.Found() || got.Interrupt.Principal != "alice" {
			t.Errorf("%s: %d reads of the log, the interrupt %+v as %q", c.name, reads.Logs, got.Interrupt.Found(), got.Interrupt.Principal)
		}
		if voted := got.Interrupt.Voted; (voted != nil) != (c.voted != "") || (voted != nil && voted.Principal != c.voted) {
			t.Errorf("%s: voted %+v, want %q", c.name, voted, c.voted)
		}
	}
}
