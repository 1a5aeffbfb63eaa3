package devjwt

import (
	"cmp"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"html/template"
	"math/big"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// CallbackPath is the one redirect URI path the provider admits under the gateway: the
// approval page's sign-in callback route. A provider that redirected anywhere asked would hand
// codes to whoever wrote the link.
const CallbackPath = "/signin/callback"

// KeyID names the development key in JWT headers and in the provider's JWKS, so a verifier that
// selects keys by kid (go-oidc does) finds it.
const KeyID = "local"

// codeTTL is how long an authorization code may wait for its exchange; RFC 6749 (4.1.2)
// recommends at most ten minutes, and a browser redirect takes a second.
const codeTTL = 60 * time.Second

// maxCodes bounds the codes waiting for their exchange: past it (after expired ones are
// dropped) a sign-in is refused, so a script posting the form in a loop cannot grow the map.
const maxCodes = 1024

// idTokenTTL is the ID token's lifetime, Cognito's default.
const idTokenTTL = time.Hour

// User is a development user: who a person signing in locally may be, with the groups and
// roles approvals name in approverGroupRefs and approverRoleRefs. Its subject is also its user
// name, so the page names the same person whichever of sub, username and cognito:username a
// deployment reads as the principal (PrincipalClaim).
type User struct {
	Subject string
	// Email is the email claim; empty for none.
	Email  string
	Groups []string
	Roles  []string
}

// Users are the people the local provider lets one sign in as: approvers in groups and roles,
// olga, an operator (the console's OperatorRole, "operator"), supervisor, the local stack's
// override principal (OverridePrincipals), and mallory, who is in none and has no email
// address, to see refusals.
func Users() []User {
	return []User{
		{Subject: "alice", Email: "alice@example.com", Groups: []string{"finance", "ops"}, Roles: []string{"manager"}},
		{Subject: "bob", Email: "bob@example.com", Groups: []string{"finance"}},
		{Subject: "carol", Email: "carol@example.com", Groups: []string{"ops"}},
		{Subject: "dave", Email: "dave@example.com", Roles: []string{"manager"}},
		{Subject: "olga", Email: "olga@example.com", Roles: []string{"operator"}},
		{Subject: "supervisor", Email: "supervisor@example.com", Groups: []string{"finance", "ops"}},
		{Subject: "mallory"},
	}
}

// Provider is the local stack's OpenID Connect identity provider, standing in for Cognito's
// hosted UI: discovery, JWKS, an authorization endpoint whose login is a pick from Users, and a
// token endpoint, for the authorization code flow of a public client with PKCE (S256), and the
// client-credentials grant of the local machine clients (EngineClientID, MailerClientID). A
// public client may also be known by the URL of its client ID metadata document (CIMD, as
// Claude and VS Code sign in), which the provider fetches and checks (metadataDocs) and then
// issues the agents' token, as to MCPClientID. Codes live in memory, one use each. It is safe
// for concurrent use.
type Provider struct {
	key      *rsa.PrivateKey
	issuer   string
	path     string // the issuer's path, under which every endpoint lives
	redirect string
	now      func() time.Time
	// metadata fetches the client ID metadata documents of clients whose id is a URL.
	metadata *metadataDocs

	mu    sync.Mutex
	codes map[string]grant
}

// grant is what a code was issued for, checked again at its exchange.
type grant struct {
	user   User
	tenant string
	// client is the app client the code is for; scope what it asked for.
	client, scope    string
	redirect         string
	challenge, nonce string
	authTime         time.Time
	expires          time.Time
}

// NewProvider returns the provider of the gateway served at gatewayURL, signing with key; now
// is its clock (nil: time.Now), which tests move past a code's lifetime.
func NewProvider(key *rsa.PrivateKey, gatewayURL string, now func() time.Time) *Provider {
	if now == nil {
		now = time.Now
	}
	issuer := IssuerAt(gatewayURL)
	u, _ := url.Parse(issuer)
	return &Provider{
		key: key, issuer: issuer, path: u.Path, now: now,
		redirect: strings.TrimSuffix(gatewayURL, "/") + CallbackPath,
		metadata: newMetadataDocs(now, MetadataTimeout),
		codes:    map[string]grant{},
	}
}

// ServeHTTP answers the provider's endpoints under its issuer's path, which the gateway hands
// it, and never caches: codes, tokens and forms are each for one use.
func (p *Provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	switch strings.TrimPrefix(r.URL.Path, p.path) {
	case "/.well-known/openid-configuration", "/.well-known/oauth-authorization-server":
		p.discovery(w, r)
	case "/register":
		p.register(w, r)
	case "/jwks.json":
		p.jwks(w, r)
	case "/authorize":
		p.authorize(w, r)
	case "/token":
		p.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (p *Provider) discovery(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                p.issuer,
		"authorization_endpoint":                p.issuer + "/authorize",
		"token_endpoint":                        p.issuer + "/token",
		"jwks_uri":                              p.issuer + "/jwks.json",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "client_credentials"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported":      []string{"S256"},
		"scopes_supported":                      append([]string{"openid"}, MCPScopes...),
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
		// A client whose id is the URL of its metadata document signs in with no registration
		// (the MCP clients' preferred way); one that registers dynamically is told so there.
		"client_id_metadata_document_supported": true,
		"registration_endpoint":                 p.issuer + "/register",
		"claims_supported":                      []string{"iss", "aud", "sub", "iat", "exp", "nonce", "auth_time", "username", "cognito:username", "email", "email_verified", "tenant", "groups", "roles"},
	})
}

func (p *Provider) jwks(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	pub := p.key.PublicKey
	writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": KeyID,
		"n": enc.EncodeToString(pub.N.Bytes()),
		"e": enc.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}}})
}

