package outbound_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/outboundtest"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

func outcome(o string) metrics.Dim { return metrics.Dim{Name: metrics.DimOutcome, Value: o} }

// TestDeliversEveryEventSignedAndInOrder: every event of the run, as list-events returns it,
// signed (verified by the reference library), in seq order, under its webhook-id.
func TestDeliversEveryEventSignedAndInOrder(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver()
	w.Subscribe("acme", r, "*")
	c1 := w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval))
	c2 := w.Commit("acme", "run-1", outboundtest.Resolved("approve", "i1"))
	w.Deliver(c1, c2)
	want := []string{"run-1:1:0", "run-1:1:1", "run-1:2:0", "run-1:2:1"}
	if got := r.IDs(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	envs := append(c1.Commit.Envelopes("run-1"), c2.Commit.Envelopes("run-1")...)
	for i, d := range r.Got {
		e, _ := json.Marshal(envs[i])
		got, _ := json.Marshal(d.Msg.Data)
		if string(got) != string(e) || d.Msg.Type != envs[i].Type || d.Msg.Timestamp != envs[i].At {
			t.Errorf("delivery %d: %s, want the envelope %s", i, d.Raw, e)
		}
	}
	if !strings.Contains(string(r.Got[0].Raw), `"title":"Pay <inv-1> & more"`) {
		t.Errorf("the payload was re-encoded: %s", r.Got[0].Raw)
	}
	// The stream delivers at least once: the same commit again delivers nothing more.
	w.Deliver(c2)
	if n := len(r.Got); n != 4 {
		t.Errorf("a commit seen twice was delivered again: %d deliveries", n)
	}
}

// TestSubscriptionsGetWhatTheyName: the event types a subscription names, of its tenant only.
func TestSubscriptionsGetWhatTheyName(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	resolvedOnly, other, legacy := w.Receiver(), w.Receiver(), w.Receiver()
	w.Subscribe("acme", resolvedOnly, interrupt.EventResolved)
	w.Subscribe("globex", other, "*")
	w.Subscribe("acme", legacy, "approval.requested", "approval.resolved")
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval)), w.Commit("acme", "run-1", outboundtest.Resolved("approve", "i1")))
	if got := resolvedOnly.IDs(); strings.Join(got, " ") != "run-1:2:0" {
		t.Errorf("interrupt.resolved subscriber got %v", got)
	}
	if got := legacy.IDs(); strings.Join(got, " ") != "run-1:1:1 run-1:2:1" {
		t.Errorf("legacy subscriber got %v", got)
	}
	if got := other.IDs(); len(got) != 0 {
		t.Errorf("another tenant's subscriber got %v", got)
	}
}

// TestFailedDeliveriesAreRetriedInOrder: a receiver that fails the first attempts gets the
// event later, and the run's later events after it, once each; the attempts are listed.
func TestFailedDeliveriesAreRetriedInOrder(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver()
	r.Fail = func(id string, try int) bool { return id == "run-1:1:0" && try <= 2 }
	sub := w.Subscribe("acme", r, interrupt.EventRequested, interrupt.EventResolved)
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval)))
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Resolved("approve", "i1")))
	if got := r.IDs(); len(got) != 0 {
		t.Fatalf("delivered %v past a failed event", got)
	}
	if rep := w.Retries(); rep.Retries != 0 {
		t.Fatalf("a retry ran before its backoff: %+v", rep)
	}
	w.Clock.Advance(outbound.Backoff[0])
	if rep := w.Retries(); rep.Retries != 1 || rep.Retrying != 1 {
		t.Fatalf("second attempt: %+v", rep)
	}
	w.Clock.Advance(outbound.Backoff[1])
	if rep := w.Retries(); rep.Delivered != 2 {
		t.Fatalf("third attempt: %+v", rep)
	}
	if got := r.IDs(); strings.Join(got, " ") != "run-1:1:0 run-1:2:0" {
		t.Fatalf("delivered %v", got)
	}
	// After the retrier caught up, the stream delivers the run's new commits again.
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("next", "i2", outboundtest.Approval)))
	if got := r.IDs(); len(got) != 3 {
		t.Fatalf("after the catch-up: %v", got)
	}
	attempts, err := w.Subs.Deliveries(context.Background(), interrupt.Principal{Tenant: "acme"}, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, a := range attempts {
		summary = append(summary, fmt.Sprintf("%s/%s/%d", a.EventID, a.Status, a.Attempts))
	}
	want := "run-1:3:0/delivered/1 run-1:2:0/delivered/1 run-1:1:0/delivered/3 run-1:1:0/retrying/2 run-1:1:0/retrying/1"
	if strings.Join(summary, " ") != want {
		t.Errorf("attempts %v, want %s", summary, want)
	}
	if attempts[4].StatusCode != 500 || attempts[4].LastError == "" {
		t.Errorf("a failed attempt says %+v", attempts[4])
	}
	if d, r, f := w.Counted(metrics.Delivered), w.Counted(metrics.DeliveryFailures, outcome("retrying")), w.Counted(metrics.DeliveryFailures, outcome("failed")); d != 3 || r != 2 || f != 0 {
		t.Errorf("metrics: %v delivered, %v failures retrying, %v failed; want 3, 2, 0", d, r, f)
	}
}

