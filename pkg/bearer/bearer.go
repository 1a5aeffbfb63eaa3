// Package bearer verifies a bearer JWT as API Gateway's JWT authorizer does, for the route the
// gateway cannot authorize: the MCP endpoint, whose refusals must name its protected resource
// metadata (WWW-Authenticate), which the authorizer's own 401 cannot carry (docs/design.md,
// "Agents over MCP"). The rules are the authorizer's, and the local gateway's that stands in
// for it (infra/local/gateway, whose test holds the two to one behaviour token by token): the
// compact form, RS256 under the kid its header names from the issuer's JWKS, the issuer, one of
// the audiences in aud (or, with no aud, client_id: Cognito's access tokens), exp (required) and
// nbf as JSON numbers, to the second. One addition the authorizer has no counterpart for: the
// MCP clients known by the URL of their client ID metadata document that the deployment allows
// (AllowClients, URLPatterns) are taken where an audience is, since no audience list can name
// every such URL.
package bearer

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/interrupthost/interrupthost/pkg/identity"
)

// ErrInvalid refuses a token that is not the issuer's, for one of the audiences, now: every
// reason alike, as the authorizer answers them.
var ErrInvalid = errors.New("bearer: the token is not valid")

// Refresh is how soon after reading the issuer's keys a token of a kid they lack reads them
// again: a forged token costs at most one fetch a minute per instance, not one each.
const Refresh = time.Minute

