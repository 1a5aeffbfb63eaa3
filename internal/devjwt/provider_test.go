package devjwt_test

import (
	"cmp"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/testclock"
)

const gatewayURL = "http://127.0.0.1:3000"

var callback = gatewayURL + devjwt.CallbackPath

// provider is a Provider under a test clock, with its key for checking what it signs.
type provider struct {
	*devjwt.Provider
	key   *rsa.PrivateKey
	clock *testclock.Clock
}

func newProvider(t *testing.T) provider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	clock := testclock.New(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	return provider{devjwt.NewProvider(key, gatewayURL, clock.Now), key, clock}
}

func (p provider) do(t *testing.T, method, path, contentType, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, devjwt.IssuerAt(gatewayURL)+path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	p.ServeHTTP(w, req)
	return w
}

const form = "application/x-www-form-urlencoded"

// challenge is the S256 challenge of verifier.
func challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

var verifier = strings.Repeat("v", 43)

// authParams is a valid authorization request for verifier's challenge.
func authParams() url.Values {
	return url.Values{
		"client_id": {devjwt.Audience}, "redirect_uri": {callback}, "response_type": {"code"},
		"scope": {"openid"}, "state": {"st-1"}, "nonce": {"n-1"},
		"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"},
	}
}

func with(v url.Values, key, value string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	if value == "" {
		out.Del(key)
	} else {
		out.Set(key, value)
	}
	return out
}

// login posts the login form for params as user of tenant and returns the code it redirected
// with.
func (p provider) login(t *testing.T, params url.Values, user, tenant string) string {
	t.Helper()
	params = with(with(params, "user", user), "tenant", tenant)
	w := p.do(t, "POST", "/authorize", form, params.Encode())
	if w.Code != http.StatusSeeOther {
		t.Fatalf("login: %d %s", w.Code, w.Body)
	}
	loc, err := url.Parse(w.Header().Get("Location"))
	if err != nil || loc.Scheme+"://"+loc.Host+loc.Path != callback || loc.Query().Get("state") != params.Get("state") {
		t.Fatalf("login redirected to %q", w.Header().Get("Location"))
	}
	return loc.Query().Get("code")
}

func exchangeForm(code string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback},
		"client_id": {devjwt.Audience}, "code_verifier": {verifier}}
}

type tokenAnswer struct {
	Status      int
	Error       string `json:"error"`
	IDToken     string `json:"id_token"`
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
}

func (p provider) exchange(t *testing.T, f url.Values) tokenAnswer {
	t.Helper()
	w := p.do(t, "POST", "/token", form, f.Encode())
	a := tokenAnswer{Status: w.Code}
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("token answered %d %q", w.Code, w.Body)
	}
	if w.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("token answer without Cache-Control: no-store")
	}
	return a
}

// TestAuthorizeRefusesWithoutRedirecting: a request from another client, for another redirect
// URI or without an S256 challenge shows what is wrong and never redirects, whether the form is
// fetched or posted.
func TestAuthorizeRefusesWithoutRedirecting(t *testing.T) {
	p := newProvider(t)
	cases := []struct {
		name   string
		params url.Values
		shows  string
	}{
		{"another client", with(authParams(), "client_id", "someone-else"), "client_id"},
		{"no client", with(authParams(), "client_id", ""), "client_id"},
		{"another redirect_uri", with(authParams(), "redirect_uri", "https://evil.example/signin/callback"), "redirect_uri"},
		{"another path on the gateway", with(authParams(), "redirect_uri", gatewayURL+"/approve/x"), "redirect_uri"},
		{"implicit flow", with(authParams(), "response_type", "token"), "response_type"},
		{"not OpenID Connect", with(authParams(), "scope", "email"), "openid"},
		{"no challenge", with(authParams(), "code_challenge", ""), "code_challenge"},
		{"a challenge that is no SHA-256", with(authParams(), "code_challenge", "short"), "code_challenge"},
		{"plain challenge", with(authParams(), "code_challenge_method", "plain"), "S256"},
		{"no challenge method", with(authParams(), "code_challenge_method", ""), "S256"},
	}
	for _, c := range cases {
		for _, method := range []string{"GET", "POST"} {
			t.Run(c.name+" "+method, func(t *testing.T) {
				var w *httptest.ResponseRecorder
				if method == "GET" {
					w = p.do(t, "GET", "/authorize?"+c.params.Encode(), "", "")
				} else {
					w = p.do(t, "POST", "/authorize", form, with(c.params, "user", "alice").Encode())
				}
				if w.Code != http.StatusBadRequest || w.Header().Get("Location") != "" {
					t.Fatalf("%d Location %q, want 400 without a redirect", w.Code, w.Header().Get("Location"))
				}
				if body := w.Body.String(); !strings.Contains(body, c.shows) || strings.Contains(body, "<form") {
					t.Errorf("page does not say what is wrong (%s) or still offers the form:\n%s", c.shows, body)
				}
			})
		}
	}
}

