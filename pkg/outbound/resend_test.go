package outbound_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/outboundtest"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

func TestParseEventID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id    string
		run   string
		seq   int64
		index int
		ok    bool
	}{
		{"run-1:3:0", "run-1", 3, 0, true},
		{"urn:run:7:12:2", "urn:run:7", 12, 2, true}, // a run id with colons of its own
		{"run-1:0:0", "", 0, 0, false},
		{"run-1:3:-1", "", 0, 0, false},
		{"run-1:3", "", 0, 0, false},
		{"run#1:3:0", "", 0, 0, false},
		{":3:0", "", 0, 0, false},
		{"run-1:x:0", "", 0, 0, false},
		{"", "", 0, 0, false},
	} {
		run, seq, index, ok := outbound.ParseEventID(tc.id)
		if ok != tc.ok || run != tc.run || seq != tc.seq || index != tc.index {
			t.Errorf("%q: %q %d %d %v, want %q %d %d %v", tc.id, run, seq, index, ok, tc.run, tc.seq, tc.index, tc.ok)
		}
	}
}

// TestResend: an event is sent again with its webhook-id and body, verified by the reference
// library, and recorded as resent; a failed resend is recorded failed and not retried; neither
// moves the run's cursor or counts as a delivery; an event the subscription was not sent (of a
// type it does not take), or that is not there, is refused and sends nothing.
func TestResend(t *testing.T) {
	ctx := context.Background()
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver()
	sub := w.Subscribe("acme", r, interrupt.EventRequested)
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval)))
	w.Commit("acme", "run-1", outboundtest.Resolved("approve", "i1"))
	before := w.Metrics.Len()
	cursor, err := w.Store.Cursor(ctx, "acme", sub.ID, "run-1")
	if err != nil {
		t.Fatal(err)
	}

	w.Clock.Advance(time.Second) // an attempt is its event at its time: the store keeps one of each
	a, err := w.D.Resend(ctx, sub, "run-1:1:0", w.D.Links.BaseURL)
	if err != nil || a.Status != outbound.StatusDelivered || !a.Resent || a.EventType != interrupt.EventRequested || a.StatusCode != 204 {
		t.Fatalf("resend: %+v %v", a, err)
	}
	if len(r.Got) != 2 || r.Got[1].ID != "run-1:1:0" || !bytes.Equal(r.Got[0].Raw, r.Got[1].Raw) {
		t.Fatalf("the receiver got %d deliveries; the resend must repeat the first's id and body", len(r.Got))
	}
	r.Fail = func(string, int) bool { return true }
	w.Clock.Advance(time.Second)
	if a, err := w.D.Resend(ctx, sub, "run-1:1:0", w.D.Links.BaseURL); err != nil || a.Status != outbound.StatusFailed || a.StatusCode != 500 || a.LastError == "" {
		t.Errorf("a failed resend: %+v %v", a, err)
	}
	for _, tc := range []struct {
		id   string
		code interrupt.Code
	}{
		{"run-1:2:0", interrupt.CodeNotFound}, // interrupt.resolved: not taken by sub, never sent
		{"run-1:9:0", interrupt.CodeNotFound},
		{"run-1:1:7", interrupt.CodeNotFound},
		{"run-2:1:0", interrupt.CodeNotFound},
		{"run-1", interrupt.CodeValidation},
	} {
		if _, err := w.D.Resend(ctx, sub, tc.id, w.D.Links.BaseURL); interrupt.ErrorCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.id, err, tc.code)
		}
	}
	other := sub
	other.Tenant = "evilcorp"
	if _, err := w.D.Resend(ctx, other, "run-1:1:0", w.D.Links.BaseURL); interrupt.ErrorCode(err) != interrupt.CodeNotFound {
		t.Errorf("another tenant's event: %v", err)
	}
	if len(r.Got) != 2 {
		t.Errorf("refused resends sent: %d deliveries", len(r.Got))
	}
	attempts, err := w.Subs.Deliveries(ctx, interrupt.Principal{Tenant: "acme"}, sub.ID)
	if err != nil || len(attempts) != 3 || !attempts[0].Resent || attempts[0].Status != outbound.StatusFailed || attempts[2].Resent {
		t.Errorf("attempts: %+v %v", attempts, err)
	}
	if rep := w.Retries(); rep.Retries != 0 {
		t.Errorf("a failed resend was scheduled for retry: %+v", rep)
	}
	if after, err := w.Store.Cursor(ctx, "acme", sub.ID, "run-1"); err != nil || after != cursor {
		t.Errorf("the cursor moved from %+v to %+v (%v)", cursor, after, err)
	}
	if ps, err := metrics.Read(bytes.NewReader(w.Metrics.Bytes()[before:])); err != nil || len(ps) != 0 {
		t.Errorf("resends were counted: %+v %v", ps, err)
	}
}

// TestResendSendsOnlyWhatWasSent: a resend repeats a delivery of the subscription's and
// nothing else. An event committed before the subscription existed (another approver's vote,
// its confidential feedback) is not found and reaches no receiver, though the subscription
// takes every type and met the run since; nor does an event of a type it does not take, should
// its attempt name another event than the log now holds (a run id reused since).
func TestResendSendsOnlyWhatWasSent(t *testing.T) {
	ctx := context.Background()
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	vote := runlog.Event{Type: interrupt.EventVoted, NodeID: "approve", InterruptID: "i1", Payload: json.RawMessage(
		`{"nodeId":"approve","interruptId":"i1","principal":"bob","action":"ask","resumeValue":{"action":"ask","feedback":"confidential: the vendor is under audit","decidedAt":"2026-11-30T09:00:00Z"},"eligibility":{"via":"open"},"tally":{"accepts":0,"rejects":0,"required":2}}`)}
	w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval))
	w.Commit("acme", "run-1", vote)
	r := w.Receiver()
	all := w.Subscribe("acme", r, "*")
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Resolved("approve", "i1")))
	if got := r.IDs(); strings.Join(got, " ") != "run-1:3:0 run-1:3:1" {
		t.Fatalf("delivered %v, want the run met at its third commit", got)
	}
	for _, id := range []string{"run-1:1:0", "run-1:2:0"} {
		_, err := w.D.Resend(ctx, all, id, w.D.Links.BaseURL)
		if interrupt.ErrorCode(err) != interrupt.CodeNotFound || !strings.Contains(err.Error(), "was not sent") {
			t.Errorf("resend of %s, committed before the subscription: %v, want not found: not sent", id, err)
		}
	}
	if a, err := w.D.Resend(ctx, all, "run-1:3:0", w.D.Links.BaseURL); err != nil || a.Status != outbound.StatusDelivered {
		t.Errorf("resend of a delivered event: %+v %v", a, err)
	}

	requests := w.Subscribe("acme", r, interrupt.EventRequested)
	stale := outbound.Attempt{EventID: "run-1:2:0", EventType: interrupt.EventRequested, RunID: "run-1", Status: outbound.StatusDelivered, Attempts: 1, At: w.Clock.Now()}
	if err := w.Store.RecordAttempt(ctx, "acme", requests.ID, stale, w.Clock.Now().Add(outbound.AttemptRetention)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.D.Resend(ctx, requests, "run-1:2:0", w.D.Links.BaseURL); interrupt.ErrorCode(err) != interrupt.CodeConflict {
		t.Errorf("a vote where the subscription's attempt had a request: %v, want conflict", err)
	}
	for _, d := range r.Got {
		if strings.Contains(string(d.Raw), "confidential") {
			t.Errorf("a receiver got the vote: %s", d.Raw)
		}
	}
}