// authRequest is an authorization request's parameters, carried through the login form in
// hidden fields and checked again when it is posted.
type authRequest struct {
	ClientID, RedirectURI, ResponseType, Scope, State, Nonce, Challenge, Method string
}

func readAuthRequest(v url.Values) authRequest {
	return authRequest{
		ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"), ResponseType: v.Get("response_type"),
		Scope: v.Get("scope"), State: v.Get("state"), Nonce: v.Get("nonce"),
		Challenge: v.Get("code_challenge"), Method: v.Get("code_challenge_method"),
	}
}

// challengePattern is an S256 challenge: the unpadded base64url of a SHA-256 (RFC 7636, 4.2).
var challengePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// problem is what is wrong with the request, or "". An invalid client or redirect URI is shown
// and never redirected to (RFC 6749, 4.1.2.1); the provider shows every other fault too, as
// nothing but a developer's client talks to it.
func (a authRequest) problem(redirect string) string {
	if a.ClientID == MCPClientID {
		return a.mcpProblem()
	}
	switch {
	case a.ClientID != Audience:
		return "unknown client_id (the local app clients are " + Audience + " and " + MCPClientID + ")"
	case a.RedirectURI != redirect:
		return "redirect_uri must be " + redirect
	case a.ResponseType != "code":
		return "response_type must be code"
	case !slices.Contains(strings.Fields(a.Scope), "openid"):
		return "scope must include openid"
	case a.Method != "S256":
		return "code_challenge_method must be S256"
	case !challengePattern.MatchString(a.Challenge):
		return "code_challenge must be an S256 challenge"
	}
	return ""
}

// mcpProblem is what is wrong with a request of the MCP clients' public client: its redirect
// must be loopback over http (RFC 8252, 7.3: a native client listens on a port of its own), and
// the rest as for every agents' client (agentsProblem).
func (a authRequest) mcpProblem() string {
	u, err := url.Parse(a.RedirectURI)
	if err != nil || u.Scheme != "http" || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1") || u.User != nil || u.Fragment != "" {
		return "redirect_uri must be a loopback http URL (http://127.0.0.1:<port>/...)"
	}
	return a.agentsProblem()
}

// metadataProblem is what is wrong with a request of a client whose id is its metadata
// document's URL: the redirect must be one the document lists, exactly (the document is the
// client's registration), and the rest as for every agents' client.
func (a authRequest) metadataProblem(doc clientMetadata) string {
	if !slices.Contains(doc.RedirectURIs, a.RedirectURI) {
		return "redirect_uri is not one of the redirect_uris of the client's metadata document"
	}
	return a.agentsProblem()
}