// TestAuthorizeForm: a valid request shows a form carrying its parameters, escaped, and posting
// it redirects to the client with a code, or with access_denied when the person cancels.
func TestAuthorizeForm(t *testing.T) {
	p := newProvider(t)
	params := with(authParams(), "state", `"><script>alert(1)</script>`)
	w := p.do(t, "GET", "/authorize?"+params.Encode(), "", "")
	body := w.Body.String()
	if w.Code != http.StatusOK || strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Fatalf("%d, state not escaped:\n%s", w.Code, body)
	}
	for _, want := range []string{`<select id="user" name="user">`, `<option value="mallory">`, `<input id="tenant" name="tenant" value="acme"`, `>Sign in</button>`, `name="code_challenge" value="` + challenge(verifier) + `"`} {
		if !strings.Contains(body, want) {
			t.Errorf("form lacks %s", want)
		}
	}
	if code := p.login(t, params, "bob", "acme"); code == "" {
		t.Error("no code")
	}
	w = p.do(t, "POST", "/authorize", form, with(with(authParams(), "user", "alice"), "deny", "1").Encode())
	loc, _ := url.Parse(w.Header().Get("Location"))
	if w.Code != http.StatusSeeOther || loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "st-1" || loc.Query().Has("code") {
		t.Errorf("cancel: %d %q", w.Code, w.Header().Get("Location"))
	}
	w = p.do(t, "POST", "/authorize", form, with(authParams(), "user", "eve").Encode())
	if w.Code != http.StatusBadRequest || w.Header().Get("Location") != "" {
		t.Errorf("unknown user: %d %q", w.Code, w.Header().Get("Location"))
	}
}

