// Package token is the signed-token codec of the interrupt host: ow2.<alg>.<kid>.<payload>.<mac>
// (and the v1 form <payload>.<mac> under kid "legacy"). Parsing is strict and canonical, so a
// token has exactly one spelling: anything an attacker can vary (padding, alphabet, case, line
// breaks, trailing bits, segment count, length) is refused before a key is looked up.
package token

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Prefix and AlgHS256 spell the v2 grammar; Algs is what the host accepts and advertises.
const (
	Prefix    = "ow2"
	AlgHS256  = "hs256"
	LegacyKid = "legacy"
)

// Algs are the advertised token algorithms (interrupt.tokenAlgs[]).
var Algs = []string{AlgHS256}

// MaxLen caps a token's length: a real token is a few hundred characters; refusing anything
// longer bounds the work an attacker can make a verifier do.
const MaxLen = 2048

// MACLen is the length of an HMAC-SHA256.
const MACLen = sha256.Size

// Intents a token can be minted with.
const (
	IntentResolve = "resolve"
	IntentInspect = "inspect"
)

// Claims are what a token binds. Times are Unix milliseconds.
type Claims struct {
	V           int    `json:"v"`
	Tenant      string `json:"tenant"`
	RunID       string `json:"runId"`
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
	Intent      string `json:"intent"`
	Sub         string `json:"sub,omitempty"`
	IssuedAt    int64  `json:"iat"`
	ExpiresAt   int64  `json:"exp"`
	JTI         string `json:"jti"`
}

// Expired reports whether now is past the token's expiry; at exp exactly it is still valid.
func (c Claims) Expired(now time.Time) bool { return now.UnixMilli() > c.ExpiresAt }

// Errors of verification. All of them answer 401 interrupt_token_invalid; they are distinct for
// logs and tests, never for clients.
var (
	ErrMalformed  = errors.New("token: malformed")
	ErrAlg        = errors.New("token: algorithm not accepted")
	ErrUnknownKid = errors.New("token: unknown kid")
	ErrMAC        = errors.New("token: bad MAC")
)

// Keys is what verification and minting need of a keyring.
type Keys interface {
	// Active is the kid and key new tokens are signed with.
	Active(ctx context.Context) (kid string, key []byte, err error)
	// Key is the key kid selects, or ErrUnknownKid.
	Key(ctx context.Context, kid string) ([]byte, error)
}

var (
	kidPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	enc        = base64.RawURLEncoding.Strict()
)

// ValidKid reports whether kid may name a key: checked before any lookup.
func ValidKid(kid string) bool { return kidPattern.MatchString(kid) }

// parsed is a token split into its parts, not yet verified.
type parsed struct {
	kid     string
	signed  string // the bytes the MAC covers
	payload []byte
	mac     []byte
	version int
}

// parse checks the grammar: length, alphabet, segment count, alg, kid, canonical base64url and
// MAC length.
func parse(s string) (parsed, error) {
	var p parsed
	if len(s) == 0 || len(s) > MaxLen {
		return p, ErrMalformed
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return p, ErrMalformed
		}
	}
	parts := strings.Split(s, ".")
	var payload, mac string
	switch {
	case len(parts) == 5 && parts[0] == Prefix:
		if !slices.Contains(Algs, parts[1]) {
			return p, ErrAlg
		}
		p.kid, p.version = parts[2], 2
		if !ValidKid(p.kid) {
			return p, ErrMalformed
		}
		payload, mac = parts[3], parts[4]
		p.signed = strings.Join(parts[:4], ".")
	case len(parts) == 2:
		p.kid, p.version = LegacyKid, 1
		payload, mac = parts[0], parts[1]
		p.signed = payload
	default:
		return p, ErrMalformed
	}
	var err error
	if p.payload, err = decode(payload); err != nil || len(p.payload) == 0 {
		return p, ErrMalformed
	}
	if p.mac, err = decode(mac); err != nil || len(p.mac) != MACLen {
		return p, ErrMalformed
	}
	return p, nil
}

// decode accepts only canonical unpadded base64url: the strict decoder refuses non-zero
// trailing bits, and re-encoding must give back the input.
func decode(s string) ([]byte, error) {
	b, err := enc.DecodeString(s)
	if err != nil || enc.EncodeToString(b) != s {
		return nil, ErrMalformed
	}
	return b, nil
}

func sign(key []byte, signed string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// Verify checks s and returns its claims: grammar, alg, kid known, MAC in constant time, then
// the payload. It does not check expiry or state: the caller answers those with their own codes.
func Verify(ctx context.Context, keys Keys, s string) (Claims, error) {
	var c Claims
	p, err := parse(s)
	if err != nil {
		return c, err
	}
	key, err := keys.Key(ctx, p.kid)
	if err != nil {
		return c, err
	}
	if !hmac.Equal(sign(key, p.signed), p.mac) {
		return c, ErrMAC
	}
	dec := json.NewDecoder(bytes.NewReader(p.payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || dec.More() {
		return Claims{}, ErrMalformed
	}
	if c.V != p.version || c.Tenant == "" || c.RunID == "" || c.NodeID == "" || c.InterruptID == "" || c.JTI == "" ||
		(c.Intent != IntentResolve && c.Intent != IntentInspect) || c.ExpiresAt <= 0 {
		return Claims{}, ErrMalformed
	}
	return c, nil
}

// Mint signs c under the active key. It fills v, iat and a fresh jti.
func Mint(ctx context.Context, keys Keys, c Claims, now time.Time) (string, Claims, error) {
	c.IssuedAt, c.JTI = now.UnixMilli(), rand.Text()
	return Sign(ctx, keys, c)
}

// Sign signs c, iat and jti as given, under the active key: the same claims give the same token
// while the active key stays, which is how one link is made once however often it is delivered.
// It fills v.
func Sign(ctx context.Context, keys Keys, c Claims) (string, Claims, error) {
	if c.JTI == "" || c.IssuedAt <= 0 {
		return "", c, errors.New("token: a token needs a jti and an issue time")
	}
	kid, key, err := keys.Active(ctx)
	if err != nil {
		return "", c, err
	}
	if !ValidKid(kid) || kid == LegacyKid {
		return "", c, fmt.Errorf("token: cannot mint under kid %q", kid)
	}
	c.V = 2
	payload, err := json.Marshal(c)
	if err != nil {
		return "", c, err
	}
	signed := Prefix + "." + AlgHS256 + "." + kid + "." + enc.EncodeToString(payload)
	return signed + "." + enc.EncodeToString(sign(key, signed)), c, nil
}