// TestAnEventFailingForADayIsRecordedFailed: past MaxRetryAge the event is recorded as failed
// and the run's next events follow it.
func TestAnEventFailingForADayIsRecordedFailed(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver()
	r.Ignore = true
	r.Fail = func(id string, _ int) bool { return id == "run-1:1:0" }
	sub := w.Subscribe("acme", r, interrupt.EventRequested, interrupt.EventResolved)
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval)), w.Commit("acme", "run-1", outboundtest.Resolved("approve", "i1")))
	for range 40 {
		w.Clock.Advance(outbound.Backoff[len(outbound.Backoff)-1])
		w.Retries()
	}
	if got := r.IDs(); strings.Join(got, " ") != "run-1:2:0" {
		t.Fatalf("delivered %v, want the next event after the failed one", got)
	}
	attempts, _ := w.Subs.Deliveries(context.Background(), interrupt.Principal{Tenant: "acme"}, sub.ID)
	if attempts[1].EventID != "run-1:1:0" || attempts[1].Status != outbound.StatusFailed {
		t.Errorf("the failed event's last attempt: %+v", attempts[1])
	}
	if due := w.Retries(); due.Retries != 0 {
		t.Errorf("retries left: %+v", due)
	}
	if got := w.Counted(metrics.DeliveryFailures, outcome("failed")); got != 1 {
		t.Errorf("%v events counted as given up on, want 1", got)
	}
}

// TestADeadReceiverDelaysNoOther: while one receiver hangs, another subscription's receiver
// gets the same commit; the hanging one is tried once per pass, not once per run.
func TestADeadReceiverDelaysNoOther(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	live := w.Receiver()
	got := make(chan struct{})
	var once sync.Once
	live.Fail = func(string, int) bool { once.Do(func() { close(got) }); return false }
	var hung sync.Mutex
	hangs := 0
	dead := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		hung.Lock()
		hangs++
		hung.Unlock()
		select {
		case <-got: // the live receiver was served while this one hung
			rw.WriteHeader(http.StatusServiceUnavailable)
		case <-req.Context().Done():
			t.Error("the live receiver was not served while the dead one hung")
		}
	}))
	defer dead.Close()
	w.Subscribe("acme", live, "*")
	deadSub := &outboundtest.Receiver{URL: dead.URL}
	w.Subscribe("acme", deadSub, "*")
	rep := w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("a", "i1", outboundtest.Approval)), w.Commit("acme", "run-2", outboundtest.Requested("a", "i2", outboundtest.Approval)))
	if len(live.IDs()) != 4 {
		t.Errorf("live receiver got %v", live.IDs())
	}
	if hangs != 1 || rep.Retrying != 1 {
		t.Errorf("the dead receiver was tried %d times in one pass (%+v), want once", hangs, rep)
	}
}