// agentsProblem is what is wrong with a request of an agents' client, whichever: its scopes must
// be the MCP endpoint's, and PKCE S256 is required, as for every public client.
func (a authRequest) agentsProblem() string {
	switch {
	case a.ResponseType != "code":
		return "response_type must be code"
	case slices.ContainsFunc(strings.Fields(a.Scope), func(s string) bool { return !slices.Contains(MCPScopes, s) }):
		return "scope may name only " + strings.Join(MCPScopes, " and ")
	case a.Method != "S256":
		return "code_challenge_method must be S256"
	case !challengePattern.MatchString(a.Challenge):
		return "code_challenge must be an S256 challenge"
	}
	return ""
}

// hidden are the request's parameters as the form carries them.
func (a authRequest) hidden() []field {
	return []field{
		{"client_id", a.ClientID}, {"redirect_uri", a.RedirectURI}, {"response_type", a.ResponseType},
		{"scope", a.Scope}, {"state", a.State}, {"nonce", a.Nonce},
		{"code_challenge", a.Challenge}, {"code_challenge_method", a.Method},
	}
}

type field struct{ Name, Value string }

// loginPage is the provider's only page: a login form, or what was wrong with the request.
// html/template escapes every value, the request's parameters included.
var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in: local identity provider</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; padding: 2rem 1rem; background: #f5f5f4; color: #1c1917; }
main { max-width: 28rem; margin: 0 auto; background: #fff; padding: 1.5rem; border-radius: .5rem; }
label { display: block; margin-top: 1rem; font-weight: 600; }
select, input { display: block; width: 100%; box-sizing: border-box; font: inherit; padding: .4rem; margin-top: .25rem; }
small { display: block; margin-top: .25rem; color: #57534e; }
button { font: inherit; margin-top: 1.25rem; margin-right: .5rem; padding: .5rem 1rem; }
[role=alert] { color: #991b1b; }
</style>
</head>
<body>
<main>
<h1>Local identity provider</h1>
{{if .Problem}}<p role="alert">This sign-in request cannot be served: {{.Problem}}.</p>
{{else}}{{with .Client}}<p>Signing you in to <strong>{{.}}</strong>, a client known by its metadata URL, for the MCP endpoint only.</p>
{{end}}<p>Development users only: pick who you are.</p>
<form method="post" action="{{.Action}}">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<label for="user">User</label>
<select id="user" name="user">
{{range .Users}}<option value="{{.Subject}}">{{.Subject}}{{with .Groups}}, groups {{range $i, $g := .}}{{if $i}}, {{end}}{{$g}}{{end}}{{end}}{{with .Roles}}; roles {{range $i, $r := .}}{{if $i}}, {{end}}{{$r}}{{end}}{{end}}</option>
{{end}}</select>
<label for="tenant">Tenant</label>
<input id="tenant" name="tenant" value="acme" autocomplete="off" aria-describedby="tenant-hint">
<small id="tenant-hint">Left empty, the ID token carries no tenant claim.</small>
<div><button type="submit">Sign in</button><button type="submit" name="deny" value="1">Cancel</button></div>
</form>
{{end}}</main>
</body>
</html>
`))

type loginView struct {
	Problem string
	Action  string
	Hidden  []field
	Users   []User
	// Client names a client that signs in by its metadata URL: the name its document gives and
	// the URL, so that the person sees who asks. Empty for the local app clients.
	Client string
	// redirectSource is the CSP source of such a client's redirect, when it is not loopback.
	redirectSource string
}

// cspSource is a CSP source-expression matching redirect's origin (a scheme alone for a
// custom scheme), or "" when it has none that can be written safely in the header.
var cspSource = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:(//[A-Za-z0-9.-]+(:[0-9]+)?)?$`)

func sourceOf(redirect string) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return ""
	}
	src := u.Scheme + ":"
	if u.Host != "" {
		src += "//" + u.Host
	}
	if !cspSource.MatchString(src) {
		return ""
	}
	return src
}

