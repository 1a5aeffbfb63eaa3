// Package signin is the OpenID Connect relying party of the approval page: an approver signs in
// with the deployment's identity provider (the issuer the HTTP API's JWT authorizer trusts,
// JwtIssuer, and its app client, a public client without a secret) by the authorization code
// flow with PKCE (S256) and a nonce, and then decides as the signed-in principal: the subject,
// tenant, groups and roles of the ID token, read as pkg/apigw reads a bearer token's.
//
// # State between requests
//
// The page's function keeps nothing between invocations, so the flow's state lives in two
// cookies the browser carries, each signed with the host's token keyring (pkg/token.Keys):
//
//   - __Host-ih-signin, set by Begin for 10 minutes: the state, nonce, PKCE verifier, the
//     redirect URI the sign-in began with and the page to come back to; Finish clears it.
//   - __Host-ih-session, set by Finish: the session (its id, principal, tenant, groups, roles,
//     expiry), for SessionTTL and never past the ID token's exp; SignOut clears it.
//
// A session is also a record the server keeps (Sessions, in the host's table), put by Finish
// with the session's expiry and deleted by SignOut: a session cookie is a session only while its
// record is there and unexpired, so a sign-out ends the session on every function that reads
// sessions at once, not only in the browser that signed out (a copy of the cookie, taken before,
// opens nothing after). The cookie still carries the session, so a request reads one record,
// not the groups and roles again.
//
// Both are HttpOnly, Secure, SameSite=Lax and Path=/ with the __Host- prefix, so no script
// reads them, no sibling domain sets or shadows them, and a cross-site form cannot post with
// them (Lax still sends them on the identity provider's top-level redirect back to the
// callback). The same attributes serve https in AWS and http://127.0.0.1 locally: Chromium 156
// (Debian's, checked with a throwaway script driving it through playwright-core) treats
// 127.0.0.1 as a secure context, and stores and sends back a __Host- Secure cookie set over
// http://127.0.0.1:<port>, on a 302 too and on a redirect back from another site; only a
// __Host- cookie without Secure is dropped. So there is no local-only code path.
//
// A browser runs one sign-in at a time: a second Begin replaces the first's state cookie, and
// the first's callback then answers ErrState (start again). Cookies are not kept per port, so
// two local stacks on 127.0.0.1 share them; each reads the other's as no session, since their
// keyrings differ.
//
// A cookie's value is <prefix>.<kid>.<payload>.<mac>: prefix ihs1 (session) or ihst1 (state),
// the kid of the key it is signed under, the unpadded base64url of its JSON, and an
// HMAC-SHA256 over a purpose string ("interrupthost session v1", "interrupthost signin-state
// v1"), a NUL and everything before the MAC. Four segments never parse as a pkg/token token
// (five, or two), and the purpose, with its spaces, is never the signed text of one, so a
// cookie never verifies as a token nor a token as a cookie, and a state cookie never as a
// session or the other way round. Values are verified by the kid they name (a rotation leaves
// sessions valid while the old key is kept), the MAC compared with hmac.Equal. They are signed,
// not encrypted: they hold nothing the signed-in person may not see, and the verifier is of
// use only with a code the identity provider sends to this redirect URI.
//
// The package logs nothing; its errors never carry a cookie, code, token or key.
//
// # Errors
//
// Begin and Finish return errors that wrap exactly one of these sentinels (test them with
// errors.Is), each with the answer the page gives:
//
//   - ErrNext: Begin was given a next that is not a same-site path (400; a caller's bug).
//   - ErrState: the callback is not the answer to a sign-in this browser began: no state
//     cookie, or an expired, forged or foreign one, a state that differs from it, or no code
//     (400: start again).
//   - ErrDenied: the identity provider answered the callback with an error (access_denied,
//     login_required and the like) (403).
//   - ErrIDToken: the code exchange was refused (a used or expired code, a wrong verifier) or
//     the ID token did not verify (signature, iss, aud, exp, nonce), or its claims do not fit a
//     cookie (401).
//   - ErrNoTenant: the ID token carries no usable tenant claim, a string id (403).
//   - ErrNoPrincipal: the ID token carries no principal claim (Config.PrincipalClaim), a
//     non-empty string, so the person cannot be named (403).
//   - ErrUnavailable: the identity provider could not be reached (discovery, token endpoint or
//     JWKS), answered 5xx, or answered the callback server_error or temporarily_unavailable
//     (503: try again later).
//
// Any other error is the host's own: its keyring failed (500), or its session store (503 where
// the error wraps interrupt.ErrUnavailable, else 500). SessionFrom answers ErrNoSession for a
// request without a live session, and SignOut and SessionFrom the session store's errors as
// they are (see Sessions).
package signin

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/interrupthost/interrupthost/pkg/identity"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// The sentinels of the error contract (see the package doc).
var (
	ErrNext        = errors.New("signin: next is not a same-site path")
	ErrState       = errors.New("signin: the callback answers no sign-in this browser began")
	ErrDenied      = errors.New("signin: the identity provider refused the sign-in")
	ErrIDToken     = errors.New("signin: no valid ID token")
	ErrNoTenant    = errors.New("signin: the ID token carries no usable tenant")
	ErrNoPrincipal = errors.New("signin: the ID token carries no principal claim")
	ErrUnavailable = errors.New("signin: the identity provider is unavailable")
)