// TestApprovalLinks: a subscription's deliveries carry plain links, which name the interrupt
// and hold no credential; only interrupt.requested carries them, not its alias nor later events.
func TestApprovalLinks(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver()
	w.Subscribe("acme", r, interrupt.EventRequested, "approval.requested", interrupt.EventResolved)
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval)), w.Commit("acme", "run-1", outboundtest.Resolved("approve", "i1")))
	if len(r.Got) != 3 {
		t.Fatalf("got %d deliveries", len(r.Got))
	}
	approvers := []outbound.Recipient{{Kind: "principal", Ref: "alice"}, {Kind: "principal", Ref: "bob"}}
	want := []outbound.Link{{URL: "https://host.example/approve/run-1/i1", ExpiresAt: w.Clock.Now().Add(time.Hour).Format(runlog.TimeFormat), For: approvers}}
	if links := r.Got[0].Msg.Links; !reflect.DeepEqual(links, want) || !reflect.DeepEqual(r.Got[0].Msg.Audience, approvers) {
		t.Errorf("audience %+v, links %+v, want %+v", r.Got[0].Msg.Audience, links, want)
	}
	for _, d := range r.Got[1:] {
		if d.Msg.Links != nil || strings.Contains(string(d.Raw), "links") || strings.Contains(string(d.Raw), "ow2.") {
			t.Errorf("%s carries links: %s", d.Msg.Type, d.Raw)
		}
	}
}

// TestSignedApprovalLinks: a subscription whose creator holds tokens:delegate and asked for
// signed links gets one per approver of approversList, a resolve token for that principal
// expiring at the deadline at the latest; never one without principal (an open approval
// without an audience gets the plain link); the plain link where no one person's link decides.
// Every attempt carries the same link.
func TestSignedApprovalLinks(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver()
	delegate := interrupt.Principal{Subject: "mailer", Tenant: "acme", Scopes: []string{interrupt.ScopeTokensDelegate}}
	created, err := w.Subs.Create(context.Background(), delegate, outbound.Request{URL: r.URL, Events: []string{interrupt.EventRequested}, ApprovalLinks: outbound.LinksSigned})
	if err != nil {
		t.Fatal(err)
	}
	r.Secret = created.Secret
	open := `{"kind":"approval","key":"k2","data":{"artifactId":"a","artifactType":"doc","title":"t","actions":["accept"]}}`
	quorum := `{"kind":"approval","key":"k3","data":{"artifactId":"a","artifactType":"doc","title":"t","actions":["accept"],"requiredApprovals":2}}`
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval), outboundtest.Requested("open", "i2", open), outboundtest.Requested("quorum", "i3", quorum)))
	if len(r.Got) != 3 {
		t.Fatalf("got %d deliveries", len(r.Got))
	}
	jtis := map[string]bool{}
	check := func(l outbound.Link, principal, node string, deadline time.Time) {
		t.Helper()
		raw, ok := strings.CutPrefix(l.URL, "https://host.example/approve/")
		if !ok || l.Principal != principal {
			t.Fatalf("link %+v", l)
		}
		c, err := token.Verify(context.Background(), w.Keys, raw)
		if err != nil {
			t.Fatal(err)
		}
		if c.Sub != principal || c.Intent != token.IntentResolve || c.NodeID != node || c.Tenant != "acme" || c.RunID != "run-1" || c.ExpiresAt > deadline.UnixMilli() {
			t.Errorf("link token %+v", c)
		}
		if jtis[c.JTI] {
			t.Errorf("two links share token id %s", c.JTI)
		}
		jtis[c.JTI] = true
	}
	links := r.Got[0].Msg.Links
	if len(links) != 2 {
		t.Fatalf("links %+v", links)
	}
	check(links[0], "alice", "approve", w.Clock.Now().Add(time.Hour))
	check(links[1], "bob", "approve", w.Clock.Now().Add(time.Hour))
	if links := r.Got[1].Msg.Links; len(links) != 1 || links[0].URL != "https://host.example/approve/run-1/i2" {
		t.Errorf("an approval without approvers or audience has links %+v, want the plain one", links)
	}
	if links := r.Got[2].Msg.Links; len(links) != 1 || links[0].URL != "https://host.example/approve/run-1/i3" {
		t.Errorf("an approval of quorum 2 without approvers has links %+v, want the plain one", links)
	}

	at := w.Clock.Now()
	c := runlog.Commit{Seq: 1, At: at, By: "engine", Events: []runlog.Event{outboundtest.Requested("approve", "i1", outboundtest.Approval)}}
	env := c.Envelopes("run-1")[0]
	first, err := w.D.Links.For(context.Background(), created.Subscription, c, env, at)
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.D.Links.For(context.Background(), created.Subscription, c, env, at.Add(30*time.Minute))
	if err != nil || !reflect.DeepEqual(first, again) {
		t.Errorf("a redelivery's links differ: %+v, then %+v (%v)", first, again, err)
	}
	// The mailer requested this one itself: its own request's links hold no token.
	c.By = "mailer"
	if own, err := w.D.Links.For(context.Background(), created.Subscription, c, env, at); err != nil || len(own.Links) != 1 || own.Links[0].URL != "https://host.example/approve/run-1/i1" {
		t.Errorf("the requester's own subscription got links %+v %v, want the plain one", own, err)
	}
}

