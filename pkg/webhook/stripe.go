package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"
)

// Stripe verifies Stripe's Stripe-Signature: "t=<unix s>,v1=<hex>[,v1=<hex>...]", each v1 the
// hex HMAC-SHA256 of "<t>.<body>" keyed with the endpoint's signing secret as given ("whsec_..."),
// several while a secret is being rolled. The event id and type are the body's.
type Stripe struct{}

// Verify implements Verifier.
func (Stripe) Verify(headers map[string]string, body []byte, secrets []string, now time.Time) (Event, error) {
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(headers["stripe-signature"], ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case !ok:
			return Event{}, ErrSignature
		case k == "t":
			if ts != "" {
				return Event{}, ErrSignature // two timestamps: a repeated header, or a forgery
			}
			ts = v
		case k == "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				return Event{}, ErrSignature
			}
			sigs = append(sigs, sig)
		}
	}
	if len(sigs) == 0 || !withinTolerance(ts, now) {
		return Event{}, ErrSignature
	}
	expected := make([][]byte, 0, len(secrets))
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "."))
		mac.Write(body)
		expected = append(expected, mac.Sum(nil))
	}
	if !anyEqual(expected, sigs) {
		return Event{}, ErrSignature
	}
	return eventOf(body, true)
}

// CheckSecret implements Verifier: Stripe's signing secrets read "whsec_" and more.
func (Stripe) CheckSecret(secret string) error {
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < len("whsec_")+16 || len(secret) > 256 {
		return errors.New("a Stripe signing secret starts with whsec_ and has at least 16 more characters")
	}
	return nil
}

// Correlation implements Verifier: metadata the integration set on the object, else its id.
func (Stripe) Correlation() []string {
	return []string{"/data/object/metadata/correlation", "/data/object/id"}
}
