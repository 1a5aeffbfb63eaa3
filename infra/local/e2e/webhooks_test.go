package e2e

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/interrupthost/interrupthost/internal/devjwt"
)

// hookTenant is a tenant of its own, with its engine's token: which endpoints a tenant holds
// decides what its external-event requests must name, so no test shares them.
func hookTenant(t *testing.T, name string) (tenant, eng string) {
	t.Helper()
	tenant = newRun(name)
	return tenant, jwt(t, devjwt.Token{Subject: "engine", Tenant: tenant, Scopes: engine.Scopes})
}

func createEndpoint(t *testing.T, tenant, body string) string {
	t.Helper()
	a := do(t, "POST", "/webhook-endpoints", jwt(t, devjwt.Token{Subject: "ops", Tenant: tenant, Scopes: []string{"webhooks:manage"}}), body)
	var e struct{ ID, Path string }
	a.json(t, &e)
	if a.Status != 201 || e.Path != "/webhooks/"+e.ID || strings.Contains(string(a.Body), "whsec_") {
		t.Fatalf("create endpoint: %d %s", a.Status, a.Body)
	}
	return e.ID
}

// TestWebhooksThroughTheGateway: a Stripe event signed by stripe-go resolves its waiting
// interrupt, and a Standard Webhooks event signed by the reference library resolves the
// interrupt requested after it, through the gateway and the functions' processes.
func TestWebhooksThroughTheGateway(t *testing.T) {
	tenant, eng := hookTenant(t, "hooks")
	const stripeSecret = "whsec_e2e_0123456789abcdefgh"
	stripeEndpoint := createEndpoint(t, tenant, `{"provider":"stripe","secrets":["`+stripeSecret+`"]}`)
	run := newRun("pay")
	corr := "order-" + run
	if a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"pay","payload":{"kind":"external-event","key":"k","data":{"eventType":"payment_intent.succeeded","correlation":"`+corr+`"}}}`); a.Status != 201 {
		t.Fatalf("request: %d %s", a.Status, a.Body)
	}
	event := `{"id":"evt_` + run + `","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","metadata":{"correlation":"` + corr + `"}}}}`
	signed := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: []byte(event), Secret: stripeSecret})
	deliver := call{method: "POST", path: "/webhooks/" + stripeEndpoint, body: event, headers: map[string]string{"Stripe-Signature": signed.Header}}
	a := deliver.must(t)
	if a.Status != 200 || !strings.Contains(string(a.Body), `"outcome":"resolved"`) {
		t.Fatalf("delivery: %d %s", a.Status, a.Body)
	}
	var snap struct{ Pending []any }
	do(t, "GET", "/runs/"+run, eng, "").json(t, &snap)
	if len(snap.Pending) != 0 {
		t.Errorf("the run still waits: %+v", snap)
	}
	if a := deliver.must(t); a.Status != 200 || !strings.Contains(string(a.Body), `"outcome":"duplicate"`) {
		t.Errorf("redelivery: %d %s", a.Status, a.Body)
	}
	forged := call{method: "POST", path: "/webhooks/" + stripeEndpoint, body: event, headers: map[string]string{"Stripe-Signature": signed.Header[:len(signed.Header)-4] + "0000"}}.must(t)
	if forged.Status != 401 || !strings.Contains(string(forged.Body), "webhook_signature_invalid") {
		t.Errorf("a forged signature: %d %s", forged.Status, forged.Body)
	}

	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("e2e-0123456789abcdef0123456789"))
	standardEndpoint := createEndpoint(t, tenant, `{"provider":"standard-webhooks","secrets":["`+secret+`"]}`)
	later := newRun("later")
	body := `{"type":"invoice.paid","timestamp":"2026-11-30T09:00:00Z","data":{"correlation":"contract-` + later + `"}}`
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sig, err := wh.Sign("msg_"+later, now, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	a = call{method: "POST", path: "/webhooks/" + standardEndpoint, body: body, headers: map[string]string{
		"webhook-id": "msg_" + later, "webhook-timestamp": strconv.FormatInt(now.Unix(), 10), "webhook-signature": sig,
	}}.must(t)
	if a.Status != 200 || !strings.Contains(string(a.Body), `"outcome":"buffered"`) {
		t.Fatalf("an early event: %d %s", a.Status, a.Body)
	}
	a = do(t, "POST", "/runs/"+later+"/interrupts", eng, `{"nodeId":"wait","endpoint":"`+standardEndpoint+`","payload":{"kind":"external-event","key":"k","data":{"eventType":"invoice.paid","correlation":"contract-`+later+`"}}}`)
	var v struct {
		Status      string
		ResumeValue json.RawMessage
	}
	a.json(t, &v)
	if a.Status != 201 || v.Status != "resolved" || string(v.ResumeValue) != body {
		t.Errorf("the request after it: %d %s", a.Status, a.Body)
	}
}

// TestAnEndpointAnswersOnlyItsWaits: with a tenant's Stripe and Standard Webhooks endpoints, an
// event signed for the second (by whoever holds its secret) neither answers nor pre-seeds a
// payment wait on the first; a request names the endpoint while the tenant holds two; the
// genuine Stripe event resolves the wait.
func TestAnEndpointAnswersOnlyItsWaits(t *testing.T) {
	tenant, eng := hookTenant(t, "forge")
	const stripeSecret = "whsec_e2e_forge_0123456789abcd"
	stripeEndpoint := createEndpoint(t, tenant, `{"provider":"stripe","secrets":["`+stripeSecret+`"]}`)
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("forge-0123456789abcdef01234567"))
	forger := createEndpoint(t, tenant, `{"provider":"standard-webhooks","secrets":["`+secret+`"]}`)
	run := newRun("forged")
	corr := "order-" + run
	forged := `{"type":"payment_intent.succeeded","data":{"id":"` + corr + `","object":{"id":"pi_1","metadata":{"correlation":"` + corr + `"}}}}`
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sig, err := wh.Sign("msg_forge_1", now, []byte(forged))
	if err != nil {
		t.Fatal(err)
	}
	a := call{method: "POST", path: "/webhooks/" + forger, body: forged, headers: map[string]string{
		"webhook-id": "msg_forge_1", "webhook-timestamp": strconv.FormatInt(now.Unix(), 10), "webhook-signature": sig,
	}}.must(t)
	if a.Status != 200 || !strings.Contains(string(a.Body), `"outcome":"buffered"`) {
		t.Fatalf("the other endpoint's event: %d %s", a.Status, a.Body)
	}
	payload := `"payload":{"kind":"external-event","key":"k","data":{"eventType":"payment_intent.succeeded","correlation":"` + corr + `"}}`
	if a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"pay",`+payload+`}`); a.Status != 400 || !strings.Contains(string(a.Body), `"/endpoint"`) {
		t.Errorf("a request naming no endpoint of two: %d %s", a.Status, a.Body)
	}
	a = do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"pay","endpoint":"`+stripeEndpoint+`",`+payload+`}`)
	if a.Status != 201 || !strings.Contains(string(a.Body), `"status":"pending"`) {
		t.Fatalf("the wait on the Stripe endpoint: %d %s", a.Status, a.Body)
	}
	event := `{"id":"evt_` + run + `","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","metadata":{"correlation":"` + corr + `"}}}}`
	signed := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: []byte(event), Secret: stripeSecret})
	a = call{method: "POST", path: "/webhooks/" + stripeEndpoint, body: event, headers: map[string]string{"Stripe-Signature": signed.Header}}.must(t)
	if a.Status != 200 || !strings.Contains(string(a.Body), `"outcome":"resolved"`) {
		t.Fatalf("the genuine event: %d %s", a.Status, a.Body)
	}
	var v struct{ ResumeValue json.RawMessage }
	do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"pay",`+payload+`}`).json(t, &v)
	if string(v.ResumeValue) != event {
		t.Errorf("resolved with %s, want the Stripe event", v.ResumeValue)
	}
}