// Config is a deployment's sign-in.
type Config struct {
	// Issuer is the identity provider's issuer (JwtIssuer), where its discovery document is;
	// https, or http on a loopback host (the local stack's provider).
	Issuer string
	// ClientID is the app client's id (JwtAudience, the ID token's aud): a public client, which
	// proves itself with PKCE, not a secret.
	ClientID string
	// Keys sign and verify the cookies: the host's token keyring.
	Keys token.Keys
	// Sessions keeps the sessions the server has not ended (the host's table); required.
	Sessions Sessions
	// PrincipalClaim names the ID token's claim that is the person's principal, as the API's
	// (PRINCIPAL_CLAIM, identity.PrincipalClaims), so one person is one principal on the page and
	// through the API; "sub" when empty.
	PrincipalClaim string
	// TenantClaim, GroupsClaim and RolesClaim name the ID token's claims, as the API's
	// (TENANT_CLAIM and so on); "tenant", "groups" and "roles" when empty.
	TenantClaim, GroupsClaim, RolesClaim string
	// SessionTTL is how long a session lasts, never past the ID token's exp; 0 means an hour.
	SessionTTL time.Duration
	// HTTPClient talks to the identity provider; nil means one with a 5 s timeout.
	HTTPClient *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// stateTTL bounds a sign-in from Begin to its callback: long enough to type a password and
// pass a second factor, short enough that a state cookie left behind is soon worthless.
const stateTTL = 10 * time.Minute

// Flow is a configured sign-in. It is safe for concurrent use.
type Flow struct {
	cfg    Config
	client *http.Client

	mu   sync.Mutex
	disc *discovered
}

// discovered is what discovery told about the identity provider, kept for the Flow's life.
type discovered struct {
	oauth oauth2.Config
	keys  *oidc.RemoteKeySet
	algs  []string
}

// New checks cfg and returns its Flow. It does not contact the identity provider: discovery
// happens on the first Begin or Finish, so a function starts while its provider is down, and a
// failed discovery is tried again by the next call.
func New(cfg Config) (*Flow, error) {
	if err := checkURL(cfg.Issuer); err != nil {
		return nil, fmt.Errorf("signin: Issuer: %w", err)
	}
	switch {
	case cfg.ClientID == "":
		return nil, errors.New("signin: ClientID is required")
	case cfg.Keys == nil:
		return nil, errors.New("signin: Keys is required")
	case cfg.Sessions == nil:
		return nil, errors.New("signin: Sessions is required")
	case cfg.SessionTTL < 0:
		return nil, errors.New("signin: SessionTTL is negative")
	}
	cfg.PrincipalClaim = cmp.Or(cfg.PrincipalClaim, identity.DefaultPrincipalClaim)
	cfg.TenantClaim = cmp.Or(cfg.TenantClaim, "tenant")
	cfg.GroupsClaim = cmp.Or(cfg.GroupsClaim, "groups")
	cfg.RolesClaim = cmp.Or(cfg.RolesClaim, "roles")
	cfg.SessionTTL = cmp.Or(cfg.SessionTTL, time.Hour)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	client := http.Client{Timeout: 5 * time.Second}
	if cfg.HTTPClient != nil {
		client = *cfg.HTTPClient
	}
	base := client.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	client.Transport = issuerTransport{base}
	return &Flow{cfg: cfg, client: &client}, nil
}

// checkURL admits an absolute https URL, or http on a loopback host: the identity provider's
// answers decide who signs in, so they are never read over a network in the clear.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%q is not an absolute URL without credentials, query or fragment", raw)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%q is neither https nor http on a loopback host", raw)
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// issuerTransport turns a 5xx answer of the identity provider into a transport failure, so that
// discovery, the token endpoint and the JWKS all report it as ErrUnavailable, not as a refusal.
type issuerTransport struct{ base http.RoundTripper }

// RoundTrip passes req on, and an answer of 500 or more back as an error wrapping ErrUnavailable.
func (t issuerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode >= 500 {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s answered %s", ErrUnavailable, req.URL.Host, resp.Status)
	}
	return resp, err
}

// unreachable reports whether err is a failure to talk to the identity provider at all (a
// transport error, which issuerTransport makes of a 5xx too), rather than its refusal.
func unreachable(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}

// signingAlgs are the ID token algorithms accepted when the provider advertises them: the
// asymmetric ones go-oidc verifies, never none or an HMAC keyed with the client id.
var signingAlgs = []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}

