package outbound_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/keyring"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// secrets is the subscriptions' secret store of the tests.
type secrets struct {
	mu sync.Mutex
	m  map[string][]string
}

func (s *secrets) Put(_ context.Context, id string, v []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = v
	return nil
}

func (s *secrets) Get(_ context.Context, id string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id], nil
}

func (s *secrets) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}

// fixedKeyring is a keyring secret's value that never changes.
type fixedKeyring string

func (f fixedKeyring) Fetch(context.Context) ([]byte, error) { return []byte(f), nil }

// world is a host's outbound side over in-memory stores, with receivers on 127.0.0.1.
type world struct {
	t       *testing.T
	clock   *testclock.Clock
	log     *inmem.Store
	store   *inmem.Outbound
	secrets *secrets
	keys    token.Keys
	subs    *outbound.Subscriptions
	d       *outbound.Deliverer
	// metrics holds the deliverer's EMF lines.
	metrics *bytes.Buffer
}

func newWorld(t *testing.T) *world {
	t.Helper()
	c := testclock.New(time.Now().UTC().Truncate(time.Millisecond))
	keys, err := keyring.New(context.Background(), fixedKeyring(`{"active":"k1","keys":{"k1":"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}}`), keyring.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, clock: c, log: inmem.New(), store: inmem.NewOutbound(), secrets: &secrets{m: map[string][]string{}}, keys: keys, metrics: &bytes.Buffer{}}
	w.subs = &outbound.Subscriptions{Store: w.store, Secrets: w.secrets, Targets: outbound.Targets{AllowPrivate: true}, Now: c.Now}
	w.d = &outbound.Deliverer{
		Store: w.store, Log: w.log, Secrets: w.secrets, Client: outbound.NewHTTPClient(true),
		Links: outbound.Links{Keys: keys, BaseURL: "https://host.example"}, Now: c.Now,
		Metrics: metrics.New(w.metrics, "test"),
	}
	return w
}

// counted is the total of the deliverer's metric name with dims.
func (w *world) counted(name metrics.Name, dims ...metrics.Dim) float64 {
	w.t.Helper()
	ps, err := metrics.Read(bytes.NewReader(w.metrics.Bytes()))
	if err != nil {
		w.t.Fatal(err)
	}
	return metrics.Total(ps, name, dims...)
}

func outcome(o string) metrics.Dim { return metrics.Dim{Name: metrics.DimOutcome, Value: o} }

// receiver is a subscriber's endpoint: it verifies every delivery with the Standard Webhooks
// reference library and keeps the verified ones; fail decides, per delivery, to answer 500.
type receiver struct {
	t      *testing.T
	url    string
	secret string
	mu     sync.Mutex
	got    []delivery
	tries  map[string]int
	fail   func(id string, try int) bool
	ignore bool // skip the timestamp check (the test's clock ran ahead of the real one)
}

type delivery struct {
	ID  string
	Msg outbound.Message
	Raw []byte
}

func (w *world) receiver() *receiver {
	r := &receiver{t: w.t, tries: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	w.t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *receiver) serve(rw http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	wh, err := standardwebhooks.NewWebhook(r.secret)
	if err != nil {
		r.t.Errorf("secret %q: %v", r.secret, err)
		return
	}
	if r.ignore {
		err = wh.VerifyIgnoringTimestamp(body, req.Header)
	} else {
		err = wh.Verify(body, req.Header)
	}
	if err != nil {
		r.t.Errorf("delivery %s does not verify: %v", req.Header.Get("webhook-id"), err)
		rw.WriteHeader(http.StatusUnauthorized)
		return
	}
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	r.tries[id]++
	try := r.tries[id]
	r.mu.Unlock()
	if r.fail != nil && r.fail(id, try) {
		rw.WriteHeader(http.StatusInternalServerError)
		return
	}
	var m outbound.Message
	if err := json.Unmarshal(body, &m); err != nil {
		r.t.Errorf("delivery %s: %v", id, err)
	}
	r.mu.Lock()
	r.got = append(r.got, delivery{ID: id, Msg: m, Raw: body})
	r.mu.Unlock()
	rw.WriteHeader(http.StatusNoContent)
}

// ids are the delivered webhook-ids in arrival order, each once (a receiver dedupes on them).
func (r *receiver) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, d := range r.got {
		if !seen[d.ID] {
			seen[d.ID] = true
			out = append(out, d.ID)
		}
	}
	return out
}

