package token_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/testkeys"
	"github.com/interrupthost/interrupthost/pkg/token"
)

var keys = testkeys.Static{ActiveKid: "k2026", Keys: map[string][]byte{
	"k2026":  []byte("0123456789abcdef0123456789abcdef"),
	"legacy": []byte("legacy-legacy-legacy-legacy-key!"),
}}

var now = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func claims() token.Claims {
	return token.Claims{Tenant: "acme", RunID: "r1", NodeID: "n1", InterruptID: "int_1", Intent: token.IntentResolve, Sub: "alice", ExpiresAt: now.Add(30 * time.Minute).UnixMilli()}
}

func mint(t testing.TB) string {
	t.Helper()
	s, _, err := token.Mint(context.Background(), keys, claims(), now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoundTrip(t *testing.T) {
	s := mint(t)
	if !strings.HasPrefix(s, "ow2.hs256.k2026.") || strings.Count(s, ".") != 4 {
		t.Fatalf("token %s", s)
	}
	c, err := token.Verify(context.Background(), keys, s)
	if err != nil {
		t.Fatal(err)
	}
	want := claims()
	if c.Tenant != want.Tenant || c.RunID != want.RunID || c.NodeID != want.NodeID || c.InterruptID != want.InterruptID ||
		c.Intent != want.Intent || c.Sub != "alice" || c.ExpiresAt != want.ExpiresAt || c.IssuedAt != now.UnixMilli() || c.V != 2 || c.JTI == "" {
		t.Errorf("claims %+v", c)
	}
	legacy := token.MintLegacy(keys.Keys["legacy"], claims())
	if c, err := token.Verify(context.Background(), keys, legacy); err != nil || c.V != 1 {
		t.Errorf("legacy token: %+v %v", c, err)
	}
}

// segments splits a valid token for the table below to mangle.
func segments(t *testing.T) (payload, mac string) {
	p := strings.Split(mint(t), ".")
	return p[3], p[4]
}

func flip(s string, bit int) string {
	b, _ := base64.RawURLEncoding.DecodeString(s)
	b[bit/8] ^= 1 << (bit % 8)
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestVerifyRefuses(t *testing.T) {
	payload, mac := segments(t)
	macBytes, _ := base64.RawURLEncoding.DecodeString(mac)
	enc := base64.RawURLEncoding.EncodeToString
	head := "ow2.hs256.k2026."
	// lastChar changes the final base64 character so that only its unused trailing bits differ.
	lastBitsSet := mac[:len(mac)-1] + string(rune(mac[len(mac)-1]+1))
	cases := []struct {
		name, token string
		want        error
	}{
		{"flipped payload bit", head + flip(payload, 5) + "." + mac, token.ErrMAC},
		{"flipped last payload bit", head + flip(payload, len(payload)*6/8*8-1) + "." + mac, token.ErrMAC},
		{"flipped MAC bit", head + payload + "." + flip(mac, 0), token.ErrMAC},
		{"flipped last MAC bit", head + payload + "." + flip(mac, 255), token.ErrMAC},
		{"MAC of 31 bytes", head + payload + "." + enc(macBytes[:31]), token.ErrMalformed},
		{"MAC of 33 bytes", head + payload + "." + enc(append(macBytes, 0)), token.ErrMalformed},
		{"padded MAC", head + payload + "." + mac + "=", token.ErrMalformed},
		{"padded payload", head + payload + "==." + mac, token.ErrMalformed},
		{"+ in MAC", head + payload + "." + strings.NewReplacer("-", "+", "_", "+").Replace(mac[:10]) + "+" + mac[11:], token.ErrMalformed},
		{"/ in payload", head + "/" + payload[1:] + "." + mac, token.ErrMalformed},
		{"CR LF inside", head + payload[:8] + "\r\n" + payload[8:] + "." + mac, token.ErrMalformed},
		{"space", head + payload + ". " + mac, token.ErrMalformed},
		{"non-zero trailing bits", head + payload + "." + lastBitsSet, token.ErrMalformed},
		{"extra segment", head + payload + "." + mac + ".x", token.ErrMalformed},
		{"missing segment", "ow2.hs256." + payload + "." + mac, token.ErrMalformed},
		{"alg none", "ow2.none.k2026." + payload + "." + mac, token.ErrAlg},
		{"alg HS256", "ow2.HS256.k2026." + payload + "." + mac, token.ErrAlg},
		{"alg hs512", "ow2.hs512.k2026." + payload + "." + mac, token.ErrAlg},
		{"other prefix", "ow3.hs256.k2026." + payload + "." + mac, token.ErrMalformed},
		{"empty kid", "ow2.hs256.." + payload + "." + mac, token.ErrMalformed},
		{"unknown kid", "ow2.hs256.k1999." + payload + "." + mac, token.ErrUnknownKid},
		{"10 KB kid", "ow2.hs256." + strings.Repeat("k", 10_000) + "." + payload + "." + mac, token.ErrMalformed},
		{"65-character kid", "ow2.hs256." + strings.Repeat("k", 65) + "." + payload + "." + mac, token.ErrMalformed},
		{"../ kid", "ow2.hs256.../etc." + payload + "." + mac, token.ErrMalformed},
		{"%2e kid", "ow2.hs256.%2e%2e." + payload + "." + mac, token.ErrMalformed},
		{"another kid's MAC", "ow2.hs256.legacy." + payload + "." + mac, token.ErrMAC},
		{"v2 payload as v1", payload + "." + enc(token.HMACOf(keys.Keys["legacy"], payload)), token.ErrMalformed},
		{"empty", "", token.ErrMalformed},
		{"just dots", "....", token.ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := token.Verify(context.Background(), keys, c.token)
			if !errors.Is(err, c.want) {
				t.Errorf("Verify(%.80q) = %v, want %v", c.token, err, c.want)
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	c := claims()
	exp := time.UnixMilli(c.ExpiresAt)
	if c.Expired(exp) {
		t.Error("a token is expired at exp exactly")
	}
	if !c.Expired(exp.Add(time.Millisecond)) {
		t.Error("a token is valid 1 ms past exp")
	}
}

func TestMintRefusesTheLegacyKid(t *testing.T) {
	if _, _, err := token.Mint(context.Background(), testkeys.Static{ActiveKid: "legacy", Keys: keys.Keys}, claims(), now); err == nil {
		t.Error("minted under the legacy kid")
	}
}

func BenchmarkMint(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := token.Mint(context.Background(), keys, claims(), now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	s := mint(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := token.Verify(context.Background(), keys, s); err != nil {
			b.Fatal(err)
		}
	}
}
