// Package devjwt issues and verifies the JWTs of the local stack. They are RS256 tokens, as a
// Cognito or other OIDC issuer would sign them in AWS, under a development key kept in the work
// tree (.local/dev-jwt.pem, made on first use); the local gateway checks them the way the HTTP
// API's JWT authorizer does, and issues them to people through the OpenID Connect provider the
// gateway serves (Provider). It is local tooling: nothing under pkg/ imports it but tests, which
// sign in against the Provider.
package devjwt

import (
	"cmp"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// GatewayURL is where `make run` serves the gateway. `make test` serves its own elsewhere when
// that port is taken, and tells its commands where in GATEWAY_URL.
const GatewayURL = "http://127.0.0.1:3000"

// IssuerPath is where under the gateway its identity provider lives. The issuer of the JWTs a
// gateway accepts is its URL and this path, so that a function discovering the provider at the
// issuer it is configured with (as the approval page's sign-in does in AWS) reaches the gateway
// that serves it, on whichever port `make test` found free.
const IssuerPath = "/local-issuer"

// Audience is the app client id of the approval page's sign-in, as a Cognito app client's id
// is in AWS: the first of Audiences, and the aud of the tokens this package issues unless they
// name a client (Token.ClientID).
const Audience = "interrupt-host-local"

// EngineClientID is the local stack's engine app client: a Cognito-shaped access token
// (Token.ClientID) names it in client_id, as an engine's machine-to-machine client does in AWS.
const EngineClientID = "interrupt-host-local-engine"

// MailerClientID is the local stack's app client of trusted tooling: a team's mailer holding
// tokens:delegate, which mints each approver's link and sends it to them (docs/design.md, "Who
// may decide").
const MailerClientID = "interrupt-host-local-mailer"

// MCPClientID is the local stack's public app client for MCP clients, the agents' sign-in:
// the authorization code grant with PKCE and no secret, any loopback redirect URI (an MCP
// client listens on a port of its own), the agents' scope alone; its access tokens name it in
// client_id, as a Cognito public client's do. It is the template's AgentsClientId, not one of
// JwtAudience: its tokens open the MCP endpoint and no other route.
const MCPClientID = "interrupt-host-local-mcp"

// MCPScopes are the scopes MCPClientID may be granted: the agents' (interrupt.ScopeAgentsAsk).
var MCPScopes = []string{"agents:ask"}

// LoopbackClientURLs is what the local stack passes as the template's McpClientMetadataUrls:
// any client whose metadata document is served on this machine, on any port (a developer's MCP
// client, a test's). The well-known clients' documents (VS Code's, Claude's) are on the
// internet, which the local issuer's fetch would need: a deployment lists them.
const LoopbackClientURLs = "http://127.0.0.1:*/*,http://localhost:*/*,http://[::1]:*/*"

// Audiences is what the local stack passes as the template's JwtAudience parameter: the
// approval page's app client first (the page signs in with it), then the machine clients.
const Audiences = Audience + "," + EngineClientID + "," + MailerClientID

// IssuerAt is the issuer of the gateway served at gatewayURL: what the stack passes as the
// template's JwtIssuer.
func IssuerAt(gatewayURL string) string { return strings.TrimSuffix(gatewayURL, "/") + IssuerPath }

// DefaultIssuer is the issuer of the gateway the tools talk to: GATEWAY_URL's, which `stack
// exec` sets for its command, else make run's.
func DefaultIssuer() string { return IssuerAt(cmp.Or(os.Getenv("GATEWAY_URL"), GatewayURL)) }

// KeyFile is where the development key lives, relative to the repository root.
const KeyFile = ".local/dev-jwt.pem"

// LoadKey reads the development key under root, creating it on first use.
func LoadKey(root string) (*rsa.PrivateKey, error) {
	path := filepath.Join(root, KeyFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return createKey(path)
	}
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, fmt.Errorf("devjwt: %s holds no PEM key", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("devjwt: %s: %w", path, err)
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("devjwt: %s is not an RSA key", path)
	}
	return rsaKey, nil
}

func createKey(path string) (*rsa.PrivateKey, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// O_EXCL: when two processes race to create the key, the loser reads the winner's.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return LoadKey(filepath.Dir(filepath.Dir(path)))
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		return nil, err
	}
	return key, nil
}

// Claims are a token's claims, as decoded JSON.
type Claims map[string]any

// Token is what a developer asks devtoken for.
type Token struct {
	// Issuer is the token's iss; empty means DefaultIssuer.
	Issuer  string
	Subject string
	// Username and Email, when set, are the username and email claims, the readable names a
	// deployment may read as the principal (PrincipalClaim) instead of sub: Cognito writes
	// username in its access tokens and email in its ID tokens.
	Username, Email string
	// ClientID, when set, makes the token a Cognito access token: client_id names the app
	// client and there is no aud, which API Gateway's authorizer then checks client_id for.
	ClientID string
	Tenant   string
	Scopes   []string
	Groups   []string
	Roles    []string
	TTL      time.Duration
}

