package apigw_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/metrics"
)

var manager = caller{"ops", "acme", []string{apigw.ScopeWebhooksManage}}

func (s *stack) endpoint(t *testing.T, who caller, body string) response {
	t.Helper()
	return invoke(t, s.fn("webhook-endpoints"), call{who: &who, route: "POST /webhook-endpoints", body: body})
}

func (s *stack) deliver(t *testing.T, endpointID string, headers map[string]string, body []byte) response {
	t.Helper()
	headers["content-type"] = "application/json; charset=utf-8"
	return invoke(t, s.fn("webhook-ingest"), call{route: "POST /webhooks/{endpointId}", params: map[string]string{"endpointId": endpointID}, body: string(body), headers: headers})
}

func stripeSign(body []byte, secret string, at time.Time) map[string]string {
	p := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
	return map[string]string{"stripe-signature": p.Header}
}

// TestWebhookJourney: an endpoint set up through the API (its secret in Secrets Manager), a
// Stripe event signed by stripe-go resolving a waiting interrupt, its redelivery, and every
// refusal, through the handlers the functions run.
func TestWebhookJourney(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const secret = "whsec_test_journey_0123456789"
	r := s.endpoint(t, manager, `{"provider":"stripe","secrets":["`+secret+`"]}`)
	if r.Status != 201 || strings.Contains(string(r.Body), "whsec_") {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var e struct {
		ID, Path, Provider string
		Correlation        []string
	}
	r.decode(t, &e)
	if e.Path != "/webhooks/"+e.ID || e.Provider != "stripe" || len(e.Correlation) != 2 {
		t.Errorf("endpoint %+v", e)
	}
	s.mustRequest(t, "r1", "pay", `{"kind":"external-event","key":"k","data":{"eventType":"payment_intent.succeeded","correlation":"order-7"}}`)
	now := s.clock.Now()
	event := []byte(`{"id":"evt_1","object":"event","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","metadata":{"correlation":"order-7"}}}}`)
	r = s.deliver(t, e.ID, stripeSign(event, secret, now), event)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"outcome":"resolved"`) || !strings.Contains(string(r.Body), `"runId":"r1"`) {
		t.Fatalf("delivery: %d %s", r.Status, r.Body)
	}
	snap, _ := s.snapshot(t, engine, "r1")
	if len(snap.Pending) != 0 {
		t.Errorf("the run still waits: %+v", snap)
	}
	page, _ := s.events(t, engine, "r1", nil)
	if last := page.Events[len(page.Events)-1]; last.Type != interrupt.EventResolved || !strings.Contains(string(last.Payload), `"resumeValue":`+string(event)) {
		t.Errorf("resolved with %s", last.Payload)
	}
	items := s.items(t)
	if r := s.deliver(t, e.ID, stripeSign(event, secret, now), event); r.Status != 200 || !strings.Contains(string(r.Body), `"outcome":"duplicate"`) || s.items(t) != items {
		t.Errorf("redelivery: %d %s", r.Status, r.Body)
	}

	refusals := []struct {
		name     string
		endpoint string
		headers  map[string]string
		body     []byte
		status   int
		code     interrupt.Code
	}{
		{"wrong secret", e.ID, stripeSign(event, "whsec_test_other_0123456789", now), event, 401, interrupt.CodeSignatureInvalid},
		{"stale", e.ID, stripeSign(event, secret, now.Add(-6*time.Minute)), event, 401, interrupt.CodeSignatureInvalid},
		{"tampered", e.ID, stripeSign(event, secret, now), []byte(strings.Replace(string(event), "order-7", "order-8", 1)), 401, interrupt.CodeSignatureInvalid},
		{"no signature", e.ID, map[string]string{}, event, 401, interrupt.CodeSignatureInvalid},
		{"unknown endpoint", "we_nope", stripeSign(event, secret, now), event, 404, interrupt.CodeNotFound},
		{"not an endpoint id", "we#1", stripeSign(event, secret, now), event, 404, interrupt.CodeNotFound},
		{"body over the limit", e.ID, stripeSign(event, secret, now), append(event, make([]byte, apigw.MaxBody)...), 413, interrupt.CodePayloadTooLarge},
		{"signed, not JSON", e.ID, stripeSign([]byte("id=evt_2"), secret, now), []byte("id=evt_2"), 400, interrupt.CodeValidation},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			r := s.deliver(t, c.endpoint, c.headers, c.body)
			if r.Status != c.status || r.problem(t).Code != c.code {
				t.Errorf("%d %s, want %d %s", r.Status, r.Body, c.status, c.code)
			}
			if s.items(t) != items {
				t.Errorf("a refused delivery wrote")
			}
		})
	}

	if r := invoke(t, s.fn("webhook-endpoints"), call{who: &intruder, route: "GET /webhook-endpoints/{id}", params: map[string]string{"id": e.ID}}); r.Status != 403 {
		t.Errorf("without webhooks:manage: %d", r.Status)
	}
	listed := func(who caller) string {
		t.Helper()
		r := invoke(t, s.fn("webhook-endpoints"), call{who: &who, route: "GET /webhook-endpoints"})
		var list struct {
			Endpoints []struct{ ID, Path, Provider string }
		}
		if err := json.Unmarshal(r.Body, &list); err != nil || r.Status != 200 || strings.Contains(string(r.Body), "whsec_") {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		var got []string
		for _, l := range list.Endpoints {
			got = append(got, l.ID+" "+l.Path+" "+l.Provider)
		}
		return strings.Join(got, ", ")
	}
	if got, want := listed(manager), e.ID+" /webhooks/"+e.ID+" stripe"; got != want {
		t.Errorf("the tenant's endpoints: %s, want %s", got, want)
	}
	if got := listed(caller{"x", "evilcorp", []string{apigw.ScopeWebhooksManage}}); got != "" {
		t.Errorf("another tenant lists %s", got)
	}
	if r := invoke(t, s.fn("webhook-endpoints"), call{who: &intruder, route: "GET /webhook-endpoints"}); r.Status != 403 {
		t.Errorf("a list without webhooks:manage: %d", r.Status)
	}
	other := caller{"x", "evilcorp", []string{apigw.ScopeWebhooksManage}}
	if r := invoke(t, s.fn("webhook-endpoints"), call{who: &other, route: "GET /webhook-endpoints/{id}", params: map[string]string{"id": e.ID}}); r.Status != 404 {
		t.Errorf("another tenant's endpoint: %d %s", r.Status, r.Body)
	}
	rolled := "whsec_test_rolled_0123456789"
	if r := invoke(t, s.fn("webhook-endpoints"), call{who: &manager, route: "PUT /webhook-endpoints/{id}/secrets", params: map[string]string{"id": e.ID}, body: `{"secrets":["` + rolled + `"]}`}); r.Status != 200 || strings.Contains(string(r.Body), "whsec_") {
		t.Fatalf("replace secrets: %d %s", r.Status, r.Body)
	}
	next := []byte(`{"id":"evt_3","type":"payment_intent.succeeded","data":{"object":{"id":"pi_3"}}}`)
	if r := s.deliver(t, e.ID, stripeSign(next, rolled, now), next); r.Status != 200 || !strings.Contains(string(r.Body), `"outcome":"buffered"`) {
		t.Errorf("an event signed with the rolled secret: %d %s", r.Status, r.Body)
	}
	if r := invoke(t, s.fn("webhook-endpoints"), call{who: &manager, route: "DELETE /webhook-endpoints/{id}", params: map[string]string{"id": e.ID}}); r.Status != 204 || len(r.Body) != 0 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := s.deliver(t, e.ID, stripeSign(next, rolled, now), next); r.Status != 404 {
		t.Errorf("a delivery to a deleted endpoint: %d %s", r.Status, r.Body)
	}

	// Every event received is counted by its outcome or its refusal's code.
	ps := s.points(t)
	for outcome, want := range map[string]float64{
		"resolved": 1, "duplicate": 1, "buffered": 1,
		string(interrupt.CodeSignatureInvalid): 4, string(interrupt.CodeNotFound): 3,
		string(interrupt.CodePayloadTooLarge): 1, string(interrupt.CodeValidation): 1,
	} {
		if got := metrics.Total(ps, metrics.Webhooks, metrics.Dim{Name: metrics.DimOutcome, Value: outcome}); got != want {
			t.Errorf("WebhookEvents{Outcome=%s} = %v, want %v", outcome, got, want)
		}
	}
	if got := metrics.Total(ps, metrics.Webhooks); got != 12 {
		t.Errorf("WebhookEvents = %v, want the 12 deliveries", got)
	}
}

// TestStandardWebhooksJourney: an event signed by the Standard Webhooks reference library
// resolves the interrupt requested after it (kept, then joined in the request's own commit).
func TestStandardWebhooksJourney(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	r := s.endpoint(t, manager, `{"provider":"standard-webhooks","secrets":["`+secret+`"]}`)
	var e struct{ ID string }
	r.decode(t, &e)
	body := []byte(`{"type":"invoice.paid","timestamp":"2026-11-30T09:00:00Z","data":{"id":"inv_1","correlation":"contract-9"}}`)
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := s.clock.Now()
	sig, err := wh.Sign("msg_1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	r = s.deliver(t, e.ID, map[string]string{"webhook-id": "msg_1", "webhook-timestamp": fmt.Sprint(now.Unix()), "webhook-signature": sig}, body)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"outcome":"buffered"`) {
		t.Fatalf("an early event: %d %s", r.Status, r.Body)
	}
	r = s.request(t, engine, "r1", "wait", `{"kind":"external-event","key":"k","data":{"eventType":"invoice.paid","correlation":"contract-9"}}`)
	if r.Status != 201 || !strings.Contains(string(r.Body), `"status":"resolved"`) || !strings.Contains(string(r.Body), `"resumeValue":`+string(body)) {
		t.Errorf("the request after it: %d %s", r.Status, r.Body)
	}
}