func (p *Provider) page(w http.ResponseWriter, status int, v loginView) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// The form posts here, and its answer redirects to the client: the page's callback, or an
	// MCP client's loopback listener, which a browser's form-action applies to as well (Chromium
	// takes no IPv6 literal in a source list: an MCP client on [::1] is redirected to without it),
	// or the redirect a client's metadata document lists.
	action := "'self' http://127.0.0.1:* http://localhost:*"
	if v.redirectSource != "" {
		action += " " + v.redirectSource
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action "+action+"; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_ = loginPage.Execute(w, v)
}

// authorize shows the login form for a valid request (GET) and, when it is posted, issues a
// code and redirects to the client with it (or with access_denied when the person cancelled).
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	var params url.Values
	switch r.Method {
	case http.MethodGet:
		params = r.URL.Query()
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			p.page(w, http.StatusBadRequest, loginView{Problem: "the form could not be read"})
			return
		}
		params = r.PostForm
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	req := readAuthRequest(params)
	view := loginView{Action: p.issuer + "/authorize", Hidden: req.hidden(), Users: Users()}
	problem := ""
	if urlClient(req.ClientID) {
		// A client known by its metadata document's URL: the document, fetched (or cached), is
		// its registration. A client_id that cannot be one is shown, never redirected to.
		doc, err := p.metadata.get(r.Context(), req.ClientID)
		if err != nil {
			problem = err.Error()
		} else if problem = req.metadataProblem(doc); problem == "" {
			view.Client = cmp.Or(doc.ClientName, "an unnamed client") + " (" + req.ClientID + ")"
			if u, _ := url.Parse(req.RedirectURI); u == nil || !loopback(u.Hostname()) {
				view.redirectSource = sourceOf(req.RedirectURI)
			}
		}
	} else {
		problem = req.problem(p.redirect)
	}
	if problem != "" {
		p.page(w, http.StatusBadRequest, loginView{Problem: problem})
		return
	}
	if r.Method == http.MethodGet {
		p.page(w, http.StatusOK, view)
		return
	}
	answer := url.Values{}
	if req.State != "" {
		answer.Set("state", req.State)
	}
	if params.Get("deny") != "" {
		answer.Set("error", "access_denied")
		http.Redirect(w, r, withQuery(req.RedirectURI, answer), http.StatusSeeOther)
		return
	}
	i := slices.IndexFunc(Users(), func(u User) bool { return u.Subject == params.Get("user") })
	tenant := strings.TrimSpace(params.Get("tenant"))
	if i < 0 || len(tenant) > 128 {
		p.page(w, http.StatusBadRequest, loginView{Problem: "pick one of the development users, and a tenant of at most 128 characters"})
		return
	}
	now := p.now()
	code, ok := p.issue(grant{
		user: Users()[i], tenant: tenant, client: req.ClientID, scope: req.Scope, redirect: req.RedirectURI,
		challenge: req.Challenge, nonce: req.Nonce, authTime: now, expires: now.Add(codeTTL),
	}, now)
	if !ok {
		p.page(w, http.StatusServiceUnavailable, loginView{Problem: "too many sign-ins are waiting for their code's exchange; try again in a minute"})
		return
	}
	answer.Set("code", code)
	http.Redirect(w, r, withQuery(req.RedirectURI, answer), http.StatusSeeOther)
}

// withQuery is the redirect URI with the answer's parameters added to its own query.
func withQuery(redirect string, answer url.Values) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return redirect + "?" + answer.Encode()
	}
	q := u.Query()
	for k, vs := range answer {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// issue keeps g under a new code, unless maxCodes unexpired codes are waiting.
func (p *Provider) issue(g grant, now time.Time) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, other := range p.codes {
		if !now.Before(other.expires) {
			delete(p.codes, c)
		}
	}
	if len(p.codes) >= maxCodes {
		return "", false
	}
	code := rand.Text()
	p.codes[code] = g
	return code, true
}

