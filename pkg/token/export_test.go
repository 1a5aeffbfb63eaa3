package token

import (
	"crypto/rand"
	"encoding/json"
)

// HMACOf exposes the MAC to the external tests, which forge tokens with it.
func HMACOf(key []byte, signed string) []byte { return sign(key, signed) }

// MintLegacy signs c as a v1 token under the legacy key; the host no longer issues these, but
// outstanding ones stay valid until they expire, and tests need to make them.
func MintLegacy(key []byte, c Claims) string {
	c.V = 1
	if c.JTI == "" {
		c.JTI = rand.Text()
	}
	payload, _ := json.Marshal(c)
	p := enc.EncodeToString(payload)
	return p + "." + enc.EncodeToString(sign(key, p))
}
