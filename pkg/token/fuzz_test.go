package token_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/token"
)

// FuzzVerify: no input panics the verifier, and no accepted token has a second spelling: it is
// within the length cap, uses only the canonical alphabet, and each base64url segment is the
// exact re-encoding of its bytes (no padding, no trailing bits, no line breaks).
func FuzzVerify(f *testing.F) {
	valid, _, err := token.Mint(context.Background(), keys, claims(), now)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(token.MintLegacy(keys.Keys["legacy"], claims()))
	f.Add(strings.Replace(valid, "hs256", "HS256", 1))
	f.Add(valid + "=")
	f.Add("ow2.hs256.k2026.e30.AAAA")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := token.Verify(context.Background(), keys, s)
		if err != nil {
			return
		}
		if len(s) > token.MaxLen || strings.ContainsAny(s, "=+/ \r\n\t") {
			t.Fatalf("accepted a non-canonical token %q", s)
		}
		parts := strings.Split(s, ".")
		for _, seg := range parts[len(parts)-2:] {
			b, err := base64.RawURLEncoding.DecodeString(seg)
			if err != nil || base64.RawURLEncoding.EncodeToString(b) != seg {
				t.Fatalf("accepted segment %q of %q, which is not canonical base64url", seg, s)
			}
		}
		if c.JTI == "" || c.Tenant == "" {
			t.Fatalf("accepted claims %+v", c)
		}
	})
}
