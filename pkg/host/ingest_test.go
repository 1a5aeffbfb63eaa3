package host_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

var standardSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// hookHost is a host and its webhooks with an in-memory log and secret store, and a Stripe
// endpoint of acme.
func hookHost(t testing.TB, wrap ...func(host.Store) host.Store) (*host.Host, *host.Webhooks, *inmem.Store, webhook.Endpoint) {
	t.Helper()
	var over func(host.Store) host.Store
	if len(wrap) > 0 {
		over = wrap[0]
	}
	h, l := hosttest.MemHostOn(t, over)
	hooks := host.NewWebhooks(h, webhook.NewCache(inmem.NewSecrets(), h.Now))
	e, err := hooks.CreateEndpoint(context.Background(), hosttest.Who("admin"), host.EndpointRequest{Provider: "stripe", Secrets: []string{hosttest.StripeSecret}})
	if err != nil {
		t.Fatal(err)
	}
	return h, hooks, l, e
}

func mustIngest(t *testing.T, hooks *host.Webhooks, e webhook.Endpoint, body []byte) host.Ingested {
	t.Helper()
	res, err := hooks.Ingest(context.Background(), e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), body)
	if err != nil {
		t.Fatalf("ingest: %v", err)
	}
	return res
}

func TestIngestResolvesWaitersOnce(t *testing.T) {
	ctx := context.Background()
	h, hooks, l, e := hookHost(t)
	for _, run := range []string{"r1", "r2"} {
		if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), run, host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-7")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r3", host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-8")}); err != nil {
		t.Fatal(err)
	}
	body := hosttest.StripeEvent("evt_1", "payment_intent.succeeded", "order-7")
	res := mustIngest(t, hooks, e, body)
	if res.Outcome != host.OutcomeResolved || len(res.Matched) != 2 || res.EventID != "evt_1" {
		t.Fatalf("answer %+v", res)
	}
	for _, run := range []string{"r1", "r2"} {
		v, _, _ := h.RequestInterrupt(ctx, hosttest.Who("engine"), run, host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-7")})
		if v.Status != interrupt.StatusResolved || string(v.ResumeValue) != string(body) {
			t.Errorf("%s: %s %s, want resolved with the event", run, v.Status, v.ResumeValue)
		}
	}
	if v, _, _ := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r3", host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-8")}); v.Status != interrupt.StatusPending {
		t.Errorf("another correlation's waiter: %s", v.Status)
	}
	writes := l.Writes()
	again := mustIngest(t, hooks, e, body)
	if again.Outcome != host.OutcomeDuplicate || len(again.Matched) != 2 || l.Writes() != writes {
		t.Errorf("redelivery: %+v, wrote %v", again, l.Writes() != writes)
	}
	other := mustIngest(t, hooks, e, hosttest.StripeEvent("evt_2", "payment_intent.succeeded", "order-7"))
	if other.Outcome != host.OutcomeRefused || len(other.Matched) != 0 {
		t.Errorf("a second event of the kept one's type and correlation: %+v", other)
	}
}

func TestEarlyEventsResolveLaterRequests(t *testing.T) {
	ctx := context.Background()
	h, hooks, l, e := hookHost(t)
	body := hosttest.StripeEvent("evt_1", "payment_intent.succeeded", "order-7")
	if res := mustIngest(t, hooks, e, body); res.Outcome != host.OutcomeBuffered || len(res.Matched) != 0 {
		t.Fatalf("an event before its waiter: %+v", res)
	}
	v, created, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-7")})
	if err != nil || !created || v.Status != interrupt.StatusResolved || string(v.ResumeValue) != string(body) || v.Seq != 1 {
		t.Fatalf("a request after its event: %+v %v", v, err)
	}
	page, _ := h.Events(ctx, hosttest.Who("engine"), "r1", 0, 0, "")
	if len(page.Events) != 2 || page.Events[0].Type != interrupt.EventRequested || page.Events[1].Type != interrupt.EventResolved {
		t.Errorf("the request's own commit: %+v", page.Events)
	}
	if got := indexed(t, l, "acme"); len(got) != 0 {
		t.Errorf("a run its request's own commit resolved is indexed as waiting: %v", got)
	}
	strict := json.RawMessage(`{"kind":"external-event","key":"strict","resumeSchema":{"required":["never"]},"data":{"eventType":"payment_intent.succeeded","correlation":"order-7"}}`)
	if v, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r2", host.Request{NodeID: "pay", Payload: strict}); err != nil || v.Status != interrupt.StatusPending {
		t.Errorf("a kept event that fails the resumeSchema: %+v %v", v, err)
	}
}

