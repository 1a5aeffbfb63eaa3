package hosttest

import (
	"encoding/json"
	"fmt"

	stripewebhook "github.com/stripe/stripe-go/v82/webhook"
)

// StripeSecret is the signing secret of the tests' Stripe endpoints.
const StripeSecret = "whsec_test_0123456789abcdefghij"

// StripeEvent is the body of a Stripe event of type typ whose payment intent carries correlation
// in its metadata, where WaitFor's interrupt looks for it.
func StripeEvent(id, typ, correlation string) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"type":%q,"data":{"object":{"id":"pi_x","metadata":{"correlation":%q}}}}`, id, typ, correlation))
}

// StripeHeaders are the headers Stripe sends with body, signed with secret at T0 by Stripe's own
// library: what the host verifies is what Stripe makes.
func StripeHeaders(body []byte, secret string) map[string]string {
	p := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: T0})
	return map[string]string{"stripe-signature": p.Header}
}

// WaitFor is the payload of an interrupt that waits for payment_intent.succeeded of correlation.
func WaitFor(correlation string) json.RawMessage {
	return json.RawMessage(`{"kind":"external-event","key":"pay-` + correlation + `","data":{"eventType":"payment_intent.succeeded","correlation":"` + correlation + `"}}`)
}