// take removes code and returns what it was issued for: a code is used once, whether or not
// its exchange succeeds, so a wrong verifier cannot be followed by another guess.
func (p *Provider) take(code string) (grant, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	g, ok := p.codes[code]
	delete(p.codes, code)
	return g, ok
}

// tokenError answers an RFC 6749 (5.2) error.
func tokenError(w http.ResponseWriter, code, description string) {
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": description})
}

// verifierPattern is a PKCE code verifier (RFC 7636, 4.1).
var verifierPattern = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// token exchanges a code for an ID token, given the verifier of its challenge.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		tokenError(w, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		tokenError(w, "invalid_request", "the form could not be read")
		return
	}
	f := r.PostForm
	switch f.Get("grant_type") {
	case "authorization_code":
	case "client_credentials":
		p.clientCredentials(w, r)
		return
	default:
		tokenError(w, "unsupported_grant_type", "only authorization_code and client_credentials are supported")
		return
	}
	var doc clientMetadata
	switch client := f.Get("client_id"); {
	case client == Audience || client == MCPClientID:
	case urlClient(client):
		var err error
		if doc, err = p.metadata.get(r.Context(), client); err != nil {
			tokenError(w, "invalid_client", err.Error())
			return
		}
	default:
		tokenError(w, "invalid_client", "unknown client_id")
		return
	}
	switch {
	case f.Get("code") == "":
		tokenError(w, "invalid_request", "code is required")
		return
	}
	g, ok := p.take(f.Get("code"))
	now := p.now()
	switch {
	case !ok || !now.Before(g.expires):
		tokenError(w, "invalid_grant", "the code is unknown, used or expired")
		return
	case f.Get("client_id") != g.client:
		tokenError(w, "invalid_grant", "the code was issued to another client")
		return
	case f.Get("redirect_uri") != g.redirect:
		tokenError(w, "invalid_grant", "redirect_uri is not the one the code was issued for")
		return
	case urlClient(g.client) && !slices.Contains(doc.RedirectURIs, g.redirect):
		tokenError(w, "invalid_grant", "redirect_uri is no longer one of the redirect_uris of the client's metadata document")
		return
	case !verifierPattern.MatchString(f.Get("code_verifier")):
		tokenError(w, "invalid_grant", "code_verifier is missing or malformed")
		return
	}
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	if subtle.ConstantTimeCompare([]byte(enc.EncodeToString(sum[:])), []byte(g.challenge)) != 1 {
		tokenError(w, "invalid_grant", "code_verifier does not match the code_challenge")
		return
	}
	if g.client == MCPClientID || urlClient(g.client) {
		p.mcpToken(w, g, now)
		return
	}
	claims := Token{
		Issuer: p.issuer, Subject: g.user.Subject, Username: g.user.Subject, Email: g.user.Email,
		Tenant: g.tenant, Groups: g.user.Groups, Roles: g.user.Roles, TTL: idTokenTTL,
	}.Claims(now)
	// As a Cognito ID token: its user name as cognito:username, and username too, as the
	// pre-token-generation trigger adds it (infra/cognito/pretoken) so that it names the person
	// in the ID token as in the access token; an address only once verified.
	claims["cognito:username"] = g.user.Subject
	if g.user.Email != "" {
		claims["email_verified"] = true
	}
	claims["auth_time"] = g.authTime.Unix()
	if g.nonce != "" {
		claims["nonce"] = g.nonce
	}
	idToken, err := Sign(p.key, claims)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	w.Header().Set("Pragma", "no-cache")
	// The access token is opaque: the page needs only the ID token, and the API accepts none of
	// this provider's access tokens.
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": rand.Text(), "id_token": idToken, "token_type": "Bearer", "expires_in": int(idTokenTTL.Seconds()),
	})
}