func TestIngestRefusals(t *testing.T) {
	ctx := context.Background()
	_, hooks, l, e := hookHost(t)
	body := hosttest.StripeEvent("evt_1", "payment_intent.succeeded", "order-7")
	writes := l.Writes()
	for name, c := range map[string]struct {
		endpoint string
		headers  map[string]string
		body     []byte
		code     interrupt.Code
	}{
		"another secret":   {e.ID, hosttest.StripeHeaders(body, "whsec_test_another_secret_0000"), body, interrupt.CodeSignatureInvalid},
		"tampered":         {e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), hosttest.StripeEvent("evt_1", "payment_intent.succeeded", "order-8"), interrupt.CodeSignatureInvalid},
		"no signature":     {e.ID, map[string]string{}, body, interrupt.CodeSignatureInvalid},
		"unknown endpoint": {"we_nope", hosttest.StripeHeaders(body, hosttest.StripeSecret), body, interrupt.CodeNotFound},
		"not an event":     {e.ID, hosttest.StripeHeaders([]byte(`"x"`), hosttest.StripeSecret), []byte(`"x"`), interrupt.CodeValidation},
	} {
		if _, err := hooks.Ingest(ctx, c.endpoint, c.headers, c.body); interrupt.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", name, err, c.code)
		}
	}
	if l.Writes() != writes {
		t.Errorf("refused deliveries wrote")
	}
	bare := []byte(`{"id":"evt_9","type":"payment_intent.succeeded","data":{"object":{}}}`)
	if res := mustIngest(t, hooks, e, bare); res.Outcome != host.OutcomeRefused || res.Detail == "" {
		t.Errorf("an event without a correlation value: %+v", res)
	}
	if res := mustIngest(t, hooks, e, bare); res.Outcome != host.OutcomeDuplicate {
		t.Errorf("its redelivery: %+v", res)
	}
	if _, err := hooks.Endpoint(ctx, interrupt.Principal{Subject: "x", Tenant: "evilcorp"}, e.ID); interrupt.ErrorCode(err) != interrupt.CodeNotFound {
		t.Errorf("another tenant's endpoint: %v", err)
	}
}

// racing delivers an event at a chosen moment of a request: just before its commit, or between
// its commit and its confirmation.
type racing struct {
	host.Store
	before, between func()
}

func (r *racing) Append(ctx context.Context, k runlog.Key, c runlog.Commit) error {
	if r.before != nil {
		r.before()
		r.before = nil
	}
	return r.Store.Append(ctx, k, c)
}

func (r *racing) Confirm(ctx context.Context, k webhook.Key, w webhook.Waiter, now time.Time) (*webhook.Delivery, error) {
	if r.between != nil {
		r.between()
		r.between = nil
	}
	return r.Store.Confirm(ctx, k, w, now)
}

