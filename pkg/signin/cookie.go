package signin

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/token"
)

// kind is one sort of signed cookie: its name, and the seal of its value (token.Seal: a prefix
// and a purpose of its own, which keep the sorts apart, see the package doc), bounded to what a
// browser keeps of a cookie (RFC 6265bis: 4096 bytes of name and value).
type kind struct {
	name string
	seal token.Seal
}

func cookieKind(name, prefix, purpose string) kind {
	return kind{name, token.Seal{Prefix: prefix, Purpose: purpose, Max: maxCookie - len(name) - 1}}
}

var (
	sessionCookie = cookieKind("__Host-ih-session", "ihs1", "interrupthost session v1")
	stateCookie   = cookieKind("__Host-ih-signin", "ihst1", "interrupthost signin-state v1")
)

// csrfPurpose is the purpose of a CSRF token's MAC.
const csrfPurpose = "interrupthost csrf v1"

// maxCookie is what browsers keep of a cookie's name and value (RFC 6265bis: 4096 bytes).
const maxCookie = 4096

var enc = base64.RawURLEncoding.Strict()

// activeKey is the keyring's active kid and key, refused where a token could not be minted
// under it either.
func activeKey(ctx context.Context, keys token.Keys) (string, []byte, error) {
	kid, key, err := keys.Active(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("signin: keys: %w", err)
	}
	if !token.UsableKid(kid) {
		return "", nil, fmt.Errorf("signin: cannot sign under kid %q", kid)
	}
	return kid, key, nil
}

// seal signs v as a cookie value of kind k under the active key.
func seal(ctx context.Context, keys token.Keys, k kind, v any) (string, error) {
	value, err := k.seal.Make(ctx, keys, v)
	if err != nil && !errors.Is(err, token.ErrTooLong) {
		return "", fmt.Errorf("signin: %w", err)
	}
	return value, err
}

// open verifies s as a cookie value of kind k and decodes it into v (token.Seal.Open).
func open(ctx context.Context, keys token.Keys, k kind, s string, v any) bool {
	return k.seal.Open(ctx, keys, s, v) == nil
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
	return kid + "." + enc.EncodeToString(token.Purposed(key, csrfPurpose, s.ID)), nil
}

// CheckCSRF reports whether v is a form token of s, under any key the keyring still holds, so a
// rotation between rendering and posting a form does not refuse it. The MAC is compared in
// constant time.
func (f *Flow) CheckCSRF(ctx context.Context, s Session, v string) bool {
	kid, sum, ok := strings.Cut(v, ".")
	if !ok || s.ID == "" || !token.UsableKid(kid) {
		return false
	}
	got, ok := decode(sum)
	if !ok || len(got) != sha256.Size {
		return false
	}
	key, err := f.cfg.Keys.Key(ctx, kid)
	return err == nil && hmac.Equal(token.Purposed(key, csrfPurpose, s.ID), got)
}
