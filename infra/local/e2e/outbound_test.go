package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
)

// newClient is the engine's client of the stack's gateway, as tok.
func newClient(t *testing.T, tok devjwt.Token) *client.Client {
	t.Helper()
	localaws.NeedsStack(t)
	c := client.New(gatewayURL(), client.WithBearer(jwt(t, tok)))
	c.PollInterval = 250 * time.Millisecond
	return c
}

// operator can do everything in a tenant of its own, so that no other test's events reach its
// subscriptions.
func operator(t *testing.T) devjwt.Token {
	return devjwt.Token{Subject: "ops", Tenant: newRun("tenant"), Scopes: []string{"interrupts:write", "approvals:respond", "runs:read", "subscriptions:manage"}}
}

// subscriber is a subscription's receiver on 127.0.0.1: every delivery is verified with the
// Standard Webhooks reference library, then handed to the client's Receiver (which dedupes
// and wakes Await); fail makes it answer 503 to chosen attempts.
type subscriber struct {
	t        *testing.T
	url      string
	sub      client.Subscription
	receiver *client.Receiver
	fail     func(id string, attempt int) bool

	mu       sync.Mutex
	attempts map[string]int
	got      []client.Delivery
	arrived  chan struct{}
}

func subscribe(t *testing.T, c *client.Client, events ...string) *subscriber {
	t.Helper()
	return subscribeWith(t, c, nil, events...)
}

// subscribeWith is subscribe with options (signed links).
func subscribeWith(t *testing.T, c *client.Client, opts []client.SubscribeOption, events ...string) *subscriber {
	t.Helper()
	s := &subscriber{t: t, attempts: map[string]int{}, arrived: make(chan struct{}, 1000)}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	sub, err := c.Subscribe(context.Background(), srv.URL+"/hooks", events, "standard-webhooks", opts...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sub.Secret, "whsec_") {
		t.Fatalf("subscription %+v", sub)
	}
	s.sub, s.url = sub, srv.URL
	s.receiver = client.NewReceiver(sub.Secret)
	s.receiver.OnDelivery = func(d client.Delivery) {
		s.mu.Lock()
		s.got = append(s.got, d)
		s.mu.Unlock()
		s.arrived <- struct{}{}
	}
	t.Cleanup(func() { _ = c.Unsubscribe(context.Background(), sub.ID) })
	return s
}

func (s *subscriber) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	wh, err := standardwebhooks.NewWebhook(s.sub.Secret)
	if err == nil {
		err = wh.Verify(body, req.Header)
	}
	if err != nil {
		s.t.Errorf("delivery %s does not verify with the reference library: %v", req.Header.Get("webhook-id"), err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	id := req.Header.Get("webhook-id")
	s.mu.Lock()
	s.attempts[id]++
	n := s.attempts[id]
	s.mu.Unlock()
	if s.fail != nil && s.fail(id, n) {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	s.receiver.ServeHTTP(w, req)
}

// await waits until n distinct deliveries arrived, for at most 30 s.
func (s *subscriber) await(n int) []client.Delivery {
	s.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		got := append([]client.Delivery(nil), s.got...)
		s.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-s.arrived:
		case <-timeout:
			s.t.Fatalf("%d deliveries after 30 s, want %d", len(got), n)
		}
	}
}

const approvalWithApprovers = `{"kind":"approval","key":"pay-1","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay <inv-1> & co","actions":["accept","reject"],"requiredApprovals":1,"approversList":["alice","bob"]}}`

