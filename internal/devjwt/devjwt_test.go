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

// TestAudienceIsAudOrElseClientID: as API Gateway's JWT authorizer, an audience is the token's
// aud (a string or one of a list), and its client_id only when it has no aud, as Cognito's
// access tokens have none; a token whose aud names another audience is refused whatever its
// client_id says.
func TestAudienceIsAudOrElseClientID(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	v := devjwt.NewVerifier(devjwt.StaticKey{Public: &key.PublicKey})
	tests := []struct {
		name     string
		claims   devjwt.Claims
		audience string
		ok       bool
	}{
		{"aud", devjwt.Claims{"aud": "approvers"}, "approvers", true},
		{"one of a list of aud", devjwt.Claims{"aud": []string{"other", "approvers"}}, "approvers", true},
		{"another aud", devjwt.Claims{"aud": "other"}, "approvers", false},
		{"client_id without aud", devjwt.Claims{"client_id": "engine"}, "engine", true},
		{"another client_id without aud", devjwt.Claims{"client_id": "other"}, "engine", false},
		{"client_id beside another aud", devjwt.Claims{"aud": "other", "client_id": "engine"}, "engine", false},
		{"neither", devjwt.Claims{}, "engine", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.claims["iss"], tt.claims["sub"], tt.claims["exp"] = "iss", "alice", float64(now.Add(time.Hour).Unix())
			tok, err := devjwt.Sign(key, tt.claims)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Verify(tok, "iss", tt.audience, now); (err == nil) != tt.ok {
				t.Errorf("Verify for %s: %v, want admitted %v", tt.audience, err, tt.ok)
			}
		})
	}
}

// TestTokenShapes: the local issuer writes an approvers' token with aud, and a Cognito access
// token (a client named) with client_id and no aud; username and email only when given.
func TestTokenShapes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		token   devjwt.Token
		want    devjwt.Claims
		missing []string
	}{
		{"an approver's", devjwt.Token{Subject: "alice", Tenant: "acme"},
			devjwt.Claims{"aud": devjwt.Audience, "sub": "alice", "tenant": "acme"}, []string{"client_id", "username", "email", "token_use"}},
		{"a Cognito access token", devjwt.Token{Subject: "0d5e-uuid", Username: "billing-agent", ClientID: devjwt.EngineClientID},
			devjwt.Claims{"client_id": devjwt.EngineClientID, "token_use": "access", "sub": "0d5e-uuid", "username": "billing-agent"}, []string{"aud", "email", "tenant"}},
		{"with an email", devjwt.Token{Subject: "7f2a-uuid", Email: "alice@example.com"},
			devjwt.Claims{"aud": devjwt.Audience, "email": "alice@example.com"}, []string{"username"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.token.Issuer, tt.token.TTL = "iss", time.Hour
			got := tt.token.Claims(now)
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			for _, k := range tt.missing {
				if _, ok := got[k]; ok {
					t.Errorf("%s = %v, want none", k, got[k])
				}
			}
		})
	}
}
