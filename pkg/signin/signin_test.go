package signin_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/internal/testkeys"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/signin"
	"github.com/interrupthost/interrupthost/pkg/token"
)

var keys = testkeys.Static{ActiveKid: "k2026", Keys: map[string][]byte{
	"k2026": []byte("0123456789abcdef0123456789abcdef"),
	"k2025": []byte("fedcba9876543210fedcba9876543210"),
}}

var ctx = context.Background()

// devKey is the local provider's signing key, made once: RSA key generation is slow.
var devKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// stack is the local identity provider on 127.0.0.1, which can be made to answer 503 under a
// path prefix, and a Flow that signs in with it, both on one test clock, keeping its sessions in
// sessions (the config's, else an empty in-memory store).
type stack struct {
	base     string
	clock    *testclock.Clock
	flow     *signin.Flow
	sessions signin.Sessions
	down     atomic.Pointer[string]
}

func newStack(t *testing.T, cfg signin.Config) *stack {
	t.Helper()
	s := &stack{clock: testclock.New(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))}
	srv := httptest.NewUnstartedServer(nil)
	s.base = "http://" + srv.Listener.Addr().String()
	provider := devjwt.NewProvider(devKey(), s.base, s.clock.Now)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := s.down.Load(); p != nil && strings.HasPrefix(r.URL.Path, *p) {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		provider.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	cfg.Issuer, cfg.ClientID = devjwt.IssuerAt(s.base), devjwt.Audience
	cfg.Now = s.clock.Now
	if cfg.Keys == nil {
		cfg.Keys = keys
	}
	if cfg.Sessions == nil {
		cfg.Sessions = inmem.NewSessions()
	}
	flow, err := signin.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.flow, s.sessions = flow, cfg.Sessions
	return s
}

// failUnder makes the provider answer 503 to every path under prefix ("" for none).
func (s *stack) failUnder(prefix string) {
	if prefix == "" {
		s.down.Store(nil)
		return
	}
	s.down.Store(&prefix)
}