// mcpToken answers an MCP client's exchange with an access token shaped as a Cognito public
// client's (client_id, no aud, the person as sub and username, the scopes asked for, or all of
// MCPScopes when none was), for an hour: what the MCP endpoint verifies. Its client_id is the
// client's: MCPClientID, or the URL of a client's metadata document, which the MCP endpoint
// takes where the deployment allows it (McpClientMetadataUrls).
func (p *Provider) mcpToken(w http.ResponseWriter, g grant, now time.Time) {
	scopes := strings.Fields(g.scope)
	if len(scopes) == 0 {
		scopes = MCPScopes
	}
	access, err := Sign(p.key, Token{
		Issuer: p.issuer, Subject: g.user.Subject, Username: g.user.Subject, Tenant: g.tenant,
		Groups: g.user.Groups, Roles: g.user.Roles, ClientID: g.client, Scopes: scopes, TTL: idTokenTTL,
	}.Claims(now))
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access, "token_type": "Bearer", "expires_in": int(idTokenTTL.Seconds()), "scope": strings.Join(scopes, " "),
	})
}

// EngineClientSecret and MailerClientSecret are the local machine clients' secrets, for the
// client-credentials grant a token source uses, as with Cognito app clients that have one. They
// are public on purpose: the provider serves only the local stack, and no deployment accepts
// what it signs.
const (
	EngineClientSecret = "local-engine-secret"
	MailerClientSecret = "local-mailer-secret"
)

// MachineTenant is the tenant of the local machine clients' tokens unless the grant names
// another (a form parameter tenant, which only this provider reads): in AWS the
// pre-token-generation trigger's CLIENTS maps each app client to its one tenant
// (infra/cognito/pretoken), and a team makes an app client per tenant; locally one client
// serves every tenant a test or an example picks.
const MachineTenant = "acme"

// machineClient is one app client of the client-credentials grant: its secret, and the scopes
// it may be granted (and is when it asks for none, as Cognito grants an app client's allowed
// scopes).
type machineClient struct {
	secret string
	scopes []string
}

var machineClients = map[string]machineClient{
	EngineClientID: {EngineClientSecret, []string{"interrupts:write", "runs:read"}},
	MailerClientID: {MailerClientSecret, []string{"tokens:delegate"}},
}

// clientCredentials issues a machine client an access token shaped as Cognito's machine tokens
// (client_id, no aud, sub the client id), for an hour, the client authenticated by HTTP Basic or
// by the form (RFC 6749, 2.3.1), its secret compared in constant time.
func (p *Provider) clientCredentials(w http.ResponseWriter, r *http.Request) {
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c, known := machineClients[id]
	if !known || subtle.ConstantTimeCompare([]byte(secret), []byte(c.secret)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="local-issuer"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "unknown client or wrong secret"})
		return
	}
	scopes := strings.Fields(r.PostForm.Get("scope"))
	if len(scopes) == 0 {
		scopes = c.scopes
	}
	for _, s := range scopes {
		if !slices.Contains(c.scopes, s) {
			tokenError(w, "invalid_scope", s+" is not a scope of "+id)
			return
		}
	}
	tenant := cmp.Or(r.PostForm.Get("tenant"), MachineTenant)
	if len(tenant) > 128 || strings.ContainsFunc(tenant, func(r rune) bool { return r == '#' || r <= ' ' }) {
		tokenError(w, "invalid_request", "tenant must be an id of at most 128 characters")
		return
	}
	token, err := Sign(p.key, Token{Issuer: p.issuer, Subject: id, ClientID: id, Tenant: tenant, Scopes: scopes, TTL: idTokenTTL}.Claims(p.now()))
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": int(idTokenTTL.Seconds())})
}

// urlClient reports whether clientID is meant as a metadata document's URL (a scheme and "://"):
// such a client is judged by its document, and one whose URL the provider does not take is told
// why (IsMetadataURL), not that it is unknown.
func urlClient(clientID string) bool {
	scheme, _, ok := strings.Cut(clientID, "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, "/?#")
}

// register answers a dynamic client registration (RFC 7591), which this provider, like
// Cognito, does not do: with the registration error that says what to use instead, so that a
// client shows that to its person rather than a bare 404.
func (p *Provider) register(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	writeJSON(w, http.StatusBadRequest, map[string]string{
		"error": "invalid_client_metadata",
		"error_description": "this issuer registers no clients: sign in with client_id set to the https URL of your client ID metadata document " +
			"(client_id_metadata_document_supported), or with the public client's id " + MCPClientID,
	})
}