// TestEventAndRequestMeetWhicheverIsFirst: an event delivered while its interrupt is being
// requested, before or after the commit, resolves it exactly once.
func TestEventAndRequestMeetWhicheverIsFirst(t *testing.T) {
	for _, moment := range []string{"before the commit", "between commit and confirmation"} {
		t.Run(moment, func(t *testing.T) {
			ctx := context.Background()
			r := &racing{}
			h, hooks, _, e := hookHost(t, func(l host.Store) host.Store { r.Store = l; return r })
			body := hosttest.StripeEvent("evt_1", "payment_intent.succeeded", "order-7")
			var res host.Ingested
			deliver := func() { res = mustIngest(t, hooks, e, body) }
			if moment == "before the commit" {
				r.before = deliver
			} else {
				r.between = deliver
			}
			v, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-7")})
			if err != nil || v.Status != interrupt.StatusResolved || string(v.ResumeValue) != string(body) {
				t.Errorf("request: %+v %v, want resolved by the event", v, err)
			}
			page, _ := h.Events(ctx, hosttest.Who("engine"), "r1", 0, 0, "")
			resolved := 0
			for _, ev := range page.Events {
				if ev.Type == interrupt.EventResolved {
					resolved++
				}
			}
			if resolved != 1 {
				t.Errorf("%d interrupt.resolved (ingest answered %+v)", resolved, res)
			}
			if got := indexed(t, r, "acme"); len(got) != 0 {
				t.Errorf("a run the event resolved is indexed as waiting: %v", got)
			}
		})
	}
}