// noRedirects is a browser that shows each redirect instead of following it. Its transport is
// its own: httptest.Server.Close closes the idle connections of http.DefaultTransport, which
// broke a parallel subtest's request reusing one ("CloseIdleConnections called").
var noRedirects = &http.Client{
	Transport:     http.DefaultTransport.(*http.Transport).Clone(),
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// callback is what the browser brings to the callback: its cookies and the query.
type callback struct {
	cookies []string
	query   url.Values
}

// signIn plays the browser and the person: Begin for next, the provider's form (its request
// changed by change, as an attacker who writes the link could) posted with form, and the
// redirect back.
func (s *stack) signIn(t *testing.T, next string, form url.Values, change func(url.Values)) callback {
	t.Helper()
	authURL, setCookie, err := s.flow.Begin(ctx, s.base, next)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	params := u.Query()
	if change != nil {
		change(params)
	}
	for k, v := range form {
		params[k] = v
	}
	u.RawQuery = ""
	resp, err := noRedirects.PostForm(u.String(), params)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || err != nil || !strings.HasPrefix(loc.String(), s.base+devjwt.CallbackPath+"?") {
		t.Fatalf("the provider answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return callback{cookies: []string{pair(setCookie)}, query: loc.Query()}
}

// pair is the "name=value" a browser sends back for a Set-Cookie value.
func pair(setCookie string) string {
	p, _, _ := strings.Cut(setCookie, ";")
	return p
}

func as(user, tenant string) url.Values { return url.Values{"user": {user}, "tenant": {tenant}} }

func verifierChallenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// TestFinish drives the whole flow against the local provider: who signs in is read from the
// ID token, and every callback that is not the answer to this browser's sign-in is refused
// with the error the page maps.
func TestFinish(t *testing.T) {
	s := newStack(t, signin.Config{})
	now := s.clock.Now()
	cases := []struct {
		name   string
		form   url.Values
		change func(url.Values)                       // the authorization request
		alter  func(t *testing.T, cb *callback)       // the callback
		want   error                                  // nil: signed in
		check  func(t *testing.T, got signin.Session) // of a sign-in
	}{
		{name: "alice", form: as("alice", "acme"), check: func(t *testing.T, got signin.Session) {
			if got.Subject != "alice" || got.Tenant != "acme" || !slices.Equal(got.Groups, []string{"finance", "ops"}) ||
				!slices.Equal(got.Roles, []string{"manager"}) || !got.ExpiresAt.Equal(now.Add(time.Hour)) || got.ID == "" {
				t.Errorf("%+v", got)
			}
		}},
		{name: "bob, in one group", form: as("bob", "globex"), check: func(t *testing.T, got signin.Session) {
			if got.Subject != "bob" || got.Tenant != "globex" || !slices.Equal(got.Groups, []string{"finance"}) || got.Roles != nil {
				t.Errorf("%+v", got)
			}
		}},
		{name: "mallory, in none", form: as("mallory", "acme"), check: func(t *testing.T, got signin.Session) {
			if got.Subject != "mallory" || got.Groups != nil || got.Roles != nil {
				t.Errorf("%+v", got)
			}
		}},
		{name: "another state", form: as("alice", "acme"), want: signin.ErrState,
			alter: func(t *testing.T, cb *callback) { cb.query.Set("state", "ATTACKERSSTATE") }},
		{name: "no state", form: as("alice", "acme"), want: signin.ErrState,
			alter: func(t *testing.T, cb *callback) { cb.query.Del("state") }},
		{name: "no state cookie", form: as("alice", "acme"), want: signin.ErrState,
			alter: func(t *testing.T, cb *callback) { cb.cookies = nil }},
		{name: "another browser's state cookie", form: as("alice", "acme"), want: signin.ErrState,
			alter: func(t *testing.T, cb *callback) {
				_, other, err := s.flow.Begin(ctx, s.base, "/")
				if err != nil {
					t.Fatal(err)
				}
				cb.cookies = []string{pair(other)}
			}},
		{name: "a state cookie past its 10 minutes", form: as("alice", "acme"), want: signin.ErrState,
			alter: func(t *testing.T, cb *callback) { s.clock.Advance(10 * time.Minute) }},
		{name: "a state cookie tampered with", form: as("alice", "acme"), want: signin.ErrState,
			alter: func(t *testing.T, cb *callback) { cb.cookies[0] = flipPayload(cb.cookies[0]) }},
		{name: "no code", form: as("alice", "acme"), want: signin.ErrState,
			alter: func(t *testing.T, cb *callback) { cb.query.Del("code") }},
		{name: "a code the provider never issued", form: as("alice", "acme"), want: signin.ErrIDToken,
			alter: func(t *testing.T, cb *callback) { cb.query.Set("code", "FORGED") }},
		{name: "a code issued for another challenge (wrong verifier)", form: as("alice", "acme"), want: signin.ErrIDToken,
			change: func(p url.Values) { p.Set("code_challenge", verifierChallenge(strings.Repeat("x", 43))) }},
		{name: "an ID token for another nonce", form: as("alice", "acme"), want: signin.ErrIDToken,
			change: func(p url.Values) { p.Set("nonce", "ATTACKERSNONCE") }},
		{name: "an ID token without nonce", form: as("alice", "acme"), want: signin.ErrIDToken,
			change: func(p url.Values) { p.Del("nonce") }},
		{name: "no tenant", form: as("alice", ""), want: signin.ErrNoTenant},
		{name: "a tenant that is no id", form: as("alice", "acme corp"), want: signin.ErrNoTenant},
		{name: "the person cancelled", form: url.Values{"user": {"alice"}, "deny": {"1"}}, want: signin.ErrDenied},
		{name: "the provider failed", form: as("alice", "acme"), want: signin.ErrUnavailable,
			alter: func(t *testing.T, cb *callback) { cb.query.Del("code"); cb.query.Set("error", "server_error") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.clock.Set(now)
			cb := s.signIn(t, "/approve/tok?x=1", c.form, c.change)
			if c.alter != nil {
				c.alter(t, &cb)
			}
			got, cookies, next, err := s.flow.Finish(ctx, cb.cookies, cb.query)
			if c.want != nil {
				if !errors.Is(err, c.want) || cookies != nil || next != "" {
					t.Fatalf("%v, %v, %q; want %v", err, cookies, next, c.want)
				}
				for _, other := range []error{signin.ErrState, signin.ErrDenied, signin.ErrIDToken, signin.ErrNoTenant, signin.ErrNoPrincipal, signin.ErrUnavailable} {
					if other != c.want && errors.Is(err, other) {
						t.Errorf("%v is also %v", err, other)
					}
				}
				secrets := []string{cb.query.Get("code")}
				for _, c := range cb.cookies {
					_, value, _ := strings.Cut(c, "=")
					secrets = append(secrets, value)
				}
				for _, secret := range secrets {
					if secret != "" && strings.Contains(err.Error(), secret) {
						t.Errorf("the error %q carries a code or a cookie", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if next != "/approve/tok?x=1" {
				t.Errorf("next %q", next)
			}
			c.check(t, got)
			if len(cookies) != 2 || !strings.HasPrefix(cookies[0], "__Host-ih-session=ihs1.k2026.") || !strings.HasPrefix(cookies[1], "__Host-ih-signin=;") ||
				!strings.Contains(cookies[1], "Max-Age=0") {
				t.Fatalf("set-cookies %q", cookies)
			}
			for _, c := range cookies {
				checkAttributes(t, c)
			}
			if !strings.Contains(cookies[0], "Max-Age=3600") {
				t.Errorf("session cookie %q does not last the session", cookies[0])
			}
			back, err := s.flow.SessionFrom(ctx, []string{"other=1", pair(cookies[0])})
			if err != nil || back.ID != got.ID || back.Subject != got.Subject || back.Tenant != got.Tenant || !slices.Equal(back.Groups, got.Groups) ||
				!slices.Equal(back.Roles, got.Roles) || !back.ExpiresAt.Equal(got.ExpiresAt) {
				t.Errorf("SessionFrom %+v %v, want %+v", back, err, got)
			}
		})
	}
}

// checkAttributes: every cookie is HttpOnly, Secure, SameSite=Lax, Path=/ and __Host-.
func checkAttributes(t *testing.T, setCookie string) {
	t.Helper()
	c, err := http.ParseSetCookie(setCookie)
	if err != nil || !strings.HasPrefix(c.Name, "__Host-") || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" {
		t.Errorf("Set-Cookie %q: %+v %v", setCookie, c, err)
	}
}

// flipPayload changes one character of a cookie's payload, keeping it canonical base64url.
func flipPayload(cookie string) string {
	name, value, _ := strings.Cut(cookie, "=")
	parts := strings.Split(value, ".")
	b, _ := base64.RawURLEncoding.DecodeString(parts[2])
	b[len(b)/2] ^= 1
	parts[2] = base64.RawURLEncoding.EncodeToString(b)
	return name + "=" + strings.Join(parts, ".")
}

// TestReplayedCallback: a callback finishes once; the same code again is refused by the
// provider, even with the state cookie still there.
func TestReplayedCallback(t *testing.T) {
	s := newStack(t, signin.Config{})
	cb := s.signIn(t, "/", as("alice", "acme"), nil)
	if _, _, _, err := s.flow.Finish(ctx, cb.cookies, cb.query); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.flow.Finish(ctx, cb.cookies, cb.query); !errors.Is(err, signin.ErrIDToken) {
		t.Fatalf("replay: %v, want ErrIDToken", err)
	}
}

// TestBegin: the authorization request is the code flow with PKCE S256, a state and a nonce,
// and the state cookie lasts 10 minutes.
func TestBegin(t *testing.T) {
	s := newStack(t, signin.Config{})
	authURL, setCookie, err := s.flow.Begin(ctx, s.base, "/approve/tok")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	if u.String() != devjwt.IssuerAt(s.base)+"/authorize?"+u.RawQuery || q.Get("response_type") != "code" || q.Get("scope") != "openid" ||
		q.Get("client_id") != devjwt.Audience || q.Get("redirect_uri") != s.base+devjwt.CallbackPath || q.Get("code_challenge_method") != "S256" ||
		len(q.Get("code_challenge")) != 43 || q.Get("state") == "" || q.Get("nonce") == "" || q.Get("state") == q.Get("nonce") {
		t.Errorf("authorization request %s", authURL)
	}
	checkAttributes(t, setCookie)
	if !strings.HasPrefix(setCookie, "__Host-ih-signin=ihst1.k2026.") || !strings.Contains(setCookie, "Max-Age=600") || strings.Contains(setCookie, q.Get("code_challenge")) {
		t.Errorf("state cookie %q", setCookie)
	}
	other, _, err := s.flow.Begin(ctx, s.base, "/approve/tok")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := url.Parse(other); o.Query().Get("state") == q.Get("state") || o.Query().Get("code_challenge") == q.Get("code_challenge") {
		t.Error("two sign-ins share a state or a verifier")
	}
}

// TestBeginAtTheRequestsBase: the callback is under the base the sign-in began at (the domain
// a request came in on, when no base is configured), which must be https or loopback http.
func TestBeginAtTheRequestsBase(t *testing.T) {
	s := newStack(t, signin.Config{})
	for base, want := range map[string]string{
		"https://abc123.execute-api.eu-west-1.amazonaws.com":      "https://abc123.execute-api.eu-west-1.amazonaws.com/signin/callback",
		"https://approvals.example.com/":                          "https://approvals.example.com/signin/callback",
		"https://abc123.execute-api.eu-west-1.amazonaws.com/prod": "https://abc123.execute-api.eu-west-1.amazonaws.com/prod/signin/callback",
		"http://approvals.example.com":                            "",
		"":                                                        "",
		"https://u:p@approvals.example.com":                       "",
	} {
		authURL, _, err := s.flow.Begin(ctx, base, "/")
		if want == "" {
			if err == nil || errors.Is(err, signin.ErrNext) {
				t.Errorf("Begin at %q: %v, want the base refused", base, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Begin at %q: %v", base, err)
		}
		if u, _ := url.Parse(authURL); u.Query().Get("redirect_uri") != want {
			t.Errorf("Begin at %q: redirect_uri %q, want %q", base, u.Query().Get("redirect_uri"), want)
		}
	}
}

// TestBeginRefusesOtherSites: next must be a path of this site however it is spelt, or a
// sign-in would end with a redirect elsewhere.
func TestBeginRefusesOtherSites(t *testing.T) {
	s := newStack(t, signin.Config{})
	for _, c := range []struct {
		next string
		ok   bool
	}{
		{"/", true},
		{"/approve/ow2.hs256.k.p.m", true},
		{"/approve/x?a=1&b=%2F%2Fevil", true},
		{"", false},
		{"approve/x", false},
		{"//evil.example/x", false},
		{"/\\evil.example", false},
		{"/\t/evil.example", false},
		{"/\n/evil.example", false},
		{"/ /evil.example", false},
		{"https://evil.example/", false},
		{"javascript:alert(1)", false},
		{"/caf\u00e9", false},
		{"/" + strings.Repeat("a", 2048), false},
	} {
		_, _, err := s.flow.Begin(ctx, s.base, c.next)
		if c.ok != (err == nil) || !c.ok && !errors.Is(err, signin.ErrNext) {
			t.Errorf("Begin(%q): %v", c.next, err)
		}
	}
}

// TestSessionFrom: only a session cookie this host signed, unexpired, is a session; a state
// cookie, a token or a session signed by another keyring is not.
func TestSessionFrom(t *testing.T) {
	s := newStack(t, signin.Config{})
	now := s.clock.Now()
	cb := s.signIn(t, "/", as("alice", "acme"), nil)
	got, cookies, _, err := s.flow.Finish(ctx, cb.cookies, cb.query)
	if err != nil {
		t.Fatal(err)
	}
	session := pair(cookies[0])
	_, value, _ := strings.Cut(session, "=")
	_, state, _ := strings.Cut(cb.cookies[0], "=")
	// the same sign-in signed by other keyrings: a kid this one does not know, and its kid with
	// another key
	elsewhere := func(k testkeys.Static) string {
		o := newStack(t, signin.Config{Keys: k})
		cb := o.signIn(t, "/", as("alice", "acme"), nil)
		_, cookies, _, err := o.flow.Finish(ctx, cb.cookies, cb.query)
		if err != nil {
			t.Fatal(err)
		}
		_, v, _ := strings.Cut(pair(cookies[0]), "=")
		return v
	}
	unknownKid := elsewhere(testkeys.Static{ActiveKid: "k2099", Keys: map[string][]byte{"k2099": []byte("another-key-another-key-another!")}})
	otherKey := elsewhere(testkeys.Static{ActiveKid: "k2026", Keys: map[string][]byte{"k2026": []byte("another-key-another-key-another!")}})
	tok, _, err := token.Mint(ctx, keys, token.Claims{Tenant: "acme", RunID: "r1", NodeID: "n1", InterruptID: "i1", Intent: token.IntentResolve, Sub: "alice", ExpiresAt: now.Add(time.Hour).UnixMilli()}, now)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(value, ".")
	for _, c := range []struct {
		name    string
		cookies []string
		at      time.Duration
		ok      bool
	}{
		{"the session", []string{session}, 0, true},
		{"among others", []string{"a=1", "__Host-ih-session=junk", session}, 0, true},
		{"a minute before it ends", []string{session}, time.Hour - time.Minute, true},
		{"when it ends", []string{session}, time.Hour, false},
		{"no cookie", nil, 0, false},
		{"another cookie's name", []string{"ih-session=" + value}, 0, false},
		{"tampered payload", []string{flipPayload(session)}, 0, false},
		{"tampered MAC", []string{"__Host-ih-session=" + strings.Join(append(parts[:3:3], strings.Repeat("A", 43)), ".")}, 0, false},
		{"another prefix", []string{"__Host-ih-session=ihst1." + strings.Join(parts[1:], ".")}, 0, false},
		{"padded", []string{session + "="}, 0, false},
		{"the state cookie as the session", []string{"__Host-ih-session=" + state}, 0, false},
		{"an unknown kid", []string{"__Host-ih-session=" + unknownKid}, 0, false},
		{"another key", []string{"__Host-ih-session=" + otherKey}, 0, false},
		{"a token", []string{"__Host-ih-session=" + tok}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s.clock.Set(now.Add(c.at))
			back, err := s.flow.SessionFrom(ctx, c.cookies)
			if ok := err == nil; ok != c.ok || ok && back.ID != got.ID || !ok && !errors.Is(err, signin.ErrNoSession) {
				t.Fatalf("%+v %v, want ok %v", back, err, c.ok)
			}
		})
	}
	s.clock.Set(now)
	if _, err := token.Verify(ctx, keys, value); err == nil {
		t.Error("a session cookie verifies as a token")
	}
	if _, _, _, err := s.flow.Finish(ctx, []string{"__Host-ih-signin=" + value}, cb.query); !errors.Is(err, signin.ErrState) {
		t.Errorf("the session cookie as the state cookie: %v", err)
	}
	rotated := testkeys.Static{ActiveKid: "k2027", Keys: map[string][]byte{"k2027": []byte("a-rotated-key-a-rotated-key-a-ro"), "k2026": keys.Keys["k2026"]}}
	r := newStack(t, signin.Config{Keys: rotated, Sessions: s.sessions})
	r.clock.Set(now)
	if _, err := r.flow.SessionFrom(ctx, []string{session}); err != nil {
		t.Errorf("a session signed before a rotation, whose key is still kept, is refused: %v", err)
	}
	if out, err := s.flow.SignOut(ctx, got); err != nil || !strings.HasPrefix(out, "__Host-ih-session=;") || !strings.Contains(out, "Max-Age=0") {
		t.Errorf("SignOut %q %v", out, err)
	} else {
		checkAttributes(t, out)
	}
}

// TestSessionTTL: a session lasts SessionTTL, and never past the ID token's exp (an hour).
func TestSessionTTL(t *testing.T) {
	for _, c := range []struct {
		ttl, want time.Duration
	}{{0, time.Hour}, {10 * time.Minute, 10 * time.Minute}, {3 * time.Hour, time.Hour}} {
		s := newStack(t, signin.Config{SessionTTL: c.ttl})
		now := s.clock.Now()
		cb := s.signIn(t, "/", as("dave", "acme"), nil)
		got, cookies, _, err := s.flow.Finish(ctx, cb.cookies, cb.query)
		if err != nil {
			t.Fatal(err)
		}
		if !got.ExpiresAt.Equal(now.Add(c.want)) || !strings.Contains(cookies[0], "Max-Age="+strconv.Itoa(int(c.want.Seconds()))) {
			t.Errorf("SessionTTL %v: ends %v, cookie %q; want after %v", c.ttl, got.ExpiresAt, cookies[0], c.want)
		}
	}
}

// TestCSRF: a form token belongs to one session, under any key the keyring still holds.
func TestCSRF(t *testing.T) {
	s := newStack(t, signin.Config{})
	a, b := signin.Session{ID: "SESSIONA"}, signin.Session{ID: "SESSIONB"}
	tokA, err := s.flow.CSRF(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	kid, mac, _ := strings.Cut(tokA, ".")
	other := newStack(t, signin.Config{Keys: testkeys.Static{ActiveKid: "k2025", Keys: keys.Keys}})
	tokOld, err := other.flow.CSRF(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		session signin.Session
		token   string
		ok      bool
	}{
		{"its session", a, tokA, true},
		{"under a kept older key", a, tokOld, true},
		{"another session", b, tokA, false},
		{"no session", signin.Session{}, tokA, false},
		{"empty", a, "", false},
		{"no kid", a, mac, false},
		{"an unknown kid", a, "k2099." + mac, false},
		{"another kid's key", a, "k2025." + mac, false},
		{"tampered", a, kid + "." + strings.Repeat("A", 43), false},
		{"padded", a, tokA + "=", false},
	} {
		if got := s.flow.CheckCSRF(ctx, c.session, c.token); got != c.ok {
			t.Errorf("%s: %v, want %v", c.name, got, c.ok)
		}
	}
}

// TestIssuerDownThenUp: while the provider fails, sign-in answers ErrUnavailable, at whichever
// step; the same Flow signs in once it is back, discovery tried again and the code kept.
func TestIssuerDownThenUp(t *testing.T) {
	s := newStack(t, signin.Config{})
	issuerPath := devjwt.IssuerPath + "/"
	s.failUnder(issuerPath)
	if _, _, err := s.flow.Begin(ctx, s.base, "/"); !errors.Is(err, signin.ErrUnavailable) {
		t.Fatalf("Begin while down: %v", err)
	}
	s.failUnder("")
	cb := s.signIn(t, "/", as("alice", "acme"), nil)
	for _, path := range []string{devjwt.IssuerPath + "/token", devjwt.IssuerPath + "/jwks.json"} {
		s.failUnder(path)
		if _, _, _, err := s.flow.Finish(ctx, cb.cookies, cb.query); !errors.Is(err, signin.ErrUnavailable) || errors.Is(err, signin.ErrIDToken) {
			t.Fatalf("Finish with %s down: %v", path, err)
		}
		s.failUnder("")
		if path == devjwt.IssuerPath+"/jwks.json" {
			// the exchange before the JWKS spent the code
			cb = s.signIn(t, "/", as("alice", "acme"), nil)
		}
	}
	// go-oidc's key set shares one JWKS fetch among the callers waiting for it, and clears it
	// just after answering them, so a caller arriving in that instant is answered the failed
	// fetch's error: a sign-in then fails once more as unavailable, and the next succeeds.
	got, _, _, err := s.flow.Finish(ctx, cb.cookies, cb.query)
	if errors.Is(err, signin.ErrUnavailable) {
		cb = s.signIn(t, "/", as("alice", "acme"), nil)
		got, _, _, err = s.flow.Finish(ctx, cb.cookies, cb.query)
	}
	if err != nil || got.Subject != "alice" {
		t.Fatalf("once back: %+v %v", got, err)
	}

	// nobody listening at all
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	gone, err := signin.New(signin.Config{Issuer: "http://" + addr + "/local-issuer", ClientID: "c", Keys: keys, Sessions: inmem.NewSessions()})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := gone.Begin(ctx, "http://"+addr, "/"); !errors.Is(err, signin.ErrUnavailable) {
		t.Fatalf("Begin with nobody listening: %v", err)
	}
}

// TestNew: a configuration that cannot sign anyone in safely is refused at start.
func TestNew(t *testing.T) {
	good := signin.Config{Issuer: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc", ClientID: "client", Keys: keys, Sessions: inmem.NewSessions()}
	if _, err := signin.New(good); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*signin.Config){
		"no issuer":                     func(c *signin.Config) { c.Issuer = "" },
		"an issuer over http":           func(c *signin.Config) { c.Issuer = "http://idp.example.com" },
		"a relative issuer":             func(c *signin.Config) { c.Issuer = "/local-issuer" },
		"an issuer with a query":        func(c *signin.Config) { c.Issuer = "https://idp.example.com/?a=1" },
		"no client":                     func(c *signin.Config) { c.ClientID = "" },
		"no keys":                       func(c *signin.Config) { c.Keys = nil },
		"no session store":              func(c *signin.Config) { c.Sessions = nil },
		"a negative session lifetime":   func(c *signin.Config) { c.SessionTTL = -time.Second },
		"credentials in the issuer URL": func(c *signin.Config) { c.Issuer = "https://u:p@idp.example.com" },
	} {
		c := good
		change(&c)
		if _, err := signin.New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	local := good
	local.Issuer = "http://127.0.0.1:3000/local-issuer"
	if _, err := signin.New(local); err != nil {
		t.Errorf("the local stack's provider: %v", err)
	}
}

// TestPrincipalClaim: the session's principal is the ID token's claim the deployment names
// (PrincipalClaim, sub when none), so the page names a person as the API does; an ID token
// without that claim signs nobody in (ErrNoPrincipal), and a session made under another
// principal claim is no session, so nobody signed in before a change votes again under a
// second name.
func TestPrincipalClaim(t *testing.T) {
	t.Parallel()
	tests := []struct {
		claim, user string
		want        string
		err         error
	}{
		{"", "alice", "alice", nil},
		{"sub", "bob", "bob", nil},
		{"email", "alice", "alice@example.com", nil},
		{"username", "carol", "carol", nil},
		{"cognito:username", "dave", "dave", nil},
		{"email", "mallory", "", signin.ErrNoPrincipal},
	}
	for _, tt := range tests {
		t.Run(tt.claim+" of "+tt.user, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, signin.Config{PrincipalClaim: tt.claim})
			cb := s.signIn(t, "/", as(tt.user, "acme"), nil)
			got, cookies, _, err := s.flow.Finish(ctx, cb.cookies, cb.query)
			if !errors.Is(err, tt.err) || got.Subject != tt.want {
				t.Fatalf("%+v, %v; want principal %q, error %v", got, err, tt.want, tt.err)
			}
			if tt.err != nil {
				if cookies != nil || errors.Is(err, signin.ErrIDToken) || errors.Is(err, signin.ErrNoTenant) {
					t.Errorf("%v, cookies %q", err, cookies)
				}
				return
			}
			if back, err := s.flow.SessionFrom(ctx, []string{pair(cookies[0])}); err != nil || back.Subject != tt.want {
				t.Errorf("SessionFrom %+v %v", back, err)
			}
			other := "email"
			if tt.claim == other {
				other = "sub"
			}
			// the same sessions: the record is there, and the claim refuses the cookie
			if back, err := newStack(t, signin.Config{PrincipalClaim: other, Sessions: s.sessions}).flow.SessionFrom(ctx, []string{pair(cookies[0])}); !errors.Is(err, signin.ErrNoSession) {
				t.Errorf("a session made under %q is one under %q: %+v %v", cmp.Or(tt.claim, "sub"), other, back, err)
			}
		})
	}
}

// flaky is a session store that fails every call while down, as DynamoDB throttling or an
// outage does.
type flaky struct {
	signin.Sessions
	down atomic.Bool
}

var errStoreDown = errors.New("the session store is down")

func (f *flaky) PutSession(ctx context.Context, tenant, id string, expires time.Time) error {
	if f.down.Load() {
		return errStoreDown
	}
	return f.Sessions.PutSession(ctx, tenant, id, expires)
}

func (f *flaky) Session(ctx context.Context, tenant, id string) (time.Time, bool, error) {
	if f.down.Load() {
		return time.Time{}, false, errStoreDown
	}
	return f.Sessions.Session(ctx, tenant, id)
}

func (f *flaky) DeleteSession(ctx context.Context, tenant, id string) error {
	if f.down.Load() {
		return errStoreDown
	}
	return f.Sessions.DeleteSession(ctx, tenant, id)
}

// reseal is the session cookie pair with its claims changed by change and sealed again under
// the keyring: what someone holding the keyring (or a bug minting cookies) could send.
func reseal(t *testing.T, cookie string, change func(map[string]any)) string {
	t.Helper()
	name, value, _ := strings.Cut(cookie, "=")
	parts := strings.Split(value, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{}
	if err := json.Unmarshal(b, &claims); err != nil {
		t.Fatal(err)
	}
	change(claims)
	v, err := token.Seal{Prefix: "ihs1", Purpose: "interrupthost session v1", Max: 4096}.Make(ctx, keys, claims)
	if err != nil {
		t.Fatal(err)
	}
	return name + "=" + v
}

// TestSessionsEndOnTheServer: a session cookie is a session only while the server holds its
// record: after a sign-out its cookie (and any copy of it) is no session, nor after the record's
// expiry though the cookie's is later and the store has not deleted it, nor when it names a
// record the server never put (a cookie sealed with the keyring, another tenant's id). A store
// failure is the store's error, never ErrNoSession, in reading, signing in and signing out, and a
// sign-out that failed ends nothing.
func TestSessionsEndOnTheServer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// then acts after alice signs in at now; what SessionFrom then answers the cookie it
		// returns (alice's, unless it answers another) at now+at is want (nil: alice's session)
		then func(t *testing.T, s *stack, store *flaky, alice signin.Session, cookie string) string
		at   time.Duration
		want error
	}{
		{name: "the session", want: nil},
		{name: "a minute before it ends", at: time.Hour - time.Minute, want: nil},
		{name: "resealed as it is (the forgery below is sealed right)", want: nil,
			then: func(t *testing.T, _ *stack, _ *flaky, _ signin.Session, cookie string) string {
				return reseal(t, cookie, func(map[string]any) {})
			}},
		{name: "signed out", want: signin.ErrNoSession,
			then: func(t *testing.T, s *stack, _ *flaky, alice signin.Session, cookie string) string {
				if _, err := s.flow.SignOut(ctx, alice); err != nil {
					t.Fatal(err)
				}
				return cookie
			}},
		{name: "signed out twice", want: signin.ErrNoSession,
			then: func(t *testing.T, s *stack, _ *flaky, alice signin.Session, cookie string) string {
				for range 2 {
					if _, err := s.flow.SignOut(ctx, alice); err != nil {
						t.Fatal(err)
					}
				}
				return cookie
			}},
		{name: "signed out by another function (the record deleted)", want: signin.ErrNoSession,
			then: func(t *testing.T, _ *stack, store *flaky, alice signin.Session, cookie string) string {
				if err := store.DeleteSession(ctx, alice.Tenant, alice.ID); err != nil {
					t.Fatal(err)
				}
				return cookie
			}},
		{name: "past its record's expiry, before the cookie's", at: 10 * time.Minute, want: signin.ErrNoSession,
			then: func(t *testing.T, s *stack, store *flaky, alice signin.Session, cookie string) string {
				if err := store.PutSession(ctx, alice.Tenant, alice.ID, s.clock.Now().Add(10*time.Minute)); err != nil {
					t.Fatal(err)
				}
				return cookie
			}},
		{name: "just before its record's expiry", at: 10*time.Minute - time.Millisecond, want: nil,
			then: func(t *testing.T, s *stack, store *flaky, alice signin.Session, cookie string) string {
				if err := store.PutSession(ctx, alice.Tenant, alice.ID, s.clock.Now().Add(10*time.Minute)); err != nil {
					t.Fatal(err)
				}
				return cookie
			}},
		{name: "a forged record id", want: signin.ErrNoSession,
			then: func(t *testing.T, _ *stack, _ *flaky, _ signin.Session, cookie string) string {
				return reseal(t, cookie, func(c map[string]any) { c["sid"] = "FORGEDSESSIONIDFORGEDSESS" })
			}},
		{name: "its record id under another tenant", want: signin.ErrNoSession,
			then: func(t *testing.T, _ *stack, _ *flaky, _ signin.Session, cookie string) string {
				return reseal(t, cookie, func(c map[string]any) { c["tenant"] = "globex" })
			}},
		{name: "the store down", want: errStoreDown,
			then: func(t *testing.T, _ *stack, store *flaky, _ signin.Session, cookie string) string {
				store.down.Store(true)
				return cookie
			}},
		{name: "a sign-out the store failed ends nothing", want: nil,
			then: func(t *testing.T, s *stack, store *flaky, alice signin.Session, cookie string) string {
				store.down.Store(true)
				if out, err := s.flow.SignOut(ctx, alice); !errors.Is(err, errStoreDown) || out != "" {
					t.Errorf("SignOut with the store down: %q %v, want the store's error and no cookie cleared", out, err)
				}
				store.down.Store(false)
				return cookie
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			store := &flaky{Sessions: inmem.NewSessions()}
			s := newStack(t, signin.Config{Sessions: store})
			now := s.clock.Now()
			cb := s.signIn(t, "/", as("alice", "acme"), nil)
			alice, cookies, _, err := s.flow.Finish(ctx, cb.cookies, cb.query)
			if err != nil {
				t.Fatal(err)
			}
			cookie := pair(cookies[0])
			if c.then != nil {
				cookie = c.then(t, s, store, alice, cookie)
			}
			s.clock.Set(now.Add(c.at))
			got, err := s.flow.SessionFrom(ctx, []string{cookie})
			switch {
			case c.want == nil && (err != nil || got.ID != alice.ID):
				t.Errorf("%+v %v, want alice's session", got, err)
			case c.want != nil && (!errors.Is(err, c.want) || got.ID != ""):
				t.Errorf("%+v %v, want %v", got, err, c.want)
			case c.want == errStoreDown && errors.Is(err, signin.ErrNoSession):
				t.Errorf("a store failure answered as no session: %v", err)
			}
		})
	}
	t.Run("a sign-in the store failed sets no cookie", func(t *testing.T) {
		t.Parallel()
		store := &flaky{Sessions: inmem.NewSessions()}
		s := newStack(t, signin.Config{Sessions: store})
		cb := s.signIn(t, "/", as("alice", "acme"), nil)
		store.down.Store(true)
		got, cookies, next, err := s.flow.Finish(ctx, cb.cookies, cb.query)
		if !errors.Is(err, errStoreDown) || cookies != nil || next != "" || got.ID != "" {
			t.Errorf("%+v %q %q %v, want the store's error and no cookie", got, cookies, next, err)
		}
		for _, sentinel := range []error{signin.ErrState, signin.ErrDenied, signin.ErrIDToken, signin.ErrNoTenant, signin.ErrNoPrincipal, signin.ErrUnavailable, signin.ErrNoSession} {
			if errors.Is(err, sentinel) {
				t.Errorf("%v is also %v", err, sentinel)
			}
		}
	})
}