// compact is a JWS in compact serialisation: three base64url segments, the last maybe empty.
var compact = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$`)

// Verifier verifies tokens of one issuer for a list of audiences. Its keys are the issuer's
// JWKS, found through the issuer's discovery document at the first verification (a function's
// init makes no network call) and kept; a kid they lack reads them again at most once per
// Refresh. Safe for concurrent use.
type Verifier struct {
	issuer    string
	audiences []string
	client    *http.Client
	now       func() time.Time
	// clients are the metadata URLs taken where an audience is (AllowClients).
	clients URLPatterns

	mu      sync.Mutex
	jwksURI string
	keys    map[string]*rsa.PublicKey
	fetched time.Time
}

// New returns a verifier of tokens from issuer for any of audiences; client reaches the issuer
// (nil: a client with a 5 s timeout), now is the clock (nil: time.Now).
func New(issuer string, audiences []string, client *http.Client, now func() time.Time) (*Verifier, error) {
	if issuer == "" || len(audiences) == 0 {
		return nil, errors.New("bearer: an issuer and at least one audience are needed")
	}
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	if now == nil {
		now = time.Now
	}
	return &Verifier{issuer: issuer, audiences: audiences, client: client, now: now}, nil
}

// Verify checks the Authorization header's value (the token bare or after "Bearer ") and
// answers its claims and the scopes it grants (scope or scp: a string of names, or a list). A
// token that fails any rule is ErrInvalid; an issuer whose discovery document cannot be read is
// an error of its own.
func (v *Verifier) Verify(ctx context.Context, authorization string) (identity.Claims, []string, error) {
	raw := strings.TrimSpace(authorization)
	if scheme, token, ok := strings.Cut(raw, " "); ok {
		if !strings.EqualFold(scheme, "Bearer") {
			return nil, nil, ErrInvalid
		}
		raw = strings.TrimSpace(token)
	}
	if !compact.MatchString(raw) {
		return nil, nil, ErrInvalid
	}
	parts := strings.Split(raw, ".")
	var header struct{ Alg, Kid string }
	if decode(parts[0], &header) != nil || header.Alg != "RS256" || header.Kid == "" {
		return nil, nil, ErrInvalid
	}
	key, err := v.key(ctx, header.Kid)
	if err != nil {
		return nil, nil, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if key == nil || err != nil || rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], sig) != nil {
		return nil, nil, ErrInvalid
	}
	var values map[string]any
	var c identity.Claims
	if decode(parts[1], &values) != nil || decode(parts[1], &c) != nil {
		return nil, nil, ErrInvalid
	}
	if values["iss"] != v.issuer || !v.forUs(values) || !v.timely(values) {
		return nil, nil, ErrInvalid
	}
	return c, scopes(values), nil
}

// AllowClients makes v take, beside its audiences, the clients known by the URL of their
// metadata document that patterns allow (the template's McpClientMetadataUrls), where it reads
// an audience: aud, else client_id. Call it before the first Verify. It returns v.
func (v *Verifier) AllowClients(patterns URLPatterns) *Verifier {
	v.clients = patterns
	return v
}

// decode reads a base64url segment's JSON.
func decode(seg string, out any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// timely checks exp (a JSON number, required) and nbf (one, when present) to the second.
func (v *Verifier) timely(c map[string]any) bool {
	exp, hasExp := c["exp"].(float64)
	nbf, hasNbf := c["nbf"].(float64)
	now := v.now().Unix()
	return hasExp && now < int64(exp) && (!hasNbf || now >= int64(nbf))
}

// forUs reports whether the token is for one of the audiences, or a client the patterns allow
// (AllowClients): aud (a string or a list of them) when it has one, else client_id.
func (v *Verifier) forUs(c map[string]any) bool {
	ours := func(a any) bool {
		s, ok := a.(string)
		for _, want := range v.audiences {
			if ok && s == want {
				return true
			}
		}
		return ok && v.clients.Match(s)
	}
	switch aud := c["aud"].(type) {
	case nil:
		return ours(c["client_id"])
	case string:
		return ours(aud)
	case []any:
		for _, a := range aud {
			if ours(a) {
				return true
			}
		}
	}
	return false
}

// scopes are the scopes a token grants, as the authorizer reads them: scope, else scp, each a
// space-separated string or a list.
func scopes(c map[string]any) []string {
	for _, name := range []string{"scope", "scp"} {
		switch s := c[name].(type) {
		case string:
			return strings.Fields(s)
		case []any:
			var out []string
			for _, x := range s {
				out = append(out, fmt.Sprint(x))
			}
			return out
		}
	}
	return nil
}

// key is the issuer's key of kid, or nil when its JWKS has none; the JWKS is read the first
// time, and again for a kid it lacks once the last read is Refresh old.
func (v *Verifier) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if k, ok := v.keys[kid]; ok {
		return k, nil
	}
	if v.keys != nil && v.now().Sub(v.fetched) < Refresh {
		return nil, nil
	}
	if v.jwksURI == "" {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.get(ctx, strings.TrimSuffix(v.issuer, "/")+"/.well-known/openid-configuration", &meta); err != nil {
			return nil, fmt.Errorf("bearer: discover %s: %w", v.issuer, err)
		}
		if meta.Issuer != v.issuer || meta.JWKSURI == "" {
			return nil, fmt.Errorf("bearer: %s's discovery names issuer %q and jwks_uri %q", v.issuer, meta.Issuer, meta.JWKSURI)
		}
		v.jwksURI = meta.JWKSURI
	}
	var set struct {
		Keys []struct{ Kty, Kid, N, E string } `json:"keys"`
	}
	v.fetched = v.now()
	if err := v.get(ctx, v.jwksURI, &set); err != nil {
		if v.keys == nil {
			v.keys = map[string]*rsa.PublicKey{} // a failed first read waits Refresh too
		}
		return nil, nil // as the authorizer: a key it cannot fetch admits no token
	}
	v.keys = map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		n, nerr := base64.RawURLEncoding.DecodeString(k.N)
		e, eerr := base64.RawURLEncoding.DecodeString(k.E)
		if k.Kty != "RSA" || k.Kid == "" || nerr != nil || eerr != nil || len(e) == 0 || len(e) > 4 {
			continue
		}
		v.keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	return v.keys[kid], nil
}

func (v *Verifier) get(ctx context.Context, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
}
