package token

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
)

// Seal is a kind of value only the host makes, beside its tokens: <prefix>.<kid>.<payload>.<mac>,
// the payload base64url JSON, the MAC an HMAC-SHA256 under the keyring's key kid of Context and
// then everything before it. Each kind has its own Context, which no token's MAC covers (a
// token's covers "ow2."), so no value of one kind is ever taken for another kind or a token:
// a Slack button's value, an approved call's receipt.
type Seal struct {
	Prefix  string
	Context string
	// Max bounds the sealed value's length; Open refuses a longer one unread.
	Max int
}

// ErrNotSealed refuses a value the host did not make of the seal's kind: malformed, under an
// unknown key, or whose MAC does not verify.
var ErrNotSealed = errors.New("token: the value is not the host's")

// Make seals v under the keyring's active key.
func (s Seal) Make(ctx context.Context, keys Keys, v any) (string, error) {
	kid, key, err := keys.Active(ctx)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	head := s.Prefix + "." + kid + "." + enc.EncodeToString(payload)
	return head + "." + enc.EncodeToString(s.mac(key, head)), nil
}

// Open verifies sealed (its MAC compared in constant time) and decodes its payload into v. It
// answers ErrNotSealed for anything the host did not make under this seal, or an error of the
// keyring (unavailable) that says nothing of the value.
func (s Seal) Open(ctx context.Context, keys Keys, sealed string, v any) error {
	parts := strings.Split(sealed, ".")
	if len(sealed) > s.Max || len(parts) != 4 || parts[0] != s.Prefix || !ValidKid(parts[1]) {
		return ErrNotSealed
	}
	sum, err := decode(parts[3])
	if err != nil {
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
	payload, err := decode(parts[2])
	if err != nil || json.Unmarshal(payload, v) != nil {
		return ErrNotSealed
	}
	return nil
}

func (s Seal) mac(key []byte, head string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s.Context))
	m.Write([]byte(head))
	return m.Sum(nil)
}
