package webhook_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/interrupthost/interrupthost/pkg/webhook"
)

var now = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

const (
	stripeSecret = "whsec_test_0123456789abcdefghij"
	otherStripe  = "whsec_test_zyxwvutsrqponmlkjihg"
)

var (
	standardSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	otherStandard  = "whsec_" + base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
	stripeEvent    = []byte(`{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","metadata":{"correlation":"order-7"}}}}`)
	standardEvent  = []byte(`{"type":"invoice.paid","timestamp":"2026-11-30T09:00:00Z","data":{"id":"inv_1","correlation":"order-7"}}`)
)

// stripeSigned signs body as Stripe does, with stripe-go's own test helper.
func stripeSigned(body []byte, secret string, at time.Time) map[string]string {
	p := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
	return map[string]string{"stripe-signature": p.Header}
}

// standardSigned signs body with the Standard Webhooks reference library.
func standardSigned(t *testing.T, body []byte, secret, id string, at time.Time) map[string]string {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := wh.Sign(id, at, body)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"webhook-id": id, "webhook-timestamp": fmt.Sprint(at.Unix()), "webhook-signature": sig}
}

func TestStripe(t *testing.T) {
	good := stripeSigned(stripeEvent, stripeSecret, now)
	second := stripeSigned(stripeEvent, otherStripe, now)["stripe-signature"]
	tests := []struct {
		name    string
		headers map[string]string
		body    []byte
		secrets []string
		err     error
	}{
		{"signed", good, stripeEvent, []string{stripeSecret}, nil},
		{"signed with the second of the endpoint's secrets", good, stripeEvent, []string{otherStripe, stripeSecret}, nil},
		{"two v1 signatures while a secret rolls", map[string]string{"stripe-signature": good["stripe-signature"] + "," + second[strings.Index(second, "v1="):]}, stripeEvent, []string{otherStripe}, nil},
		{"another secret", good, stripeEvent, []string{otherStripe}, webhook.ErrSignature},
		{"tampered body", good, []byte(strings.Replace(string(stripeEvent), "order-7", "order-8", 1)), []string{stripeSecret}, webhook.ErrSignature},
		{"stale", stripeSigned(stripeEvent, stripeSecret, now.Add(-301*time.Second)), stripeEvent, []string{stripeSecret}, webhook.ErrSignature},
		{"from the future", stripeSigned(stripeEvent, stripeSecret, now.Add(301*time.Second)), stripeEvent, []string{stripeSecret}, webhook.ErrSignature},
		{"just within the tolerance", stripeSigned(stripeEvent, stripeSecret, now.Add(-299*time.Second)), stripeEvent, []string{stripeSecret}, nil},
		{"no header", map[string]string{}, stripeEvent, []string{stripeSecret}, webhook.ErrSignature},
		{"a repeated header", map[string]string{"stripe-signature": good["stripe-signature"] + "," + good["stripe-signature"]}, stripeEvent, []string{stripeSecret}, webhook.ErrSignature},
		{"garbled", map[string]string{"stripe-signature": "t=abc,v1=zz"}, stripeEvent, []string{stripeSecret}, webhook.ErrSignature},
		{"no v1", map[string]string{"stripe-signature": good["stripe-signature"][:strings.Index(good["stripe-signature"], ",")]}, stripeEvent, []string{stripeSecret}, webhook.ErrSignature},
		{"a short v1", map[string]string{"stripe-signature": "t=" + fmt.Sprint(now.Unix()) + ",v1=abcd"}, stripeEvent, []string{stripeSecret}, webhook.ErrSignature},
		{"signed, but not an event", stripeSigned([]byte(`[1,2]`), stripeSecret, now), []byte(`[1,2]`), []string{stripeSecret}, webhook.ErrEvent},
		{"signed, without an id", stripeSigned([]byte(`{"type":"x"}`), stripeSecret, now), []byte(`{"type":"x"}`), []string{stripeSecret}, webhook.ErrEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := webhook.Stripe{}.Verify(tt.headers, tt.body, tt.secrets, now)
			if err != tt.err {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if err == nil && (e.ID != "evt_1" || e.Type != "payment_intent.succeeded") {
				t.Errorf("event %+v", e)
			}
		})
	}
}

