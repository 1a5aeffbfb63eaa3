package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"time"
)

// StandardWebhooks verifies the Standard Webhooks scheme: headers webhook-id, webhook-timestamp
// (Unix seconds) and webhook-signature (space-separated "v1,<base64>"), each v1 the base64
// HMAC-SHA256 of "<id>.<timestamp>.<body>" keyed with the secret's bytes (base64 after
// "whsec_"). The event id is webhook-id; the type is the body's.
type StandardWebhooks struct{}

// Verify implements Verifier.
func (StandardWebhooks) Verify(headers map[string]string, body []byte, secrets []string, now time.Time) (Event, error) {
	id, ts := headers["webhook-id"], headers["webhook-timestamp"]
	if id == "" || len(id) > 256 || strings.ContainsAny(id, ", ") || !withinTolerance(ts, now) {
		return Event{}, ErrSignature
	}
	var sigs [][]byte
	// A repeated header reaches the function joined with commas: "v1,a, v1,b".
	for _, part := range strings.Fields(strings.ReplaceAll(headers["webhook-signature"], ", ", " ")) {
		version, sig, ok := strings.Cut(part, ",")
		if !ok {
			return Event{}, ErrSignature
		}
		if version != "v1" {
			continue // a scheme this host does not verify (v1a: asymmetric)
		}
		raw, err := base64.StdEncoding.DecodeString(sig)
		if err != nil || len(raw) != sha256.Size {
			return Event{}, ErrSignature
		}
		sigs = append(sigs, raw)
	}
	if len(sigs) == 0 {
		return Event{}, ErrSignature
	}
	expected := make([][]byte, 0, len(secrets))
	for _, secret := range secrets {
		key, err := standardKey(secret)
		if err != nil {
			continue
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + ts + "."))
		mac.Write(body)
		expected = append(expected, mac.Sum(nil))
	}
	if !anyEqual(expected, sigs) {
		return Event{}, ErrSignature
	}
	e, err := eventOf(body, false)
	e.ID = id
	return e, err
}

func standardKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) < 24 || len(key) > 64 {
		return nil, errors.New("a Standard Webhooks secret is whsec_ and the base64 of 24 to 64 bytes")
	}
	return key, nil
}

// CheckSecret implements Verifier.
func (StandardWebhooks) CheckSecret(secret string) error {
	if !strings.HasPrefix(secret, "whsec_") {
		return errors.New("a Standard Webhooks secret starts with whsec_")
	}
	_, err := standardKey(secret)
	return err
}

// Correlation implements Verifier.
func (StandardWebhooks) Correlation() []string { return []string{"/data/correlation", "/data/id"} }