// TestStandardWebhooksEndpoint: an endpoint of the other provider, its default correlation.
func TestStandardWebhooksEndpoint(t *testing.T) {
	ctx := context.Background()
	h, hooks, _, _ := hookHost(t)
	e, err := hooks.CreateEndpoint(ctx, hosttest.Who("admin"), host.EndpointRequest{Provider: "standard-webhooks", Secrets: []string{standardSecret}})
	if err != nil || e.Correlation[0] != "/data/correlation" {
		t.Fatalf("%+v %v", e, err)
	}
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "pay", Endpoint: e.ID, Payload: json.RawMessage(`{"kind":"external-event","key":"k","data":{"eventType":"invoice.paid","correlation":"inv-1"}}`)}); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"type":"invoice.paid","timestamp":"2026-11-30T09:00:00Z","data":{"correlation":"inv-1"}}`)
	res, err := hooks.Ingest(ctx, e.ID, standardHeaders(t, "msg_1", body), body)
	if err != nil || res.Outcome != host.OutcomeResolved || res.EventID != "msg_1" {
		t.Errorf("%+v %v", res, err)
	}
}

func standardHeaders(t *testing.T, id string, body []byte) map[string]string {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(standardSecret)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := wh.Sign(id, hosttest.T0, body)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"webhook-id": id, "webhook-timestamp": fmt.Sprint(hosttest.T0.Unix()), "webhook-signature": sig}
}

// TestAnEndpointAnswersOnlyItsOwnWaits: the holder of one endpoint's secret (here a Standard
// Webhooks endpoint of the tenant) can neither resolve nor pre-seed an interrupt that waits on
// another (its Stripe endpoint), and a request names its endpoint while the tenant holds several.
func TestAnEndpointAnswersOnlyItsOwnWaits(t *testing.T) {
	ctx := context.Background()
	h, hooks, _, stripe := hookHost(t)
	if v, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r0", host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-0")}); err != nil || v.Status != interrupt.StatusPending {
		t.Fatalf("a request naming no endpoint, the tenant's only one bound: %+v %v", v, err)
	}
	forger, err := hooks.CreateEndpoint(ctx, hosttest.Who("admin"), host.EndpointRequest{Provider: "standard-webhooks", Secrets: []string{standardSecret}})
	if err != nil {
		t.Fatal(err)
	}
	forged := []byte(`{"type":"payment_intent.succeeded","data":{"id":"order-77","correlation":"order-77"}}`)
	if res, err := hooks.Ingest(ctx, forger.ID, standardHeaders(t, "msg_forge_1", forged), forged); err != nil || res.Outcome != host.OutcomeBuffered {
		t.Fatalf("the forged event: %+v %v", res, err)
	}
	for name, c := range map[string]struct {
		endpoint string
		kind     string
		field    string
	}{
		"none named, two held": {"", "external-event", "/endpoint"},
		"another tenant's":     {"we_nope", "external-event", "/endpoint"},
		"on another kind":      {stripe.ID, "custom", "/endpoint"},
	} {
		payload := hosttest.WaitFor("order-77")
		if c.kind == "custom" {
			payload = json.RawMessage(`{"kind":"custom","key":"c","data":{"customKind":"x"}}`)
		}
		_, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r-"+c.kind, host.Request{NodeID: "n", Endpoint: c.endpoint, Payload: payload})
		var e *interrupt.Error
		if !errors.As(err, &e) || e.Code != interrupt.CodeValidation || len(e.Fields) != 1 || e.Fields[0].Path != c.field {
			t.Errorf("%s: %v, want a validation error at %s", name, err, c.field)
		}
	}
	v, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "pay", Endpoint: stripe.ID, Payload: hosttest.WaitFor("order-77")})
	if err != nil || v.Status != interrupt.StatusPending {
		t.Fatalf("a wait on the Stripe endpoint was answered by another endpoint's event: %+v %v", v, err)
	}
	again := []byte(`{"type":"payment_intent.succeeded","data":{"id":"order-77","correlation":"order-77"}}`)
	if res, err := hooks.Ingest(ctx, forger.ID, standardHeaders(t, "msg_forge_2", again), again); err != nil || len(res.Matched) != 0 {
		t.Fatalf("another endpoint's event after the wait: %+v %v", res, err)
	}
	genuine := hosttest.StripeEvent("evt_1", "payment_intent.succeeded", "order-77")
	if res := mustIngest(t, hooks, stripe, genuine); res.Outcome != host.OutcomeResolved || len(res.Matched) != 1 {
		t.Fatalf("the genuine event: %+v", res)
	}
	if v, _, _ := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r1", host.Request{NodeID: "pay", Payload: hosttest.WaitFor("order-77")}); string(v.ResumeValue) != string(genuine) {
		t.Errorf("resolved with %s, want the Stripe event", v.ResumeValue)
	}
}

// TestEndpointSetup: what an endpoint accepts, and that its secrets are never echoed.
func TestEndpointSetup(t *testing.T) {
	ctx := context.Background()
	_, hooks, _, _ := hookHost(t)
	for name, req := range map[string]host.EndpointRequest{
		"unknown provider":    {Provider: "paypal", Secrets: []string{hosttest.StripeSecret}},
		"no secret":           {Provider: "stripe"},
		"four secrets":        {Provider: "stripe", Secrets: []string{hosttest.StripeSecret, hosttest.StripeSecret, hosttest.StripeSecret, hosttest.StripeSecret}},
		"not a Stripe secret": {Provider: "stripe", Secrets: []string{"sk_live_123"}},
		"not a whsec_ key":    {Provider: "standard-webhooks", Secrets: []string{"whsec_***"}},
		"not a pointer":       {Provider: "stripe", Secrets: []string{hosttest.StripeSecret}, Correlation: []string{"data.id"}},
		"empty correlation":   {Provider: "stripe", Secrets: []string{hosttest.StripeSecret}, Correlation: []string{}},
	} {
		if _, err := hooks.CreateEndpoint(ctx, hosttest.Who("admin"), req); interrupt.ErrorCode(err) != interrupt.CodeValidation {
			t.Errorf("%s: %v", name, err)
		}
	}
	e, err := hooks.CreateEndpoint(ctx, hosttest.Who("admin"), host.EndpointRequest{Provider: "stripe", Secrets: []string{hosttest.StripeSecret}, Correlation: []string{"/data/object/client_reference_id"}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(e); strings.Contains(string(b), "whsec_") {
		t.Errorf("an endpoint echoes its secret: %s", b)
	}
	if _, err := hooks.ReplaceSecrets(ctx, hosttest.Who("admin"), e.ID, []string{"whsec_test_rolled_secret_0000", hosttest.StripeSecret}); err != nil {
		t.Errorf("replace: %v", err)
	}
	if err := hooks.DeleteEndpoint(ctx, hosttest.Who("admin"), e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := hooks.Endpoint(ctx, hosttest.Who("admin"), e.ID); interrupt.ErrorCode(err) != interrupt.CodeNotFound {
		t.Errorf("a deleted endpoint: %v", err)
	}
}