// TestTokenIssuesAnIDToken: the ID token is signed with the development key under kid "local",
// for the client, with the request's nonce, the chosen user's names (the ones a deployment may
// read as the principal) and its tenant, groups and roles.
func TestTokenIssuesAnIDToken(t *testing.T) {
	p := newProvider(t)
	issuedAt := p.clock.Now()
	code := p.login(t, authParams(), "alice", "acme")
	p.clock.Advance(5 * time.Second)
	a := p.exchange(t, exchangeForm(code))
	if a.Status != 200 || a.TokenType != "Bearer" || a.ExpiresIn != 3600 || a.AccessToken == "" {
		t.Fatalf("%+v", a)
	}
	c, err := devjwt.NewVerifier(devjwt.StaticKey{Public: &p.key.PublicKey}).Verify(a.IDToken, devjwt.IssuerAt(gatewayURL), devjwt.Audience, p.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	header, _ := base64.RawURLEncoding.DecodeString(strings.Split(a.IDToken, ".")[0])
	if !strings.Contains(string(header), `"kid":"local"`) {
		t.Errorf("header %s", header)
	}
	want := map[string]any{"sub": "alice", "aud": devjwt.Audience, "nonce": "n-1", "tenant": "acme",
		"username": "alice", "cognito:username": "alice", "email": "alice@example.com", "email_verified": true,
		"auth_time": float64(issuedAt.Unix()), "iat": float64(p.clock.Now().Unix()), "exp": float64(p.clock.Now().Add(time.Hour).Unix())}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("%s = %v, want %v", k, c[k], v)
		}
	}
	if groups, roles := c["groups"].([]any), c["roles"].([]any); len(groups) != 2 || groups[0] != "finance" || groups[1] != "ops" || len(roles) != 1 || roles[0] != "manager" {
		t.Errorf("groups %v roles %v", c["groups"], c["roles"])
	}

	a = p.exchange(t, exchangeForm(p.login(t, authParams(), "mallory", "")))
	c, err = devjwt.NewVerifier(devjwt.StaticKey{Public: &p.key.PublicKey}).Verify(a.IDToken, devjwt.IssuerAt(gatewayURL), devjwt.Audience, p.clock.Now())
	if err != nil || c["sub"] != "mallory" {
		t.Fatal(c, err)
	}
	for _, k := range []string{"tenant", "groups", "roles", "email", "email_verified"} {
		if _, ok := c[k]; ok {
			t.Errorf("mallory without a tenant or an address has %s %v", k, c[k])
		}
	}
}

// TestTokenRules: each exchange that RFC 6749 and RFC 7636 refuse answers 400 with its error
// code; a code is good for one exchange, whatever its outcome, and for a minute.
func TestTokenRules(t *testing.T) {
	p := newProvider(t)
	cases := []struct {
		name   string
		change func(f url.Values) url.Values
		wait   time.Duration
		want   string
	}{
		{"wrong verifier", func(f url.Values) url.Values { return with(f, "code_verifier", strings.Repeat("w", 43)) }, 0, "invalid_grant"},
		{"the challenge as verifier", func(f url.Values) url.Values { return with(f, "code_verifier", challenge(verifier)) }, 0, "invalid_grant"},
		{"no verifier", func(f url.Values) url.Values { return with(f, "code_verifier", "") }, 0, "invalid_grant"},
		{"another redirect_uri", func(f url.Values) url.Values { return with(f, "redirect_uri", gatewayURL+"/other") }, 0, "invalid_grant"},
		{"another client", func(f url.Values) url.Values { return with(f, "client_id", "someone-else") }, 0, "invalid_client"},
		{"another grant", func(f url.Values) url.Values { return with(f, "grant_type", "refresh_token") }, 0, "unsupported_grant_type"},
		{"no code", func(f url.Values) url.Values { return with(f, "code", "") }, 0, "invalid_request"},
		{"an unknown code", func(f url.Values) url.Values { return with(f, "code", "NOTACODE") }, 0, "invalid_grant"},
		{"expired", func(f url.Values) url.Values { return f }, devjwt.CodeTTL, "invalid_grant"},
		{"just in time", func(f url.Values) url.Values { return f }, devjwt.CodeTTL - time.Second, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code := p.login(t, authParams(), "bob", "acme")
			p.clock.Advance(c.wait)
			a := p.exchange(t, c.change(exchangeForm(code)))
			if c.want == "" {
				if a.Status != 200 || a.IDToken == "" {
					t.Fatalf("%+v", a)
				}
			} else if a.Status != 400 || a.Error != c.want || a.IDToken != "" {
				t.Fatalf("%+v, want 400 %s", a, c.want)
			}
		})
	}
	t.Run("a code used twice", func(t *testing.T) {
		code := p.login(t, authParams(), "bob", "acme")
		if a := p.exchange(t, exchangeForm(code)); a.Status != 200 {
			t.Fatalf("first exchange: %+v", a)
		}
		if a := p.exchange(t, exchangeForm(code)); a.Status != 400 || a.Error != "invalid_grant" {
			t.Fatalf("second exchange: %+v", a)
		}
	})
	t.Run("the right verifier after a wrong one", func(t *testing.T) {
		code := p.login(t, authParams(), "bob", "acme")
		p.exchange(t, with(exchangeForm(code), "code_verifier", strings.Repeat("w", 43)))
		if a := p.exchange(t, exchangeForm(code)); a.Status != 400 || a.Error != "invalid_grant" {
			t.Fatalf("%+v", a)
		}
	})
	t.Run("not a form", func(t *testing.T) {
		w := p.do(t, "POST", "/token", "application/json", `{"grant_type":"authorization_code"}`)
		if w.Code != 400 || !strings.Contains(w.Body.String(), "invalid_request") {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})
	t.Run("GET", func(t *testing.T) {
		if w := p.do(t, "GET", "/token?"+exchangeForm("x").Encode(), "", ""); w.Code != http.StatusMethodNotAllowed {
			t.Fatalf("%d", w.Code)
		}
	})
}

