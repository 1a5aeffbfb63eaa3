package token

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Seal is a kind of value only the host makes, beside its tokens: <prefix>.<kid>.<payload>.<mac>,
// the payload base64url JSON, the MAC an HMAC-SHA256 under the keyring's key kid of Purpose, a
// NUL byte, and everything before it. Each kind has its own Purpose, which no token's MAC
// covers (a token's covers "ow2."), so no value of one kind is ever taken for another kind or a
// token: the sign-in's cookies, a Slack button's value, an approved call's receipt.
type Seal struct {
	Prefix  string
	Purpose string
	// Max bounds the sealed value's length; Open refuses a longer one unread, and Make one
	// that would be longer (a cookie a browser would not keep).
	Max int
}

// ErrNotSealed refuses a value the host did not make of the seal's kind: malformed, under an
// unknown key, or whose MAC does not verify.
var ErrNotSealed = errors.New("token: the value is not the host's")

// ErrTooLong refuses to seal a value longer than the seal's Max.
var ErrTooLong = errors.New("token: the sealed value would be too long")

// UsableKid reports whether kid may sign or verify a value of the host's beside v1 tokens (a
// sealed value, a CSRF value): the legacy kid of v1 tokens signs nothing new.
func UsableKid(kid string) bool { return ValidKid(kid) && kid != LegacyKid }

// Make seals v under the keyring's active key.
func (s Seal) Make(ctx context.Context, keys Keys, v any) (string, error) {
	kid, key, err := keys.Active(ctx)
	if err != nil {
		return "", err
	}
	if !UsableKid(kid) {
		return "", fmt.Errorf("token: cannot seal under kid %q", kid)
	}
	payload, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	head := s.Prefix + "." + kid + "." + enc.EncodeToString(payload)
	sealed := head + "." + enc.EncodeToString(s.mac(key, head))
	if len(sealed) > s.Max {
		return "", ErrTooLong
	}
	return sealed, nil
}

// Open verifies sealed and decodes its payload into v: the grammar first (length, four
// segments, prefix, kid, canonical base64url, the MAC's length), then the key, then the MAC in
// constant time, then the payload, whose members must be v's. It answers ErrNotSealed for
// anything the host did not make under this seal, or an error of the keyring (unavailable)
// that says nothing of the value.
func (s Seal) Open(ctx context.Context, keys Keys, sealed string, v any) error {
	parts := strings.Split(sealed, ".")
	if len(sealed) > s.Max || len(parts) != 4 || parts[0] != s.Prefix || !UsableKid(parts[1]) {
		return ErrNotSealed
	}
	payload, err := decode(parts[2])
	if err != nil {
		return ErrNotSealed
	}
	sum, err := decode(parts[3])
	if err != nil || len(sum) != sha256.Size {
		return ErrNotSealed
	}
	key, err := keys.Key(ctx, parts[1])
	if errors.Is(err, ErrUnknownKid) {
		return ErrNotSealed
	}
	if err != nil {
		return err
	}
	if !hmac.Equal(sum, s.mac(key, strings.Join(parts[:3], "."))) {
		return ErrNotSealed
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if dec.Decode(v) != nil || dec.More() {
		return ErrNotSealed
	}
	return nil
}

func (s Seal) mac(key []byte, head string) []byte { return Purposed(key, s.Purpose, head) }

// Purposed is the HMAC-SHA256 under key of purpose, a NUL byte and signed: the MAC of every
// value the host signs beside its tokens (Seal, the sign-in's CSRF values), each purpose its own.
func Purposed(key []byte, purpose, signed string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(signed))
	return m.Sum(nil)
}