// TestOutboundJourney: subscribe a receiver, request an approval whose delivery carries a link
// to its page (which asks the approver to sign in), resolve it as an approver, and the receiver gets every event of the run, signed, in order, as
// list-events returns them; Await returns the resolution; another tenant's subscription gets
// nothing, and a dead subscription of the same tenant holds nothing up.
func TestOutboundJourney(t *testing.T) {
	ctx := context.Background()
	op := operator(t)
	c := newClient(t, op)
	rcv := subscribe(t, c, "*")
	dead, err := c.Subscribe(ctx, "http://127.0.0.1:9/nobody", []string{"*"}, "standard-webhooks")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Unsubscribe(ctx, dead.ID) }()
	other := subscribe(t, newClient(t, operator(t)), "*")

	run := newRun("outbound")
	if _, err := c.Request(ctx, run, "approve", json.RawMessage(approvalWithApprovers), nil); err != nil {
		t.Fatal(err)
	}
	got := rcv.await(2) // interrupt.requested and approval.requested
	if got[0].Type != "interrupt.requested" || len(got[0].Links) != 1 || got[0].Links[0].Principal != "" {
		t.Fatalf("first delivery %+v", got[0])
	}
	// The link names the interrupt and holds no credential: opening it asks for a sign-in with
	// the deployment's identity provider, and decides nothing.
	link := got[0].Links[0].URL
	path, ok := strings.CutPrefix(link, gatewayURL()+"/approve/")
	if !ok || path != run+"/"+got[0].Data.InterruptID {
		t.Fatalf("link %s is not the gateway's approval page of the interrupt", link)
	}
	opened, err := noRedirects.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	opened.Body.Close()
	if opened.StatusCode != 303 || !strings.HasPrefix(opened.Header.Get("Location"), devjwt.IssuerAt(gatewayURL())+"/authorize?") {
		t.Fatalf("the link's page: %d %s", opened.StatusCode, opened.Header.Get("Location"))
	}
	// bob decides as himself.
	bob := newClient(t, devjwt.Token{Subject: "bob", Tenant: op.Tenant, Scopes: []string{"approvals:respond"}})
	res, err := bob.Resolve(ctx, run, "approve", map[string]any{"action": "accept", "decidedAt": "2026-11-30T09:00:00Z"})
	if err != nil || res.Status != "resolved" || !strings.Contains(string(res.ResumeValue), `"decidedBy":"bob"`) {
		t.Fatalf("bob resolves: %+v %v", res, err)
	}
	out, err := c.Await(ctx, run, "approve", rcv.receiver)
	if err != nil || out.Status != "resolved" || !strings.Contains(string(out.ResumeValue), `"action":"accept"`) {
		t.Fatalf("await: %+v %v", out, err)
	}
	// Woken by deliveries or polling, by node or by id: one outcome.
	polled, err := c.Await(ctx, run, "approve", nil)
	byID, err2 := c.AwaitInterrupt(ctx, run, out.InterruptID, nil)
	if err != nil || err2 != nil || !reflect.DeepEqual(polled, out) || !reflect.DeepEqual(byID, out) {
		t.Errorf("the outcome woken by deliveries %+v, polled %+v (%v), by id %+v (%v)", out, polled, err, byID, err2)
	}

	page, err := c.Events(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	got = rcv.await(len(page.Events))
	if len(got) != len(page.Events) {
		t.Fatalf("%d deliveries, %d events", len(got), len(page.Events))
	}
	for i, e := range page.Events {
		want, _ := json.Marshal(e)
		have, _ := json.Marshal(got[i].Data)
		if string(want) != string(have) || got[i].Type != e.Type || got[i].Timestamp != e.At {
			t.Errorf("delivery %d: %s, want %s", i, have, want)
		}
		if awaited, _ := json.Marshal(out.Event); e.Type == "interrupt.resolved" && string(have) != string(awaited) {
			t.Errorf("the delivered resolution %s is not the awaited outcome's event %s", have, awaited)
		}
	}
	if n := len(other.got); n != 0 {
		t.Errorf("another tenant's subscription got %d deliveries", n)
	}
	attemptsUntil(t, c, dead.ID, func(attempts []client.Attempt) bool {
		return len(attempts) > 0 && attempts[0].Status == "retrying" && strings.Contains(attempts[0].LastError, "refused")
	})
}