// TestNotificationsReachTheAudience: a delivery is for the approval's audience when it names
// one, else for the union of its eligibility refs, each typed by the field naming it, and every
// link says whom it is for. Signed links go only to principals, and only where approversList
// alone binds (a token carries no memberships); groups, roles and untyped refs get the plain
// link, by which their people sign in.
func TestNotificationsReachTheAudience(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	delegate := interrupt.Principal{Subject: "mailer", Tenant: "acme", Scopes: []string{interrupt.ScopeTokensDelegate}}
	created, err := w.Subs.Create(context.Background(), delegate, outbound.Request{URL: w.Receiver().URL, Events: []string{interrupt.EventRequested}, ApprovalLinks: outbound.LinksSigned})
	if err != nil {
		t.Fatal(err)
	}
	signed, plain := created.Subscription, outbound.Subscription{Tenant: "acme", Format: outbound.FormatStandard}
	p, g, r := func(s string) outbound.Recipient { return outbound.Recipient{Kind: "principal", Ref: s} },
		func(s string) outbound.Recipient { return outbound.Recipient{Kind: "group", Ref: s} },
		func(s string) outbound.Recipient { return outbound.Recipient{Kind: "role", Ref: s} }
	tests := []struct {
		name, data string
		sub        outbound.Subscription
		audience   []outbound.Recipient
		// links are the principal of each link ("-" for the plain one) and whom it is for.
		links map[string][]outbound.Recipient
	}{
		// An audience ref no eligibility field names is a principal (looked up as one).
		{"the audience, typed", `"approversList":["alice","bob"],"approverGroupRefs":["ops"],"audience":["alice","ops","pager"]`, plain,
			[]outbound.Recipient{p("alice"), g("ops"), p("pager")}, map[string][]outbound.Recipient{"-": {p("alice"), g("ops"), p("pager")}}},
		{"the union without an audience", `"approverGroupRefs":["ops"],"approverRoleRefs":["manager"]`, plain,
			[]outbound.Recipient{g("ops"), r("manager")}, map[string][]outbound.Recipient{"-": {g("ops"), r("manager")}}},
		{"groups get no token", `"approverGroupRefs":["ops"],"approverRoleRefs":["manager"]`, signed,
			[]outbound.Recipient{g("ops"), r("manager")}, map[string][]outbound.Recipient{"-": {g("ops"), r("manager")}}},
		{"a list beside a group gets no token", `"approversList":["alice"],"approverGroupRefs":["ops"]`, signed,
			[]outbound.Recipient{p("alice"), g("ops")}, map[string][]outbound.Recipient{"-": {p("alice"), g("ops")}}},
		{"signed links for the audience's principals", `"approversList":["alice","bob"],"audience":["bob","finance-desk"]`, signed,
			[]outbound.Recipient{p("bob"), p("finance-desk")}, map[string][]outbound.Recipient{"bob": {p("bob")}, "-": {p("finance-desk")}}},
		{"signed links for the list", `"approversList":["alice","bob"]`, signed,
			[]outbound.Recipient{p("alice"), p("bob")}, map[string][]outbound.Recipient{"alice": {p("alice")}, "bob": {p("bob")}}},
		{"no link for the requester in the list", `"approversList":["engine","bob","carol"]`, signed,
			[]outbound.Recipient{p("engine"), p("bob"), p("carol")}, map[string][]outbound.Recipient{"bob": {p("bob")}, "carol": {p("carol")}}},
		// The probe: an open approval (any one vote releases) whose audience names its requester
		// gave a link without principal, and the requester resolved through it.
		{"an open approval's audience, each as itself", `"audience":["engine","bob"]`, signed,
			[]outbound.Recipient{p("engine"), p("bob")}, map[string][]outbound.Recipient{"bob": {p("bob")}}},
		{"an open approval's audience of the requester alone", `"audience":["engine"]`, signed,
			[]outbound.Recipient{p("engine")}, map[string][]outbound.Recipient{"-": nil}},
		{"an open approval without an audience", ``, signed,
			nil, map[string][]outbound.Recipient{"-": nil}},
	}
	at := w.Clock.Now()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `"artifactId":"a","artifactType":"doc","title":"t","actions":["accept"]`
			if tt.data != "" {
				data += "," + tt.data
			}
			payload := `{"kind":"approval","key":"k","data":{` + data + `}}`
			c := runlog.Commit{Seq: 1, At: at, By: "engine", Events: []runlog.Event{outboundtest.Requested("approve", "i1", payload)}}
			n, err := w.D.Links.For(context.Background(), tt.sub, c, c.Envelopes("run-1")[0], at)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(n.Audience, tt.audience) {
				t.Errorf("audience %+v, want %+v", n.Audience, tt.audience)
			}
			got := map[string][]outbound.Recipient{}
			for _, l := range n.Links {
				who := l.Principal
				if strings.HasSuffix(l.URL, "/approve/run-1/i1") {
					who = "-"
				} else if !strings.Contains(l.URL, "/approve/ow2.") {
					t.Errorf("link %s is neither plain nor signed", l.URL)
				}
				got[who] = l.For
			}
			if !reflect.DeepEqual(got, tt.links) {
				t.Errorf("links %+v, want %+v", got, tt.links)
			}
		})
	}
}