func TestStandardWebhooks(t *testing.T) {
	good := standardSigned(t, standardEvent, standardSecret, "msg_1", now)
	other := standardSigned(t, standardEvent, otherStandard, "msg_1", now)
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for a, b := range good {
			h[a] = b
		}
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
		return h
	}
	tests := []struct {
		name    string
		headers map[string]string
		body    []byte
		secrets []string
		err     error
	}{
		{"signed", good, standardEvent, []string{standardSecret}, nil},
		{"several signatures", with("webhook-signature", other["webhook-signature"]+" "+good["webhook-signature"]), standardEvent, []string{standardSecret}, nil},
		{"a repeated signature header", with("webhook-signature", other["webhook-signature"]+", "+good["webhook-signature"]), standardEvent, []string{standardSecret}, nil},
		{"any of the endpoint's secrets", good, standardEvent, []string{otherStandard, standardSecret}, nil},
		{"another secret", good, standardEvent, []string{otherStandard}, webhook.ErrSignature},
		{"tampered body", good, append([]byte(nil), append(standardEvent[:len(standardEvent)-1], ' ', '}')...), []string{standardSecret}, webhook.ErrSignature},
		{"another id", with("webhook-id", "msg_2"), standardEvent, []string{standardSecret}, webhook.ErrSignature},
		{"a repeated id header", with("webhook-id", "msg_1,msg_1"), standardEvent, []string{standardSecret}, webhook.ErrSignature},
		{"stale", standardSigned(t, standardEvent, standardSecret, "msg_1", now.Add(-10*time.Minute)), standardEvent, []string{standardSecret}, webhook.ErrSignature},
		{"from the future", standardSigned(t, standardEvent, standardSecret, "msg_1", now.Add(10*time.Minute)), standardEvent, []string{standardSecret}, webhook.ErrSignature},
		{"no timestamp", with("webhook-timestamp", ""), standardEvent, []string{standardSecret}, webhook.ErrSignature},
		{"no signature", with("webhook-signature", ""), standardEvent, []string{standardSecret}, webhook.ErrSignature},
		{"garbled signature", with("webhook-signature", "v1,!!!"), standardEvent, []string{standardSecret}, webhook.ErrSignature},
		{"only another scheme", with("webhook-signature", "v1a,"+base64.StdEncoding.EncodeToString(make([]byte, 64))), standardEvent, []string{standardSecret}, webhook.ErrSignature},
		{"signed, without a type", standardSigned(t, []byte(`{"data":{}}`), standardSecret, "msg_1", now), []byte(`{"data":{}}`), []string{standardSecret}, webhook.ErrEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := webhook.StandardWebhooks{}.Verify(tt.headers, tt.body, tt.secrets, now)
			if err != tt.err {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if err == nil && (e.ID != "msg_1" || e.Type != "invoice.paid") {
				t.Errorf("event %+v", e)
			}
		})
	}
}

func TestCorrelate(t *testing.T) {
	body := []byte(`{"data":{"object":{"id":"pi_1","metadata":{"correlation":""},"n":1234567890123456789,"a/b":"slash","list":["x","y"]}}}`)
	tests := []struct {
		pointers []string
		want     string
		ok       bool
	}{
		{[]string{"/data/object/metadata/correlation", "/data/object/id"}, "pi_1", true},
		{[]string{"/data/object/n"}, "1234567890123456789", true},
		{[]string{"/data/object/a~1b"}, "slash", true},
		{[]string{"/data/object/list/1"}, "y", true},
		{[]string{"/data/object/list/01", "/data/object/list/9"}, "", false},
		{[]string{"/data/object"}, "", false},
		{[]string{"/missing", "data"}, "", false},
	}
	for _, tt := range tests {
		if got, ok := webhook.Correlate(body, tt.pointers); got != tt.want || ok != tt.ok {
			t.Errorf("Correlate(%v) = %q %v, want %q %v", tt.pointers, got, ok, tt.want, tt.ok)
		}
	}
}