// discover reads the provider's discovery document once and keeps it; a failure is not kept.
// Calls wait for one another's discovery instead of each fetching the document.
func (f *Flow) discover(ctx context.Context) (*discovered, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.disc != nil {
		return f.disc, nil
	}
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, f.client), f.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: discovery: %v", ErrUnavailable, err)
	}
	var meta struct {
		JWKS string   `json:"jwks_uri"`
		Algs []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := p.Claims(&meta); err != nil || meta.JWKS == "" || p.Endpoint().AuthURL == "" || p.Endpoint().TokenURL == "" {
		return nil, fmt.Errorf("%w: the discovery document names no authorization, token or JWKS endpoint", ErrUnavailable)
	}
	d := &discovered{
		oauth: oauth2.Config{
			ClientID: f.cfg.ClientID,
			Endpoint: oauth2.Endpoint{AuthURL: p.Endpoint().AuthURL, TokenURL: p.Endpoint().TokenURL, AuthStyle: oauth2.AuthStyleInParams},
			Scopes:   []string{oidc.ScopeOpenID},
		},
		// The key set outlives the request that discovered it: it keeps only the client.
		keys: oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), f.client), meta.JWKS),
	}
	for _, a := range meta.Algs {
		if slices.Contains(signingAlgs, a) {
			d.algs = append(d.algs, a)
		}
	}
	if len(d.algs) == 0 {
		d.algs = []string{oidc.RS256}
	}
	f.disc = d
	return d, nil
}

// stateClaims are a state cookie's contents. Exp is in Unix milliseconds.
type stateClaims struct {
	V        int    `json:"v"`
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	Redirect string `json:"redirect"`
	Next     string `json:"next"`
	Exp      int64  `json:"exp"`
}

// CallbackPath is where the identity provider sends the browser back, under the public base the
// sign-in began at: the app client registers <public base>/signin/callback.
const CallbackPath = "/signin/callback"

// Begin starts a sign-in at base, the public base URL of the request that needs it (the
// deployment's configured one, else the domain the request came in on: a function that is a
// route of the API cannot be told the API's URL without a circular dependency), which comes
// back to base's CallbackPath and then to next, a path on this site the caller has already
// chosen (anything else is ErrNext: no scheme, host, "//", backslash, space or control
// character, so the browser cannot read it as another site). The redirect URI travels in the
// signed state cookie, so the code is exchanged with the very URI it was issued for. It
// returns the URL of the provider's authorization endpoint to redirect the browser to, and the
// Set-Cookie value of the state cookie to set with that redirect.
func (f *Flow) Begin(ctx context.Context, base, next string) (authURL, setCookie string, err error) {
	if !validNext(next) {
		return "", "", ErrNext
	}
	redirect := strings.TrimSuffix(base, "/") + CallbackPath
	if err := checkURL(redirect); err != nil {
		return "", "", fmt.Errorf("signin: the public base URL: %w", err)
	}
	d, err := f.discover(ctx)
	if err != nil {
		return "", "", err
	}
	st := stateClaims{
		V: 1, State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier(),
		Redirect: redirect, Next: next, Exp: f.cfg.Now().Add(stateTTL).UnixMilli(),
	}
	value, err := seal(ctx, f.cfg.Keys, stateCookie, st)
	if err != nil {
		return "", "", err
	}
	authURL = d.oauth.AuthCodeURL(st.State, oauth2.S256ChallengeOption(st.Verifier), oidc.Nonce(st.Nonce), redirectURI(redirect))
	return authURL, setCookieHeader(stateCookie.name, value, stateTTL), nil
}