// TestSignedLinksNeedDelegation: signed links are a person's credential; a subscription gets
// them only when its creator holds tokens:delegate, and never to a Slack channel.
func TestSignedLinksNeedDelegation(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver()
	for _, c := range []struct {
		name   string
		who    interrupt.Principal
		format string
		code   interrupt.Code
	}{
		{"without tokens:delegate", interrupt.Principal{Subject: "ops", Tenant: "acme", Scopes: []string{"subscriptions:manage"}}, "", interrupt.CodeForbidden},
		{"to slack", interrupt.Principal{Subject: "ops", Tenant: "acme", Scopes: []string{interrupt.ScopeTokensDelegate}}, "slack", interrupt.CodeValidation},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := w.Subs.Create(context.Background(), c.who, outbound.Request{URL: r.URL, Events: []string{"*"}, Format: c.format, ApprovalLinks: outbound.LinksSigned})
			if got := interrupt.ErrorCode(err); got != c.code {
				t.Errorf("%v, want %s", err, c.code)
			}
		})
	}
	subs, err := w.Store.Subscriptions(context.Background(), "acme")
	if err != nil || len(subs) != 0 {
		t.Errorf("refused subscriptions were stored: %+v %v", subs, err)
	}
}

// countingStore counts the reads of subscriptions.
type countingStore struct {
	outbound.Store
	mu    sync.Mutex
	reads int
}

func (c *countingStore) Subscriptions(ctx context.Context, tenant string) ([]outbound.Subscription, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Store.Subscriptions(ctx, tenant)
}

// TestABatchReadsEachTenantsSubscriptionsOnce: a stream batch holds many commits of few
// tenants; their subscriptions are read once per tenant, not once per commit.
func TestABatchReadsEachTenantsSubscriptionsOnce(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver()
	w.Subscribe("acme", r, "*")
	counting := &countingStore{Store: w.Store}
	w.D.Store = counting
	var batch []runlog.StreamRecord
	for i := range 10 {
		batch = append(batch, w.Commit("acme", fmt.Sprint("run-", i), outboundtest.Requested("n", "i", outboundtest.Approval)))
		batch = append(batch, w.Commit("globex", fmt.Sprint("run-", i), outboundtest.Requested("n", "i", outboundtest.Approval)))
	}
	w.Deliver(batch...)
	if counting.reads != 2 || len(r.IDs()) != 20 {
		t.Errorf("%d reads of subscriptions, %d deliveries; want 2 and 20", counting.reads, len(r.IDs()))
	}
}