// TestClientCredentials: a machine client, authenticated by HTTP Basic or by the form, gets a
// Cognito-shaped access token of its tenant (acme, or the one the grant names) with the scopes it asked for, or all of its own;
// another client, a wrong secret or a scope it does not have gets none.
func TestClientCredentials(t *testing.T) {
	p := newProvider(t)
	grant := func(basic bool, id, secret, scope, tenant string) (*httptest.ResponseRecorder, tokenAnswer) {
		t.Helper()
		f := url.Values{"grant_type": {"client_credentials"}}
		if scope != "" {
			f.Set("scope", scope)
		}
		if tenant != "" {
			f.Set("tenant", tenant)
		}
		if !basic {
			f.Set("client_id", id)
			f.Set("client_secret", secret)
		}
		req := httptest.NewRequest("POST", devjwt.IssuerAt(gatewayURL)+"/token", strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", form)
		if basic {
			req.SetBasicAuth(id, secret)
		}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, req)
		var a tokenAnswer
		if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		a.Status = w.Code
		return w, a
	}
	cases := []struct {
		name              string
		basic             bool
		id, secret, scope string
		status            int
		error, wantScope  string
		tenant            string
	}{
		{"basic, every scope", true, devjwt.EngineClientID, devjwt.EngineClientSecret, "", 200, "", "interrupts:write runs:read", ""},
		{"form, one scope", false, devjwt.EngineClientID, devjwt.EngineClientSecret, "runs:read", 200, "", "runs:read", ""},
		{"wrong secret", true, devjwt.EngineClientID, "guess", "", 401, "invalid_client", "", ""},
		{"another client", false, devjwt.Audience, devjwt.EngineClientSecret, "", 401, "invalid_client", "", ""},
		{"a scope it lacks", true, devjwt.EngineClientID, devjwt.EngineClientSecret, "runs:read tokens:delegate", 400, "invalid_scope", "", ""},
		{"the mailer", true, devjwt.MailerClientID, devjwt.MailerClientSecret, "", 200, "", "tokens:delegate", ""},
		{"the mailer with the engine's secret", true, devjwt.MailerClientID, devjwt.EngineClientSecret, "", 401, "invalid_client", "", ""},
		{"a tenant of the caller's", true, devjwt.EngineClientID, devjwt.EngineClientSecret, "", 200, "", "interrupts:write runs:read", "globex"},
		{"a tenant that is no id", true, devjwt.EngineClientID, devjwt.EngineClientSecret, "", 400, "invalid_request", "", "a#b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, a := grant(c.basic, c.id, c.secret, c.scope, c.tenant)
			if a.Status != c.status || a.Error != c.error {
				t.Fatalf("%+v, want %d %q", a, c.status, c.error)
			}
			if c.status != 200 {
				if a.AccessToken != "" {
					t.Errorf("a refusal with a token")
				}
				return
			}
			if a.TokenType != "Bearer" || a.ExpiresIn != 3600 {
				t.Errorf("%+v", a)
			}
			claims, err := devjwt.NewVerifier(devjwt.StaticKey{Public: &p.key.PublicKey}).Verify(a.AccessToken, devjwt.IssuerAt(gatewayURL), c.id, p.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"sub": c.id, "client_id": c.id, "token_use": "access", "tenant": cmp.Or(c.tenant, devjwt.MachineTenant), "scope": c.wantScope}
			for k, v := range want {
				if claims[k] != v {
					t.Errorf("%s = %v, want %v", k, claims[k], v)
				}
			}
			if _, ok := claims["aud"]; ok {
				t.Errorf("a machine token with an aud: %v", claims["aud"])
			}
		})
	}
}

