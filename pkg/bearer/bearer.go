// Package bearer verifies a bearer JWT as API Gateway's JWT authorizer does, for the route the
// gateway cannot authorize: the MCP endpoint, whose refusals must name its protected resource
// metadata (WWW-Authenticate), which the authorizer's own 401 cannot carry (docs/design.md,
// "Agents over MCP"). The rules are the authorizer's: the issuer, one of the audiences in aud
// (or client_id, for a token without aud, as Cognito's access tokens), a signature by a key of
// the issuer's JWKS (RS256, as API Gateway takes), exp (required) and nbf, to the second. The
// infra/local gateway test holds this and the local gateway's authorizer to one behaviour.
package bearer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/interrupthost/interrupthost/pkg/identity"
)

// ErrInvalid refuses a token that is not the issuer's, for one of the audiences, now: every
// reason alike, as the authorizer answers them.
var ErrInvalid = errors.New("bearer: the token is not valid")

// Verifier verifies tokens of one issuer for a list of audiences. Its keys are the issuer's
// JWKS, found through the issuer's discovery document at the first verification (a function's
// init then makes no network call) and cached, a kid it does not know reading them again. Safe
// for concurrent use.
type Verifier struct {
	issuer    string
	audiences []string
	client    *http.Client
	now       func() time.Time

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
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

// load discovers the issuer's JWKS once; a failure is not kept, so the next verification tries
// again.
func (v *Verifier) load(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.verifier != nil {
		return v.verifier, nil
	}
	ctx = oidc.ClientContext(ctx, v.client)
	p, err := oidc.NewProvider(ctx, v.issuer)
	if err != nil {
		return nil, fmt.Errorf("bearer: discover %s: %w", v.issuer, err)
	}
	var meta struct {
		JWKS string `json:"jwks_uri"`
	}
	if err := p.Claims(&meta); err != nil || meta.JWKS == "" {
		return nil, fmt.Errorf("bearer: %s names no jwks_uri", v.issuer)
	}
	keys := oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), v.client), meta.JWKS)
	// The audience is checked below (aud or client_id, any of a list), and the times to the
	// second, as the authorizer checks them.
	v.verifier = oidc.NewVerifier(v.issuer, keys, &oidc.Config{
		SkipClientIDCheck: true, SkipExpiryCheck: true, SupportedSigningAlgs: []string{oidc.RS256},
	})
	return v.verifier, nil
}

// Verify checks the Authorization header's value (the token bare or after "Bearer ") and
// answers its claims and the scopes it grants (scope, or scp). A token that fails any rule is
// ErrInvalid; an issuer whose discovery document cannot be read is an error of its own.
func (v *Verifier) Verify(ctx context.Context, authorization string) (identity.Claims, []string, error) {
	raw := strings.TrimSpace(authorization)
	if scheme, token, ok := strings.Cut(raw, " "); ok {
		if !strings.EqualFold(scheme, "Bearer") {
			return nil, nil, ErrInvalid
		}
		raw = strings.TrimSpace(token)
	}
	if strings.Count(raw, ".") != 2 {
		return nil, nil, ErrInvalid
	}
	verifier, err := v.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	tok, err := verifier.Verify(ctx, raw)
	if err != nil {
		return nil, nil, ErrInvalid // as the authorizer: a key it cannot fetch admits no token
	}
	var c identity.Claims
	if err := tok.Claims(&c); err != nil {
		return nil, nil, ErrInvalid
	}
	if !v.timely(c) || !v.forUs(c) {
		return nil, nil, ErrInvalid
	}
	return c, scopes(c), nil
}

// timely checks exp (required) and nbf against the clock, to the second.
func (v *Verifier) timely(c identity.Claims) bool {
	at := func(name string) (int64, bool) {
		var n json.Number
		if json.Unmarshal(c[name], &n) != nil {
			return 0, false
		}
		f, err := n.Float64()
		return int64(f), err == nil
	}
	now := v.now().Unix()
	exp, ok := at("exp")
	if !ok || now >= exp {
		return false
	}
	nbf, ok := at("nbf")
	return !ok || now >= nbf
}

// forUs reports whether the token is for one of the audiences: aud (a string or a list), else
// client_id.
func (v *Verifier) forUs(c identity.Claims) bool {
	var auds []string
	if _, ok := c["aud"]; ok {
		auds = c.Names("aud")
	} else if id := c.Text("client_id"); id != "" {
		auds = []string{id}
	}
	return slices.ContainsFunc(auds, func(a string) bool { return slices.Contains(v.audiences, a) })
}

// scopes are the scopes a token grants: scope, space-separated, or scp, a list or a string.
func scopes(c identity.Claims) []string {
	if s := c.Text("scope"); s != "" {
		return strings.Fields(s)
	}
	if s := c.Text("scp"); s != "" {
		return strings.Fields(s)
	}
	return c.Names("scp")
}