// Claims are the claims of t issued at now, as the local issuer writes them.
func (t Token) Claims(now time.Time) Claims {
	c := Claims{
		"iss": cmp.Or(t.Issuer, DefaultIssuer()), "sub": t.Subject,
		"iat": now.Unix(), "exp": now.Add(t.TTL).Unix(),
	}
	if t.ClientID != "" {
		c["client_id"], c["token_use"] = t.ClientID, "access"
	} else {
		c["aud"] = Audience
	}
	for name, v := range map[string]string{"username": t.Username, "email": t.Email, "tenant": t.Tenant} {
		if v != "" {
			c[name] = v
		}
	}
	if len(t.Scopes) > 0 {
		c["scope"] = strings.Join(t.Scopes, " ")
	}
	if len(t.Groups) > 0 {
		c["groups"] = t.Groups
	}
	if len(t.Roles) > 0 {
		c["roles"] = t.Roles
	}
	return c
}

var enc = base64.RawURLEncoding

// Sign serialises claims as a compact RS256 JWT.
func Sign(key *rsa.PrivateKey, claims Claims) (string, error) {
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": KeyID})
	body, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(body)
	digest := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		return "", err
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// ErrInvalid is any token the authorizer refuses; API Gateway does not say why, and neither do we.
var ErrInvalid = errors.New("devjwt: invalid token")

// Verifier checks tokens as the HTTP API JWT authorizer does: RS256 signature, issuer,
// audience (aud, or client_id when there is no aud), expiry and not-before. It remembers the
// tokens whose signature it has verified: an RSA verification is most of the local gateway's CPU
// per request, and a client sends the same token until it expires. Issuer, audience and times
// are checked on every call.
type Verifier struct {
	keys KeySource

	mu     sync.Mutex
	signed map[string]Claims
}

// maxSigned bounds the remembered tokens; past it the verifier starts again from none. Only
// tokens signed with the stack's own key are remembered, so a client cannot fill it with junk.
const maxSigned = 4096

// KeySource finds the key an issuer signs with under kid.
type KeySource interface {
	Key(issuer, kid string) (*rsa.PublicKey, error)
}

// StaticKey is one key, whatever the issuer and kid: a test's.
type StaticKey struct{ Public *rsa.PublicKey }

// Key implements KeySource.
func (k StaticKey) Key(string, string) (*rsa.PublicKey, error) { return k.Public, nil }

// NewVerifier returns a Verifier of tokens signed with the keys keys finds.
func NewVerifier(keys KeySource) *Verifier {
	return &Verifier{keys: keys, signed: map[string]Claims{}}
}

// Verify returns token's claims if the authorizer would admit it for issuer and audience at now.
// The claims are shared between calls with the same token: callers must not change them.
func (v *Verifier) Verify(token, issuer, audience string, now time.Time) (Claims, error) {
	remembered := issuer + " " + token
	v.mu.Lock()
	c, ok := v.signed[remembered]
	v.mu.Unlock()
	if !ok {
		var err error
		if c, err = verifySignature(v.keys, issuer, token); err != nil {
			return nil, err
		}
		v.mu.Lock()
		if len(v.signed) >= maxSigned {
			clear(v.signed)
		}
		v.signed[remembered] = c
		v.mu.Unlock()
	}
	exp, hasExp := c["exp"].(float64)
	nbf, hasNbf := c["nbf"].(float64)
	switch {
	case c["iss"] != issuer, !c.hasAudience(audience), !hasExp:
		return nil, ErrInvalid
	case now.Unix() >= int64(exp):
		return nil, ErrInvalid
	case hasNbf && now.Unix() < int64(nbf):
		return nil, ErrInvalid
	}
	return c, nil
}

// verifySignature returns the claims of a well-formed RS256 token signed with the key of issuer
// its header's kid names.
func verifySignature(keys KeySource, issuer, token string) (Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, ErrInvalid
	}
	var header struct{ Alg, Kid string }
	if err := decodeSegment(parts[0], &header); err != nil || header.Alg != "RS256" {
		return nil, ErrInvalid
	}
	pub, err := keys.Key(issuer, header.Kid)
	if err != nil {
		return nil, ErrInvalid
	}
	sig, err := enc.DecodeString(parts[2])
	if err != nil {
		return nil, ErrInvalid
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig) != nil {
		return nil, ErrInvalid
	}
	var c Claims
	if err := decodeSegment(parts[1], &c); err != nil {
		return nil, ErrInvalid
	}
	return c, nil
}

// hasAudience is API Gateway's audience check: aud must name audience, and client_id is read
// only when there is no aud (Cognito's access tokens carry client_id alone), so a token for
// another audience is refused whatever client_id it also carries.
func (c Claims) hasAudience(audience string) bool {
	switch aud := c["aud"].(type) {
	case nil:
		return c["client_id"] == audience
	case string:
		return aud == audience
	case []any:
		for _, a := range aud {
			if a == audience {
				return true
			}
		}
	}
	return false
}

func decodeSegment(seg string, v any) error {
	raw, err := enc.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
