package devjwt_test

import (
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
)

// TestVerifierRemembersSignaturesNotVerdicts holds the verifier's cache to the authorizer's
// rules: a token admitted once is still refused for another audience or issuer, and once it
// expires; a forged token is refused however often it is sent.
func TestVerifierRemembersSignaturesNotVerdicts(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	sign := func(k *rsa.PrivateKey, sub string) string {
		t.Helper()
		tok, err := devjwt.Sign(k, devjwt.Claims{"iss": "iss", "aud": "api", "sub": sub, "exp": float64(now.Add(time.Hour).Unix())})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	good, forged := sign(key, "alice"), sign(other, "alice")
	v := devjwt.NewVerifier(devjwt.StaticKey{Public: &key.PublicKey})
	for _, tc := range []struct {
		name, token, issuer, audience string
		at                            time.Time
		ok                            bool
	}{
		{"valid", good, "iss", "api", now, true},
		{"valid again, from memory", good, "iss", "api", now, true},
		{"another audience", good, "iss", "other", now, false},
		{"another issuer", good, "other", "api", now, false},
		{"expired", good, "iss", "api", now.Add(time.Hour), false},
		{"signed by another key", forged, "iss", "api", now, false},
		{"signed by another key, again", forged, "iss", "api", now, false},
		{"its signature on other claims", strings.Join([]string{strings.Split(good, ".")[0], strings.Split(sign(key, "mallory"), ".")[1], strings.Split(good, ".")[2]}, "."), "iss", "api", now, false},
		{"not a JWT", "a.b", "iss", "api", now, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := v.Verify(tc.token, tc.issuer, tc.audience, tc.at)
			if tc.ok && (err != nil || c["sub"] != "alice") {
				t.Fatalf("refused: %v %v", c, err)
			}
			if !tc.ok && err == nil {
				t.Fatalf("admitted: %v", c)
			}
		})
	}
}
