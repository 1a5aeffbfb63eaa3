package clientcheck_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/interrupthost/interrupthost/client"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// signed is a delivery signed by the Standard Webhooks reference library.
func signed(t *testing.T, id string, at time.Time, body string) http.Header {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := wh.Sign(id, at, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	h.Set("webhook-signature", "v1,bm90IHRoaXMgb25l "+sig)
	return h
}

const body = `{"type":"interrupt.resolved","timestamp":"2026-11-30T09:00:00.000Z","data":{"seq":2,"index":1,"type":"interrupt.resolved","runId":"run-1","nodeId":"approve","interruptId":"i1","at":"2026-11-30T09:00:00.000Z","payload":{"resumeValue":{"action":"accept"}}}}`

// TestVerifyDelivery: a delivery the reference library signed verifies and reads; a changed
// body, another secret, or a timestamp out of tolerance does not.
func TestVerifyDelivery(t *testing.T) {
	now := time.Now()
	h := signed(t, "run-1:2:1", now, body)
	d, err := client.VerifyDelivery(secret, h, []byte(body), now)
	if err != nil || d.ID != "run-1:2:1" || d.Type != "interrupt.resolved" || d.Data.RunID != "run-1" || d.Data.Seq != 2 || string(d.Data.Payload) != `{"resumeValue":{"action":"accept"}}` {
		t.Fatalf("%+v %v", d, err)
	}
	cases := map[string]func() error{
		"changed body": func() error {
			_, err := client.VerifyDelivery(secret, h, []byte(strings.Replace(body, "accept", "reject", 1)), now)
			return err
		},
		"other secret": func() error {
			_, err := client.VerifyDelivery("whsec_dGhpcyBpcyBhbm90aGVyIHNlY3JldCBrZXk=", h, []byte(body), now)
			return err
		},
		"late": func() error {
			_, err := client.VerifyDelivery(secret, h, []byte(body), now.Add(client.Tolerance+time.Second))
			return err
		},
		"early": func() error {
			_, err := client.VerifyDelivery(secret, h, []byte(body), now.Add(-client.Tolerance-time.Second))
			return err
		},
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, client.ErrSignature) {
			t.Errorf("%s: %v, want ErrSignature", name, err)
		}
	}
}

// TestReceiverDedupes: a delivery sent twice reaches OnDelivery once; a forged one is refused
// with 401, so the host retries it.
func TestReceiverDedupes(t *testing.T) {
	r := client.NewReceiver(secret)
	var got []string
	r.OnDelivery = func(d client.Delivery) { got = append(got, d.ID) }
	post := func(h http.Header, b string) int {
		req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(b))
		req.Header = h
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		return rec.Code
	}
	h := signed(t, "run-1:2:1", time.Now(), body)
	if a, b := post(h, body), post(h, body); a != 204 || b != 204 {
		t.Fatalf("answers %d %d", a, b)
	}
	if code := post(h, body+" "); code != 401 {
		t.Errorf("a forged delivery: %d", code)
	}
	if len(got) != 1 || got[0] != "run-1:2:1" {
		t.Errorf("OnDelivery got %v", got)
	}
}
