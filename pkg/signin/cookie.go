package signin

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/token"
)

// kind is one sort of signed value: its cookie's name, its prefix, and the purpose its MAC
// covers, which keeps the sorts apart (see the package doc).
type kind struct{ name, prefix, purpose string }

var (
	sessionCookie = kind{"__Host-ih-session", "ihs1", "interrupthost session v1"}
	stateCookie   = kind{"__Host-ih-signin", "ihst1", "interrupthost signin-state v1"}
)

// csrfPurpose is the purpose of a CSRF token's MAC.
const csrfPurpose = "interrupthost csrf v1"

// maxCookie is what browsers keep of a cookie's name and value (RFC 6265bis: 4096 bytes).
const maxCookie = 4096

// fits reports whether a cookie of k with value is one a browser keeps.
func (k kind) fits(value string) bool { return len(k.name)+1+len(value) <= maxCookie }

var enc = base64.RawURLEncoding.Strict()

func mac(key []byte, purpose, signed string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// activeKey is the keyring's active kid and key, refused where a token could not be minted
// under it either.
func activeKey(ctx context.Context, keys token.Keys) (string, []byte, error) {
	kid, key, err := keys.Active(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("signin: keys: %w", err)
	}
	if !usableKid(kid) {
		return "", nil, fmt.Errorf("signin: cannot sign under kid %q", kid)
	}
	return kid, key, nil
}

// usableKid is a kid a cookie may name: the legacy kid of v1 tokens signs nothing new.
func usableKid(kid string) bool { return token.ValidKid(kid) && kid != token.LegacyKid }

// seal signs v as a value of kind k under the active key.
func seal(ctx context.Context, keys token.Keys, k kind, v any) (string, error) {
	kid, key, err := activeKey(ctx, keys)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	signed := k.prefix + "." + kid + "." + enc.EncodeToString(payload)
	return signed + "." + enc.EncodeToString(mac(key, k.purpose, signed)), nil
}

// open verifies s as a value of kind k and decodes it into v: the grammar (length, four
// segments, prefix, kid, canonical base64url, MAC length) before the key is looked up, then
// the MAC in constant time, then the payload, whose fields must be v's.
func open(ctx context.Context, keys token.Keys, k kind, s string, v any) bool {
	if !k.fits(s) {
		return false
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 || parts[0] != k.prefix || !usableKid(parts[1]) {
		return false
	}
	payload, ok := decode(parts[2])
	sum, ok2 := decode(parts[3])
	if !ok || !ok2 || len(sum) != sha256.Size {
		return false
	}
	key, err := keys.Key(ctx, parts[1])
	if err != nil || !hmac.Equal(mac(key, k.purpose, strings.Join(parts[:3], ".")), sum) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	return dec.Decode(v) == nil && !dec.More()
}

// decode accepts only canonical unpadded base64url, so a value has one spelling.
func decode(s string) ([]byte, bool) {
	b, err := enc.DecodeString(s)
	return b, err == nil && enc.EncodeToString(b) == s
}

// CSRF is the form token of s's pages: an HMAC of the session's id under the active key, with
// its kid. A form posted from another site carries no session cookie (SameSite=Lax); the token
// also stops a same-site page (another API on the same parent domain) from posting one, as it
// cannot read the session's id.
func (f *Flow) CSRF(ctx context.Context, s Session) (string, error) {
	kid, key, err := activeKey(ctx, f.cfg.Keys)
	if err != nil {
		return "", err
	}
	return kid + "." + enc.EncodeToString(mac(key, csrfPurpose, s.ID)), nil
}

// CheckCSRF reports whether v is a form token of s, under any key the keyring still holds, so a
// rotation between rendering and posting a form does not refuse it. The MAC is compared in
// constant time.
func (f *Flow) CheckCSRF(ctx context.Context, s Session, v string) bool {
	kid, sum, ok := strings.Cut(v, ".")
	if !ok || s.ID == "" || !usableKid(kid) {
		return false
	}
	got, ok := decode(sum)
	if !ok || len(got) != sha256.Size {
		return false
	}
	key, err := f.cfg.Keys.Key(ctx, kid)
	return err == nil && hmac.Equal(mac(key, csrfPurpose, s.ID), got)
}