// redirectURI names the callback a sign-in began with, in its authorization request and again
// in its code exchange, as OAuth 2.0 asks (RFC 6749, 4.1.3).
func redirectURI(uri string) oauth2.AuthCodeOption {
	return oauth2.SetAuthURLParam("redirect_uri", uri)
}

// maxNext bounds next, which travels in the state cookie.
const maxNext = 2048

func validNext(next string) bool {
	if len(next) == 0 || len(next) > maxNext || next[0] != '/' || strings.HasPrefix(next, "//") {
		return false
	}
	// A path as a URL carries it is printable ASCII; browsers drop tabs and line breaks and read
	// a backslash as a slash, which would turn "/\t/evil" or "/\evil" into another site.
	for i := 0; i < len(next); i++ {
		if c := next[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return false
		}
	}
	u, err := url.Parse(next)
	return err == nil && u.Scheme == "" && u.Host == "" && u.Opaque == ""
}

// Session is a signed-in approver.
type Session struct {
	// ID is the session's random id, which CSRF tokens are bound to and its record is named by
	// (with Tenant: Sessions).
	ID string
	// Subject is the ID token's principal claim (Config.PrincipalClaim); Tenant, Groups and
	// Roles are its claims too, as the API reads a bearer token's.
	Subject, Tenant string
	Groups, Roles   []string
	// ExpiresAt is when the session ends (to the millisecond).
	ExpiresAt time.Time
}

// sessionClaims are a session cookie's contents. Exp is in Unix milliseconds. Sub is the
// principal, read from the claim Claim names (a cookie without it was made when only sub was
// read): a session made under another PrincipalClaim is no session, so nobody who signed in
// before the deployment changed it votes again under a second name.
type sessionClaims struct {
	V      int      `json:"v"`
	ID     string   `json:"sid"`
	Sub    string   `json:"sub"`
	Claim  string   `json:"pc,omitempty"`
	Tenant string   `json:"tenant"`
	Groups []string `json:"groups,omitempty"`
	Roles  []string `json:"roles,omitempty"`
	Exp    int64    `json:"exp"`
}

func (c sessionClaims) session() Session {
	return Session{ID: c.ID, Subject: c.Sub, Tenant: c.Tenant, Groups: c.Groups, Roles: c.Roles, ExpiresAt: time.UnixMilli(c.Exp)}
}

// errorCode is the form of an RFC 6749 error code, the only part of a provider's error that
// goes into ours (a description is the provider's prose, of any length).
var errorCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