// TestCodesAreBounded: past MaxCodes codes waiting for their exchange a sign-in is refused, and
// once they expire they make room again.
func TestCodesAreBounded(t *testing.T) {
	p := newProvider(t)
	for range devjwt.MaxCodes {
		p.login(t, authParams(), "carol", "acme")
	}
	w := p.do(t, "POST", "/authorize", form, with(with(authParams(), "user", "carol"), "tenant", "acme").Encode())
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Location") != "" {
		t.Fatalf("%d %q, want 503 without a redirect", w.Code, w.Header().Get("Location"))
	}
	p.clock.Advance(devjwt.CodeTTL)
	p.login(t, authParams(), "carol", "acme")
}

// TestDiscovery: the document a relying party discovers, and the key its jwks_uri serves.
func TestDiscovery(t *testing.T) {
	p := newProvider(t)
	var doc struct {
		Issuer                string   `json:"issuer"`
		AuthorizationEndpoint string   `json:"authorization_endpoint"`
		TokenEndpoint         string   `json:"token_endpoint"`
		JWKSURI               string   `json:"jwks_uri"`
		ResponseTypes         []string `json:"response_types_supported"`
		SubjectTypes          []string `json:"subject_types_supported"`
		Algs                  []string `json:"id_token_signing_alg_values_supported"`
		Methods               []string `json:"code_challenge_methods_supported"`
		Scopes                []string `json:"scopes_supported"`
		AuthMethods           []string `json:"token_endpoint_auth_methods_supported"`
	}
	raw := p.do(t, "GET", "/.well-known/openid-configuration", "", "").Body.Bytes()
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	iss := devjwt.IssuerAt(gatewayURL)
	if doc.Issuer != iss || doc.AuthorizationEndpoint != iss+"/authorize" || doc.TokenEndpoint != iss+"/token" || doc.JWKSURI != iss+"/jwks.json" ||
		!slices.Equal(doc.ResponseTypes, []string{"code"}) || !slices.Equal(doc.Algs, []string{"RS256"}) || !slices.Equal(doc.Methods, []string{"S256"}) ||
		!slices.Contains(doc.Scopes, "openid") || !slices.Equal(doc.AuthMethods, []string{"none", "client_secret_basic", "client_secret_post"}) || len(doc.SubjectTypes) == 0 {
		t.Errorf("%s", raw)
	}
	var set struct {
		Keys []struct{ Kty, Kid, Alg, N, E string }
	}
	if err := json.Unmarshal(p.do(t, "GET", "/jwks.json", "", "").Body.Bytes(), &set); err != nil || len(set.Keys) != 1 {
		t.Fatal(set, err)
	}
	k := set.Keys[0]
	n, _ := base64.RawURLEncoding.DecodeString(k.N)
	e, _ := base64.RawURLEncoding.DecodeString(k.E)
	if k.Kty != "RSA" || k.Kid != "local" || k.Alg != "RS256" || new(big.Int).SetBytes(n).Cmp(p.key.N) != 0 || new(big.Int).SetBytes(e).Int64() != int64(p.key.E) {
		t.Errorf("jwks %+v is not the development key", k)
	}
	if w := p.do(t, "GET", "/nothing", "", ""); w.Code != http.StatusNotFound {
		t.Errorf("unknown path: %d", w.Code)
	}
}