func (w *world) subscribe(tenant string, r *receiver, events ...string) outbound.Subscription {
	w.t.Helper()
	created, err := w.subs.Create(context.Background(), interrupt.Principal{Subject: "ops", Tenant: tenant}, outbound.Request{URL: r.url, Events: events})
	if err != nil {
		w.t.Fatal(err)
	}
	r.secret = created.Secret
	return created.Subscription
}

const approval = `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay <inv-1> & more","actions":["accept","reject"],"approversList":["alice","bob"]}}`

// commit appends a commit of events to the run's log and returns it as the stream carries it.
func (w *world) commit(tenant, run string, events ...runlog.Event) outbound.Committed {
	w.t.Helper()
	k := runlog.Key{Tenant: tenant, RunID: run}
	prev, err := w.log.Read(context.Background(), k, 0, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	c := runlog.Commit{Seq: int64(len(prev) + 1), ID: fmt.Sprint("c", len(prev)+1), At: w.clock.Now(), Events: events}
	if err := w.log.Append(context.Background(), k, c); err != nil {
		w.t.Fatal(err)
	}
	return outbound.Committed{Key: k, Commit: c}
}

func requested(node, id, payload string) runlog.Event {
	return runlog.Event{Type: interrupt.EventRequested, NodeID: node, InterruptID: id, Payload: json.RawMessage(payload)}
}

func resolved(node, id string) runlog.Event {
	return runlog.Event{Type: interrupt.EventResolved, NodeID: node, InterruptID: id,
		Payload: json.RawMessage(`{"nodeId":"` + node + `","interruptId":"` + id + `","kind":"approval","resumeValue":{"action":"accept"}}`)}
}

func (w *world) deliver(batch ...outbound.Committed) outbound.Report {
	w.t.Helper()
	r, errs := w.d.Commits(context.Background(), batch)
	for i, err := range errs {
		if err != nil {
			w.t.Fatalf("commit %d: %v", i, err)
		}
	}
	return r
}

func (w *world) retries() outbound.Report {
	w.t.Helper()
	r, err := w.d.Retries(context.Background(), 100)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// TestDeliversEveryEventSignedAndInOrder: every event of the run, as list-events returns it,
// signed (verified by the reference library), in seq order, under its webhook-id.
func TestDeliversEveryEventSignedAndInOrder(t *testing.T) {
	w := newWorld(t)
	r := w.receiver()
	w.subscribe("acme", r, "*")
	c1 := w.commit("acme", "run-1", requested("approve", "i1", approval))
	c2 := w.commit("acme", "run-1", resolved("approve", "i1"))
	w.deliver(c1, c2)
	want := []string{"run-1:1:0", "run-1:1:1", "run-1:2:0", "run-1:2:1"}
	if got := r.ids(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("delivered %v, want %v", got, want)
	}
	envs := append(c1.Commit.Envelopes("run-1"), c2.Commit.Envelopes("run-1")...)
	for i, d := range r.got {
		e, _ := json.Marshal(envs[i])
		got, _ := json.Marshal(d.Msg.Data)
		if string(got) != string(e) || d.Msg.Type != envs[i].Type || d.Msg.Timestamp != envs[i].At {
			t.Errorf("delivery %d: %s, want the envelope %s", i, d.Raw, e)
		}
	}
	if !strings.Contains(string(r.got[0].Raw), `"title":"Pay <inv-1> & more"`) {
		t.Errorf("the payload was re-encoded: %s", r.got[0].Raw)
	}
	// The stream delivers at least once: the same commit again delivers nothing more.
	w.deliver(c2)
	if n := len(r.got); n != 4 {
		t.Errorf("a commit seen twice was delivered again: %d deliveries", n)
	}
}

// TestSubscriptionsGetWhatTheyName: the event types a subscription names, of its tenant only.
func TestSubscriptionsGetWhatTheyName(t *testing.T) {
	w := newWorld(t)
	resolvedOnly, other, legacy := w.receiver(), w.receiver(), w.receiver()
	w.subscribe("acme", resolvedOnly, interrupt.EventResolved)
	w.subscribe("globex", other, "*")
	w.subscribe("acme", legacy, "approval.requested", "approval.resolved")
	w.deliver(w.commit("acme", "run-1", requested("approve", "i1", approval)), w.commit("acme", "run-1", resolved("approve", "i1")))
	if got := resolvedOnly.ids(); strings.Join(got, " ") != "run-1:2:0" {
		t.Errorf("interrupt.resolved subscriber got %v", got)
	}
	if got := legacy.ids(); strings.Join(got, " ") != "run-1:1:1 run-1:2:1" {
		t.Errorf("legacy subscriber got %v", got)
	}
	if got := other.ids(); len(got) != 0 {
		t.Errorf("another tenant's subscriber got %v", got)
	}
}

// TestFailedDeliveriesAreRetriedInOrder: a receiver that fails the first attempts gets the
// event later, and the run's later events after it, once each; the attempts are listed.
func TestFailedDeliveriesAreRetriedInOrder(t *testing.T) {
	w := newWorld(t)
	r := w.receiver()
	r.fail = func(id string, try int) bool { return id == "run-1:1:0" && try <= 2 }
	sub := w.subscribe("acme", r, interrupt.EventRequested, interrupt.EventResolved)
	w.deliver(w.commit("acme", "run-1", requested("approve", "i1", approval)))
	w.deliver(w.commit("acme", "run-1", resolved("approve", "i1")))
	if got := r.ids(); len(got) != 0 {
		t.Fatalf("delivered %v past a failed event", got)
	}
	if rep := w.retries(); rep.Retries != 0 {
		t.Fatalf("a retry ran before its backoff: %+v", rep)
	}
	w.clock.Advance(outbound.Backoff[0])
	if rep := w.retries(); rep.Retries != 1 || rep.Retrying != 1 {
		t.Fatalf("second attempt: %+v", rep)
	}
	w.clock.Advance(outbound.Backoff[1])
	if rep := w.retries(); rep.Delivered != 2 {
		t.Fatalf("third attempt: %+v", rep)
	}
	if got := r.ids(); strings.Join(got, " ") != "run-1:1:0 run-1:2:0" {
		t.Fatalf("delivered %v", got)
	}
	// After the retrier caught up, the stream delivers the run's new commits again.
	w.deliver(w.commit("acme", "run-1", requested("next", "i2", approval)))
	if got := r.ids(); len(got) != 3 {
		t.Fatalf("after the catch-up: %v", got)
	}
	attempts, err := w.subs.Deliveries(context.Background(), interrupt.Principal{Tenant: "acme"}, sub.ID)
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
	if d, r, f := w.counted(metrics.Delivered), w.counted(metrics.DeliveryFailures, outcome("retrying")), w.counted(metrics.DeliveryFailures, outcome("failed")); d != 3 || r != 2 || f != 0 {
		t.Errorf("metrics: %v delivered, %v failures retrying, %v failed; want 3, 2, 0", d, r, f)
	}
}

// TestAnEventFailingForADayIsRecordedFailed: past MaxRetryAge the event is recorded as failed
// and the run's next events follow it.
func TestAnEventFailingForADayIsRecordedFailed(t *testing.T) {
	w := newWorld(t)
	r := w.receiver()
	r.ignore = true
	r.fail = func(id string, _ int) bool { return id == "run-1:1:0" }
	sub := w.subscribe("acme", r, interrupt.EventRequested, interrupt.EventResolved)
	w.deliver(w.commit("acme", "run-1", requested("approve", "i1", approval)), w.commit("acme", "run-1", resolved("approve", "i1")))
	for range 40 {
		w.clock.Advance(outbound.Backoff[len(outbound.Backoff)-1])
		w.retries()
	}
	if got := r.ids(); strings.Join(got, " ") != "run-1:2:0" {
		t.Fatalf("delivered %v, want the next event after the failed one", got)
	}
	attempts, _ := w.subs.Deliveries(context.Background(), interrupt.Principal{Tenant: "acme"}, sub.ID)
	if attempts[1].EventID != "run-1:1:0" || attempts[1].Status != outbound.StatusFailed {
		t.Errorf("the failed event's last attempt: %+v", attempts[1])
	}
	if due := w.retries(); due.Retries != 0 {
		t.Errorf("retries left: %+v", due)
	}
	if got := w.counted(metrics.DeliveryFailures, outcome("failed")); got != 1 {
		t.Errorf("%v events counted as given up on, want 1", got)
	}
}

// TestADeadReceiverDelaysNoOther: while one receiver hangs, another subscription's receiver
// gets the same commit; the hanging one is tried once per pass, not once per run.
func TestADeadReceiverDelaysNoOther(t *testing.T) {
	w := newWorld(t)
	live := w.receiver()
	got := make(chan struct{})
	var once sync.Once
	live.fail = func(string, int) bool { once.Do(func() { close(got) }); return false }
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
	w.subscribe("acme", live, "*")
	deadSub := &receiver{url: dead.URL}
	w.subscribe("acme", deadSub, "*")
	rep := w.deliver(w.commit("acme", "run-1", requested("a", "i1", approval)), w.commit("acme", "run-2", requested("a", "i2", approval)))
	if len(live.ids()) != 4 {
		t.Errorf("live receiver got %v", live.ids())
	}
	if hangs != 1 || rep.Retrying != 1 {
		t.Errorf("the dead receiver was tried %d times in one pass (%+v), want once", hangs, rep)
	}
}

// TestApprovalLinks: a subscription's deliveries carry plain links, which name the interrupt
// and hold no credential; only interrupt.requested carries them, not its alias nor later events.
func TestApprovalLinks(t *testing.T) {
	w := newWorld(t)
	r := w.receiver()
	w.subscribe("acme", r, interrupt.EventRequested, "approval.requested", interrupt.EventResolved)
	w.deliver(w.commit("acme", "run-1", requested("approve", "i1", approval)), w.commit("acme", "run-1", resolved("approve", "i1")))
	if len(r.got) != 3 {
		t.Fatalf("got %d deliveries", len(r.got))
	}
	approvers := []outbound.Recipient{{Kind: "principal", Ref: "alice"}, {Kind: "principal", Ref: "bob"}}
	want := []outbound.Link{{URL: "https://host.example/approve/run-1/i1", ExpiresAt: w.clock.Now().Add(time.Hour).Format(runlog.TimeFormat), For: approvers}}
	if links := r.got[0].Msg.Links; !reflect.DeepEqual(links, want) || !reflect.DeepEqual(r.got[0].Msg.Audience, approvers) {
		t.Errorf("audience %+v, links %+v, want %+v", r.got[0].Msg.Audience, links, want)
	}
	for _, d := range r.got[1:] {
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
	w := newWorld(t)
	r := w.receiver()
	delegate := interrupt.Principal{Subject: "mailer", Tenant: "acme", Scopes: []string{interrupt.ScopeTokensDelegate}}
	created, err := w.subs.Create(context.Background(), delegate, outbound.Request{URL: r.url, Events: []string{interrupt.EventRequested}, ApprovalLinks: outbound.LinksSigned})
	if err != nil {
		t.Fatal(err)
	}
	r.secret = created.Secret
	open := `{"kind":"approval","key":"k2","data":{"artifactId":"a","artifactType":"doc","title":"t","actions":["accept"]}}`
	quorum := `{"kind":"approval","key":"k3","data":{"artifactId":"a","artifactType":"doc","title":"t","actions":["accept"],"requiredApprovals":2}}`
	w.deliver(w.commit("acme", "run-1", requested("approve", "i1", approval), requested("open", "i2", open), requested("quorum", "i3", quorum)))
	if len(r.got) != 3 {
		t.Fatalf("got %d deliveries", len(r.got))
	}
	jtis := map[string]bool{}
	check := func(l outbound.Link, principal, node string, deadline time.Time) {
		t.Helper()
		raw, ok := strings.CutPrefix(l.URL, "https://host.example/approve/")
		if !ok || l.Principal != principal {
			t.Fatalf("link %+v", l)
		}
		c, err := token.Verify(context.Background(), w.keys, raw)
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
	links := r.got[0].Msg.Links
	if len(links) != 2 {
		t.Fatalf("links %+v", links)
	}
	check(links[0], "alice", "approve", w.clock.Now().Add(time.Hour))
	check(links[1], "bob", "approve", w.clock.Now().Add(time.Hour))
	if links := r.got[1].Msg.Links; len(links) != 1 || links[0].URL != "https://host.example/approve/run-1/i2" {
		t.Errorf("an approval without approvers or audience has links %+v, want the plain one", links)
	}
	if links := r.got[2].Msg.Links; len(links) != 1 || links[0].URL != "https://host.example/approve/run-1/i3" {
		t.Errorf("an approval of quorum 2 without approvers has links %+v, want the plain one", links)
	}

	at := w.clock.Now()
	c := runlog.Commit{Seq: 1, At: at, By: "engine", Events: []runlog.Event{requested("approve", "i1", approval)}}
	env := c.Envelopes("run-1")[0]
	first, err := w.d.Links.For(context.Background(), created.Subscription, c, env, at)
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.d.Links.For(context.Background(), created.Subscription, c, env, at.Add(30*time.Minute))
	if err != nil || !reflect.DeepEqual(first, again) {
		t.Errorf("a redelivery's links differ: %+v, then %+v (%v)", first, again, err)
	}
	// The mailer requested this one itself: its own request's links hold no token.
	c.By = "mailer"
	if own, err := w.d.Links.For(context.Background(), created.Subscription, c, env, at); err != nil || len(own.Links) != 1 || own.Links[0].URL != "https://host.example/approve/run-1/i1" {
		t.Errorf("the requester's own subscription got links %+v %v, want the plain one", own, err)
	}
}

// TestNotificationsReachTheAudience: a delivery is for the approval's audience when it names
// one, else for the union of its eligibility refs, each typed by the field naming it, and every
// link says whom it is for. Signed links go only to principals, and only where approversList
// alone binds (a token carries no memberships); groups, roles and untyped refs get the plain
// link, by which their people sign in.
func TestNotificationsReachTheAudience(t *testing.T) {
	w := newWorld(t)
	delegate := interrupt.Principal{Subject: "mailer", Tenant: "acme", Scopes: []string{interrupt.ScopeTokensDelegate}}
	created, err := w.subs.Create(context.Background(), delegate, outbound.Request{URL: w.receiver().url, Events: []string{interrupt.EventRequested}, ApprovalLinks: outbound.LinksSigned})
	if err != nil {
		t.Fatal(err)
	}
	signed, plain := created.Subscription, outbound.Subscription{Tenant: "acme", Format: outbound.FormatStandard}
	p, g, r, ref := func(s string) outbound.Recipient { return outbound.Recipient{Kind: "principal", Ref: s} },
		func(s string) outbound.Recipient { return outbound.Recipient{Kind: "group", Ref: s} },
		func(s string) outbound.Recipient { return outbound.Recipient{Kind: "role", Ref: s} },
		func(s string) outbound.Recipient { return outbound.Recipient{Kind: "ref", Ref: s} }
	tests := []struct {
		name, data string
		sub        outbound.Subscription
		audience   []outbound.Recipient
		// links are the principal of each link ("-" for the plain one) and whom it is for.
		links map[string][]outbound.Recipient
	}{
		{"the audience, typed", `"approversList":["alice","bob"],"approverGroupRefs":["ops"],"audience":["alice","ops","pager"]`, plain,
			[]outbound.Recipient{p("alice"), g("ops"), ref("pager")}, map[string][]outbound.Recipient{"-": {p("alice"), g("ops"), ref("pager")}}},
		{"the union without an audience", `"approverGroupRefs":["ops"],"approverRoleRefs":["manager"]`, plain,
			[]outbound.Recipient{g("ops"), r("manager")}, map[string][]outbound.Recipient{"-": {g("ops"), r("manager")}}},
		{"groups get no token", `"approverGroupRefs":["ops"],"approverRoleRefs":["manager"]`, signed,
			[]outbound.Recipient{g("ops"), r("manager")}, map[string][]outbound.Recipient{"-": {g("ops"), r("manager")}}},
		{"a list beside a group gets no token", `"approversList":["alice"],"approverGroupRefs":["ops"]`, signed,
			[]outbound.Recipient{p("alice"), g("ops")}, map[string][]outbound.Recipient{"-": {p("alice"), g("ops")}}},
		{"signed links for the audience's principals", `"approversList":["alice","bob"],"audience":["bob","finance-desk"]`, signed,
			[]outbound.Recipient{p("bob"), ref("finance-desk")}, map[string][]outbound.Recipient{"bob": {p("bob")}, "-": {ref("finance-desk")}}},
		{"signed links for the list", `"approversList":["alice","bob"]`, signed,
			[]outbound.Recipient{p("alice"), p("bob")}, map[string][]outbound.Recipient{"alice": {p("alice")}, "bob": {p("bob")}}},
		{"no link for the requester in the list", `"approversList":["engine","bob","carol"]`, signed,
			[]outbound.Recipient{p("engine"), p("bob"), p("carol")}, map[string][]outbound.Recipient{"bob": {p("bob")}, "carol": {p("carol")}}},
		// The probe: an open approval (any one vote releases) whose audience names its requester
		// gave a link without principal, and the requester resolved through it.
		{"an open approval's audience, each as itself", `"audience":["engine","bob"]`, signed,
			[]outbound.Recipient{ref("engine"), ref("bob")}, map[string][]outbound.Recipient{"bob": {ref("bob")}}},
		{"an open approval's audience of the requester alone", `"audience":["engine"]`, signed,
			[]outbound.Recipient{ref("engine")}, map[string][]outbound.Recipient{"-": nil}},
		{"an open approval without an audience", ``, signed,
			nil, map[string][]outbound.Recipient{"-": nil}},
	}
	at := w.clock.Now()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `"artifactId":"a","artifactType":"doc","title":"t","actions":["accept"]`
			if tt.data != "" {
				data += "," + tt.data
			}
			payload := `{"kind":"approval","key":"k","data":{` + data + `}}`
			c := runlog.Commit{Seq: 1, At: at, By: "engine", Events: []runlog.Event{requested("approve", "i1", payload)}}
			n, err := w.d.Links.For(context.Background(), tt.sub, c, c.Envelopes("run-1")[0], at)
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
	w := newWorld(t)
	r := w.receiver()
	for _, c := range []struct {
		name   string
		who    interrupt.Principal
		format string
		code   interrupt.Code
	}{
		{"without tokens:delegate", interrupt.Principal{Subject: "ops", Tenant: "acme", Scopes: []string{"subscriptions:manage"}}, "", interrupt.CodeForbidden},
		{"to slack", interrupt.Principal{Subject: "ops", Tenant: "acme", Scopes: []string{interrupt.ScopeTokensDelegate}}, outbound.FormatSlack, interrupt.CodeValidation},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := w.subs.Create(context.Background(), c.who, outbound.Request{URL: r.url, Events: []string{"*"}, Format: c.format, ApprovalLinks: outbound.LinksSigned})
			if got := interrupt.ErrorCode(err); got != c.code {
				t.Errorf("%v, want %s", err, c.code)
			}
		})
	}
	subs, err := w.store.Subscriptions(context.Background(), "acme")
	if err != nil || len(subs) != 0 {
		t.Errorf("refused subscriptions were stored: %+v %v", subs, err)
	}
}

// countingStore counts the reads of subscriptions.
type countingStore struct {
	*inmem.Outbound
	mu    sync.Mutex
	reads int
}

func (c *countingStore) Subscriptions(ctx context.Context, tenant string) ([]outbound.Subscription, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Outbound.Subscriptions(ctx, tenant)
}

// TestABatchReadsEachTenantsSubscriptionsOnce: a stream batch holds many commits of few
// tenants; their subscriptions are read once per tenant, not once per commit.
func TestABatchReadsEachTenantsSubscriptionsOnce(t *testing.T) {
	w := newWorld(t)
	r := w.receiver()
	w.subscribe("acme", r, "*")
	counting := &countingStore{Outbound: w.store}
	w.d.Store = counting
	var batch []outbound.Committed
	for i := range 10 {
		batch = append(batch, w.commit("acme", fmt.Sprint("run-", i), requested("n", "i", approval)))
		batch = append(batch, w.commit("globex", fmt.Sprint("run-", i), requested("n", "i", approval)))
	}
	w.deliver(batch...)
	if counting.reads != 2 || len(r.ids()) != 20 {
		t.Errorf("%d reads of subscriptions, %d deliveries; want 2 and 20", counting.reads, len(r.ids()))
	}
}

// TestANewRunOfARetiredIDIsDelivered: a run whose id was used before (its commits expired) is
// written over the old items; the stream brings those commits as rewrites, and the old run's
// cursor does not hide them.
func TestANewRunOfARetiredIDIsDelivered(t *testing.T) {
	w := newWorld(t)
	r := w.receiver()
	w.subscribe("acme", r, interrupt.EventRequested)
	w.deliver(w.commit("acme", "run-1", requested("a", "i1", approval)), w.commit("acme", "run-1", requested("b", "i2", approval)))
	again := outbound.Committed{Key: runlog.Key{Tenant: "acme", RunID: "run-1"}, Commit: runlog.Commit{
		Seq: 1, ID: "new-c1", At: w.clock.Now().Add(31 * 24 * time.Hour), Events: []runlog.Event{requested("x", "i9", approval)},
	}}
	w.deliver(again) // as an insert the stream would never send: taken for a repeat
	if n := len(r.got); n != 2 {
		t.Fatalf("%d deliveries after a repeated commit", n)
	}
	again.Rewrite = true
	w.deliver(again)
	if n := len(r.got); n != 3 || r.got[2].Msg.Data.InterruptID != "i9" {
		t.Fatalf("the new run's first commit was not delivered: %d", n)
	}
}

// unrecorded fails the first RecordAttempt, as a table write that did not land.
type unrecorded struct {
	*inmem.Outbound
	failed atomic.Bool
}

func (u *unrecorded) RecordAttempt(ctx context.Context, tenant, subscription string, a outbound.Attempt, expires time.Time) error {
	if u.failed.CompareAndSwap(false, true) {
		return errors.New("the table did not answer")
	}
	return u.Outbound.RecordAttempt(ctx, tenant, subscription, a, expires)
}

// TestAnAttemptIsCountedOnceRecorded: a delivery whose attempt could not be recorded is an
// error (the stream delivers the commit again) and is not counted; the delivery that follows
// is counted once.
func TestAnAttemptIsCountedOnceRecorded(t *testing.T) {
	w := newWorld(t)
	r := w.receiver()
	w.subscribe("acme", r, interrupt.EventRequested)
	w.d.Store = &unrecorded{Outbound: w.store}
	c := w.commit("acme", "run-1", requested("approve", "i1", approval))
	if _, errs := w.d.Commits(context.Background(), []outbound.Committed{c}); errs[0] == nil {
		t.Fatal("a delivery whose attempt was not recorded succeeded")
	}
	if got := w.counted(metrics.Delivered); got != 0 {
		t.Errorf("%v counted before the attempt was recorded", got)
	}
	w.deliver(c)
	if got := w.counted(metrics.Delivered); got != 1 {
		t.Errorf("%v counted, want the one recorded", got)
	}
}