// Finish completes the callback (GET /signin/callback?code=..&state=..) of the sign-in whose
// state cookie is among cookies, as API Gateway's payload 2.0 gives them ("name=value"): it
// checks the state (constant time), exchanges the code with the verifier, verifies the ID
// token and its nonce, and reads the tenant, groups and roles. It returns the session, the
// Set-Cookie values to answer with (the session cookie, and the state cookie cleared) and the
// next path Begin was given. The session's record is put before the cookie is answered, so no
// cookie names a session the server does not hold. Errors are as the package doc says.
func (f *Flow) Finish(ctx context.Context, cookies []string, query url.Values) (Session, []string, string, error) {
	now := f.cfg.Now()
	st, ok := f.state(ctx, cookies, query.Get("state"), now)
	if !ok {
		return Session{}, nil, "", ErrState
	}
	if e := query.Get("error"); e != "" {
		if !errorCode.MatchString(e) {
			e = "an unknown error"
		}
		if e == "server_error" || e == "temporarily_unavailable" {
			return Session{}, nil, "", fmt.Errorf("%w: the provider answered %s", ErrUnavailable, e)
		}
		return Session{}, nil, "", fmt.Errorf("%w: it answered %s", ErrDenied, e)
	}
	code := query.Get("code")
	if code == "" {
		return Session{}, nil, "", fmt.Errorf("%w: the callback carries no code", ErrState)
	}
	d, err := f.discover(ctx)
	if err != nil {
		return Session{}, nil, "", err
	}
	tok, err := d.oauth.Exchange(oidc.ClientContext(ctx, f.client), code, oauth2.VerifierOption(st.Verifier), redirectURI(st.Redirect))
	if err != nil {
		if unreachable(err) {
			return Session{}, nil, "", fmt.Errorf("%w: token endpoint: %v", ErrUnavailable, err)
		}
		// Only the provider's error code: its answer's body is its own, and is not ours to log.
		var refused *oauth2.RetrieveError
		if errors.As(err, &refused) {
			return Session{}, nil, "", fmt.Errorf("%w: the code exchange was refused (%s)", ErrIDToken, cmp.Or(refused.ErrorCode, "without an error code"))
		}
		return Session{}, nil, "", fmt.Errorf("%w: the code exchange failed: %v", ErrIDToken, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Session{}, nil, "", fmt.Errorf("%w: the token endpoint answered no id_token", ErrIDToken)
	}
	probe := &keyProbe{keys: d.keys}
	verifier := oidc.NewVerifier(f.cfg.Issuer, probe, &oidc.Config{ClientID: f.cfg.ClientID, SupportedSigningAlgs: d.algs, Now: f.cfg.Now})
	idToken, err := verifier.Verify(ctx, raw)
	switch {
	case probe.err != nil:
		return Session{}, nil, "", fmt.Errorf("%w: JWKS: %v", ErrUnavailable, probe.err)
	case err != nil:
		return Session{}, nil, "", fmt.Errorf("%w: %v", ErrIDToken, err)
	case subtle.ConstantTimeCompare([]byte(idToken.Nonce), []byte(st.Nonce)) != 1:
		return Session{}, nil, "", fmt.Errorf("%w: the nonce is not this sign-in's", ErrIDToken)
	case idToken.Subject == "":
		return Session{}, nil, "", fmt.Errorf("%w: no subject", ErrIDToken)
	}
	var c identity.Claims
	if err := idToken.Claims(&c); err != nil {
		return Session{}, nil, "", fmt.Errorf("%w: claims: %v", ErrIDToken, err)
	}
	sc := sessionClaims{
		V: 1, ID: rand.Text(), Sub: c.Text(f.cfg.PrincipalClaim), Claim: f.cfg.PrincipalClaim, Tenant: c.Text(f.cfg.TenantClaim),
		Groups: c.Names(f.cfg.GroupsClaim), Roles: c.Names(f.cfg.RolesClaim),
		Exp: min(now.Add(f.cfg.SessionTTL).UnixMilli(), idToken.Expiry.UnixMilli()),
	}
	if sc.Sub == "" {
		return Session{}, nil, "", fmt.Errorf("%w: the %s claim is missing or not a string", ErrNoPrincipal, f.cfg.PrincipalClaim)
	}
	if !runlog.ValidID(sc.Tenant) {
		return Session{}, nil, "", fmt.Errorf("%w: the %s claim is not a string id", ErrNoTenant, f.cfg.TenantClaim)
	}
	value, err := seal(ctx, f.cfg.Keys, sessionCookie, sc)
	if errors.Is(err, token.ErrTooLong) {
		return Session{}, nil, "", fmt.Errorf("%w: its groups and roles do not fit a cookie", ErrIDToken)
	}
	if err != nil {
		return Session{}, nil, "", err
	}
	s := sc.session()
	if err := f.cfg.Sessions.PutSession(ctx, s.Tenant, s.ID, s.ExpiresAt); err != nil {
		return Session{}, nil, "", fmt.Errorf("signin: the session's record: %w", err)
	}
	return s, []string{setCookieHeader(sessionCookie.name, value, s.ExpiresAt.Sub(now)), clearCookieHeader(stateCookie.name)}, st.Next, nil
}

// state is the unexpired state cookie among cookies whose state is want.
func (f *Flow) state(ctx context.Context, cookies []string, want string, now time.Time) (stateClaims, bool) {
	for _, v := range cookieValues(cookies, stateCookie.name) {
		var st stateClaims
		if open(ctx, f.cfg.Keys, stateCookie, v, &st) && st.V == 1 && now.UnixMilli() < st.Exp && st.State != "" && st.Verifier != "" &&
			checkURL(st.Redirect) == nil && validNext(st.Next) && subtle.ConstantTimeCompare([]byte(st.State), []byte(want)) == 1 {
			return st, true
		}
	}
	return stateClaims{}, false
}

// keyProbe passes the verifier's key lookups to the provider's key set and remembers a failure
// to fetch it, which go-oidc reports only as text.
type keyProbe struct {
	keys oidc.KeySet
	err  error
}

// VerifySignature is the key set's, remembering a failure to reach it.
func (p *keyProbe) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	payload, err := p.keys.VerifySignature(ctx, jwt)
	if err != nil && unreachable(err) {
		p.err = err
	}
	return payload, err
}