// TestANewRunOfARetiredIDIsDelivered: a run whose id was used before (its commits expired) is
// written over the old items; the stream brings those commits as rewrites, and the old run's
// cursor does not hide them.
func TestANewRunOfARetiredIDIsDelivered(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver()
	w.Subscribe("acme", r, interrupt.EventRequested)
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("a", "i1", outboundtest.Approval)), w.Commit("acme", "run-1", outboundtest.Requested("b", "i2", outboundtest.Approval)))
	again := runlog.StreamRecord{Key: runlog.Key{Tenant: "acme", RunID: "run-1"}, Commit: runlog.Commit{
		Seq: 1, ID: "new-c1", At: w.Clock.Now().Add(31 * 24 * time.Hour), Events: []runlog.Event{outboundtest.Requested("x", "i9", outboundtest.Approval)},
	}}
	w.Deliver(again) // as an insert the stream would never send: taken for a repeat
	if n := len(r.Got); n != 2 {
		t.Fatalf("%d deliveries after a repeated commit", n)
	}
	again.Rewrite = true
	w.Deliver(again)
	if n := len(r.Got); n != 3 || r.Got[2].Msg.Data.InterruptID != "i9" {
		t.Fatalf("the new run's first commit was not delivered: %d", n)
	}
}

// unrecorded fails the first RecordAttempt, as a table write that did not land.
type unrecorded struct {
	outbound.Store
	failed atomic.Bool
}

func (u *unrecorded) RecordAttempt(ctx context.Context, tenant, subscription string, a outbound.Attempt, expires time.Time) error {
	if u.failed.CompareAndSwap(false, true) {
		return errors.New("the table did not answer")
	}
	return u.Store.RecordAttempt(ctx, tenant, subscription, a, expires)
}

// TestAnAttemptIsCountedOnceRecorded: a delivery whose attempt could not be recorded is an
// error (the stream delivers the commit again) and is not counted; the delivery that follows
// is counted once.
func TestAnAttemptIsCountedOnceRecorded(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver()
	w.Subscribe("acme", r, interrupt.EventRequested)
	w.D.Store = &unrecorded{Store: w.Store}
	c := w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval))
	if _, errs := w.D.Commits(context.Background(), []runlog.StreamRecord{c}); errs[0] == nil {
		t.Fatal("a delivery whose attempt was not recorded succeeded")
	}
	if got := w.Counted(metrics.Delivered); got != 0 {
		t.Errorf("%v counted before the attempt was recorded", got)
	}
	w.Deliver(c)
	if got := w.Counted(metrics.Delivered); got != 1 {
		t.Errorf("%v counted, want the one recorded", got)
	}
}

// TestATenantsEventsAreDelivered: a delegation set and ended, the tenant's own events
// (runlog.TenantLog), reach the subscriptions that name them, signed and in order, as a run's
// events do; "*" does not imply them (its receivers expect a run's); another tenant's
// subscription gets none of them.
func TestATenantsEventsAreDelivered(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	named, all, other := w.Receiver(), w.Receiver(), w.Receiver()
	w.Subscribe("acme", named, interrupt.EventDelegationSet, interrupt.EventDelegationEnded)
	w.Subscribe("acme", all, "*")
	w.Subscribe("globex", other, "*")
	event := func(typ string, version int64) runlog.Event {
		e, err := runlog.NewEvent(typ, "", "", interrupt.DelegationChanged{Principal: "alice", Delegate: "bob", From: w.Clock.Now(), Until: w.Clock.Now().Add(time.Hour), By: "alice", Version: version})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	w.Deliver(w.Commit("acme", runlog.TenantLog, event(interrupt.EventDelegationSet, 1)), w.Commit("acme", runlog.TenantLog, event(interrupt.EventDelegationEnded, 2)))
	got := named.Deliveries()
	if len(got) != 2 || got[0].Msg.Type != interrupt.EventDelegationSet || got[1].Msg.Type != interrupt.EventDelegationEnded || got[0].Msg.Data.RunID != runlog.TenantLog {
		t.Errorf("the subscriber naming them got %+v", got)
	}
	for name, r := range map[string]*outboundtest.Receiver{"*": all, "another tenant's": other} {
		if got := r.IDs(); len(got) != 0 {
			t.Errorf("%s subscriber got %v", name, got)
		}
	}
}