// TestFailedDeliveriesArriveLater: a receiver that fails the first two attempts of the run's
// first event and the first attempt of each other gets each later, from the stack's retry-deliveries, once after dedupe and in seq order; the
// subscription's deliveries list the attempts: each event delivered, and the refused ones.
func TestFailedDeliveriesArriveLater(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, operator(t))
	rcv := subscribe(t, c, "interrupt.requested", "interrupt.resolved")
	run := newRun("retried")
	rcv.fail = func(id string, attempt int) bool { return attempt == 1 || (id == run+":1:0" && attempt == 2) }
	for _, node := range []string{"a", "b"} {
		payload := `{"kind":"custom","key":"` + node + `","data":{"customKind":"x"}}`
		if _, err := c.Request(ctx, run, node, json.RawMessage(payload), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Resolve(ctx, run, node, map[string]any{"ok": true}); err != nil {
			t.Fatal(err)
		}
	}
	got := rcv.await(4)
	var ids []string
	for _, d := range got {
		ids = append(ids, d.ID)
	}
	want := []string{run + ":1:0", run + ":2:0", run + ":3:0", run + ":4:0"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("delivered %v, want %v", ids, want)
	}
	// The deliverer records an attempt once the receiver has answered it. Delivery is at least
	// once (an answer too slow for the deliverer gets its event sent again), so an event may
	// show more than one delivered attempt: what must hold is that each of the four events, and
	// no other, was delivered, and that each attempt the receiver refused is listed retrying.
	delivered := map[string]bool{}
	attemptsUntil(t, c, rcv.sub.ID, func(attempts []client.Attempt) bool {
		clear(delivered)
		retrying := 0
		for _, a := range attempts {
			switch a.Status {
			case "delivered":
				delivered[a.EventID] = true
			case "retrying":
				retrying++
			}
		}
		return len(delivered) == len(want) && !slices.ContainsFunc(want, func(id string) bool { return !delivered[id] }) && retrying >= 5
	})
}

// attemptsUntil reads a subscription's attempts until ok says they are all there, for at most
// 10 s: the deliverer records an attempt after its receiver answered, in another process.
func attemptsUntil(t *testing.T, c *client.Client, id string, ok func([]client.Attempt) bool) {
	t.Helper()
	var attempts []client.Attempt
	var err error
	for give := time.Now().Add(10 * time.Second); time.Now().Before(give); <-time.After(100 * time.Millisecond) {
		if attempts, err = c.Deliveries(context.Background(), id); err == nil && ok(attempts) {
			return
		}
	}
	t.Errorf("subscription %s's attempts: %+v %v", id, attempts, err)
}

// TestSubscriptionRules: an http URL, a private target or an unknown event type is refused with
// 400 and the failing field (the stack allows private targets: a URL resolving nowhere and a
// bad scheme are what it refuses); another tenant cannot read a subscription.
func TestSubscriptionRules(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, operator(t))
	for _, bad := range []struct{ url, event, path string }{
		{"ftp://127.0.0.1/x", "*", "/url"},
		{"https://127.0.0.1/x#frag", "*", "/url"},
		{"https://127.0.0.1/x", "interrupt.nothing", "/events/0"},
	} {
		_, err := c.Subscribe(ctx, bad.url, []string{bad.event}, "")
		var p *client.Problem
		if !errors.As(err, &p) || p.Status != 400 || p.Code != "validation_error" || len(p.Errors) != 1 || p.Errors[0].Path != bad.path {
			t.Errorf("%s %s: %v %+v", bad.url, bad.event, err, p)
		}
	}
	sub, err := c.Subscribe(ctx, "https://127.0.0.1/hooks", []string{"run.completed"}, "slack")
	if err != nil || sub.Format != "slack" {
		t.Fatalf("%+v %v", sub, err)
	}
	defer func() { _ = c.Unsubscribe(ctx, sub.ID) }()
	if _, err := newClient(t, operator(t)).Deliveries(ctx, sub.ID); !client.IsCode(err, "not_found") {
		t.Errorf("another tenant read the subscription: %v", err)
	}
	a := call{method: "GET", path: "/subscriptions/" + sub.ID, bearer: jwt(t, operatorWithout())}.must(t)
	if a.Status != 403 {
		t.Errorf("without subscriptions:manage: %d %s", a.Status, a.Body)
	}
}

func operatorWithout() devjwt.Token {
	return devjwt.Token{Subject: "ops", Tenant: "acme", Scopes: []string{"runs:read"}}
}