// SessionFrom is the session of the request whose cookies are given ("name=value", as API
// Gateway's payload 2.0 has them). It answers ErrNoSession when there is none: no cookie, or
// one forged, signed under a kid the keyring does not know, expired, made under another
// principal claim, or whose record the server does not hold (signed out, or never put: a
// cookie sealed by someone holding the keyring names no record) or holds expired by this
// Flow's clock (the table's TTL deletes a record some time after it expires). A session store
// failure is answered as its error, never as ErrNoSession: the request is refused, and the
// person is not told they are signed out while they may not be.
func (f *Flow) SessionFrom(ctx context.Context, cookies []string) (Session, error) {
	now := f.cfg.Now()
	for _, v := range cookieValues(cookies, sessionCookie.name) {
		var sc sessionClaims
		if !open(ctx, f.cfg.Keys, sessionCookie, v, &sc) || sc.V != 1 || now.UnixMilli() >= sc.Exp || !runlog.ValidID(sc.ID) || sc.Sub == "" ||
			!runlog.ValidID(sc.Tenant) || cmp.Or(sc.Claim, identity.DefaultPrincipalClaim) != f.cfg.PrincipalClaim {
			continue
		}
		expires, found, err := f.cfg.Sessions.Session(ctx, sc.Tenant, sc.ID)
		if err != nil {
			return Session{}, fmt.Errorf("signin: the session's record: %w", err)
		}
		if found && now.Before(expires) {
			return sc.session(), nil
		}
	}
	return Session{}, ErrNoSession
}

// SignOut ends s on the server, deleting its record, so that its cookie opens nothing on any
// function from now on, and answers the Set-Cookie value that clears the cookie in the browser.
// A store failure is answered as its error (see Sessions) and the session is not ended: the
// caller must not tell the person they are signed out.
func (f *Flow) SignOut(ctx context.Context, s Session) (string, error) {
	if err := f.cfg.Sessions.DeleteSession(ctx, s.Tenant, s.ID); err != nil {
		return "", fmt.Errorf("signin: the session's record: %w", err)
	}
	return clearCookieHeader(sessionCookie.name), nil
}

// setCookieHeader is a Set-Cookie value for name, kept for ttl (at least a second: Max-Age=0
// would delete it).
func setCookieHeader(name, value string, ttl time.Duration) string {
	c := http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: max(1, int(math.Ceil(ttl.Seconds()))),
		Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode,
	}
	return c.String()
}

func clearCookieHeader(name string) string {
	c := http.Cookie{Name: name, Path: "/", MaxAge: -1, Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	return c.String()
}

// cookieValues are the values of the cookies called name among cookies, in order: a browser
// may send two of one name (set for two paths), and the one that verifies counts.
func cookieValues(cookies []string, name string) []string {
	var out []string
	for _, c := range cookies {
		n, v, ok := strings.Cut(c, "=")
		if ok && strings.TrimSpace(n) == name {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}
