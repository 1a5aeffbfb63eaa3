package apigw_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/apigw/jsonapi"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// signer mints tokens under a chosen kid and key, as a host holding that key would.
type signer struct {
	kid string
	key []byte
}

func (s signer) Active(context.Context) (string, []byte, error) { return s.kid, s.key, nil }
func (s signer) Key(context.Context, string) ([]byte, error)    { return s.key, nil }

func (s *stack) signer(t testing.TB, kid string) signer {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(s.keys[kid])
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid, key}
}

func (s *stack) forge(t testing.TB, sg signer, c token.Claims) string {
	t.Helper()
	if c.ExpiresAt == 0 {
		c.ExpiresAt = s.clock.Now().Add(time.Hour).UnixMilli()
	}
	if c.Intent == "" {
		c.Intent = token.IntentResolve
	}
	tok, _, err := token.Mint(context.Background(), sg, c, s.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (s *stack) inspect(t testing.TB, tok string) response {
	t.Helper()
	return invoke(t, s.fn("inspect-by-token"), call{params: map[string]string{"token": tok}})
}

func (s *stack) resolveByToken(t testing.TB, tok, value string) response {
	t.Helper()
	return invoke(t, s.fn("resolve-by-token"), call{params: map[string]string{"token": tok}, body: `{"resumeValue":` + value + `}`})
}

// mint mints as trusted tooling (tokens:delegate), which may mint any token the interrupt allows.
func (s *stack) mint(t testing.TB, run, node, body string) response {
	t.Helper()
	return invoke(t, s.fn("mint-token"), call{who: &delegate, params: map[string]string{"runId": run, "nodeId": node}, body: body})
}

func (s *stack) mintOK(t testing.TB, run, node, body string) host.TokenView {
	t.Helper()
	r := s.mint(t, run, node, body)
	if r.Status != 201 {
		t.Fatalf("mint: %d %s", r.Status, r.Body)
	}
	var minted jsonapi.MintedToken
	r.decode(t, &minted)
	// The page the token opens, under the domain the request came in on (no PublicBaseURL).
	if want := "https://" + testDomain + "/approve/" + minted.Token; minted.URL != want {
		t.Fatalf("mint: url %q, want %q", minted.URL, want)
	}
	return minted.TokenView
}

func expect(t *testing.T, r response, status int, code interrupt.Code) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d %s, want %d %s", r.Status, r.Body, status, code)
	}
	if code != "" {
		if got := r.problem(t).Code; got != code {
			t.Fatalf("code %s, want %s", got, code)
		}
	}
}

func TestTokensOnRequest(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	r := invoke(t, s.fn("request-interrupt"), call{who: &engine, params: map[string]string{"runId": "r1"},
		body: `{"nodeId":"pay","payload":` + example(t, "external-event") + `,"token":{"intent":"resolve","ttlMs":172800000}}`})
	var v host.InterruptView
	r.decode(t, &v)
	if r.Status != 201 || len(v.Tokens) != 1 || v.Tokens[0].Intent != "resolve" {
		t.Fatalf("request with a token: %d %s", r.Status, r.Body)
	}
	deadline := s.clock.Now().Add(24 * time.Hour)
	if exp, _ := time.Parse(time.RFC3339, v.Tokens[0].ExpiresAt); !exp.Equal(deadline.Truncate(time.Millisecond)) {
		t.Errorf("a 48 h token on a 24 h interrupt expires at %s, want the deadline %s", v.Tokens[0].ExpiresAt, deadline)
	}
	tv := s.mintOK(t, "r1", "pay", `{"intent":"inspect"}`)
	if exp, _ := time.Parse(time.RFC3339, tv.ExpiresAt); !exp.Equal(s.clock.Now().Add(30 * time.Minute).Truncate(time.Millisecond)) {
		t.Errorf("default lifetime: expires %s", tv.ExpiresAt)
	}
	for _, body := range []string{`{"intent":"admin"}`, `{}`, `{"intent":"resolve","ttlMs":2592000001}`, `{"intent":"resolve","ttlMs":-1}`, `{"intent":"resolve","ttlMs":0}`, `{"intent":"resolve","ttlMs":0.0}`, `{"intent":"resolve","extra":1}`} {
		expect(t, s.mint(t, "r1", "pay", body), 400, interrupt.CodeValidation)
	}
	expect(t, s.mint(t, "r1", "nope", `{"intent":"resolve"}`), 404, interrupt.CodeNotFound)
	expect(t, s.mint(t, "ghost", "pay", `{"intent":"resolve"}`), 404, interrupt.CodeNotFound)
	bad := invoke(t, s.fn("request-interrupt"), call{who: &engine, params: map[string]string{"runId": "r2"},
		body: `{"nodeId":"n","payload":` + example(t, "custom") + `,"token":{"intent":"everything"}}`})
	expect(t, bad, 400, interrupt.CodeValidation)
	zero := invoke(t, s.fn("request-interrupt"), call{who: &engine, params: map[string]string{"runId": "r2"},
		body: `{"nodeId":"n","payload":` + example(t, "custom") + `,"token":{"intent":"inspect","ttlMs":0}}`})
	if expect(t, zero, 400, interrupt.CodeValidation); !hasPath(zero.problem(t), "/token/ttlMs") {
		t.Errorf("a lifetime of 0: %s", zero.Body)
	}
	if len(s.commits(t, "acme", "r2")) != 0 {
		t.Error("a refused token request wrote the interrupt")
	}
}

func TestInspectAndResolveByToken(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	payload := example(t, "approval")
	s.mustRequest(t, "r1", "approve", payload)
	inspectTok := s.mintOK(t, "r1", "approve", `{"intent":"inspect"}`).Token
	resolveTok := s.mintOK(t, "r1", "approve", `{"intent":"resolve","principal":"bob"}`).Token

	for range 20 {
		r := s.inspect(t, inspectTok)
		if r.Status != 200 || string(r.Body) != compact(t, payload) {
			t.Fatalf("inspect: %d %s", r.Status, r.Body)
		}
	}
	if n := len(s.commits(t, "acme", "r1")); n != 1 {
		t.Errorf("inspecting wrote: %d commits", n)
	}
	expect(t, s.resolveByToken(t, inspectTok, `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`), 403, interrupt.CodeForbidden)

	r := s.resolveByToken(t, resolveTok, `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`)
	var res host.Resolution
	r.decode(t, &res)
	if r.Status != 200 || !strings.Contains(string(res.ResumeValue), `"decidedBy":"bob"`) {
		t.Fatalf("resolve by token: %d %s", r.Status, r.Body)
	}
	expect(t, s.resolveByToken(t, resolveTok, `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`), 409, interrupt.CodeAlreadyResolved)
	expect(t, s.inspect(t, inspectTok), 409, interrupt.CodeAlreadyResolved)
	expect(t, s.mint(t, "r1", "approve", `{"intent":"resolve"}`), 409, interrupt.CodeAlreadyResolved)
}

// TestTokenStatusTable: one row per status of the spec's table on the token surface, and per
// token rule.
func TestTokenStatusTable(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	v := s.mustRequest(t, "r1", "n1", example(t, "custom"))
	a := s.signer(t, "kA")
	good := s.forge(t, a, token.Claims{Tenant: "acme", RunID: "r1", NodeID: "n1", InterruptID: v.InterruptID})
	parts := strings.Split(good, ".")
	flipped := []byte(parts[4])
	flipped[3] ^= 'A' ^ 'B'
	if flipped[3] == parts[4][3] {
		flipped[3] = 'C'
	}
	randomKey := signer{"kA", []byte(strings.Repeat("x", 32))}
	cases := []struct {
		name   string
		tok    string
		status int
		code   interrupt.Code
	}{
		{"flipped MAC", strings.Join(append(parts[:4:4], string(flipped)), "."), 401, interrupt.CodeTokenInvalid},
		{"unadvertised alg", strings.Replace(good, ".hs256.", ".hs512.", 1), 401, interrupt.CodeTokenInvalid},
		{"alg none", strings.Replace(good, ".hs256.", ".none.", 1), 401, interrupt.CodeTokenInvalid},
		{"unknown kid", strings.Replace(good, ".kA.", ".kZ.", 1), 401, interrupt.CodeTokenInvalid},
		{"forged with another key", s.forge(t, randomKey, token.Claims{Tenant: "acme", RunID: "r1", NodeID: "n1", InterruptID: v.InterruptID}), 401, interrupt.CodeTokenInvalid},
		{"not a token", "hello", 401, interrupt.CodeTokenInvalid},
		{"no such run", s.forge(t, a, token.Claims{Tenant: "acme", RunID: "ghost", NodeID: "n1", InterruptID: v.InterruptID}), 404, interrupt.CodeNotFound},
		{"no such node", s.forge(t, a, token.Claims{Tenant: "acme", RunID: "r1", NodeID: "n9", InterruptID: v.InterruptID}), 404, interrupt.CodeNotFound},
		{"no such interrupt", s.forge(t, a, token.Claims{Tenant: "acme", RunID: "r1", NodeID: "n1", InterruptID: "int_nope"}), 404, interrupt.CodeNotFound},
		{"another tenant", s.forge(t, a, token.Claims{Tenant: "evilcorp", RunID: "r1", NodeID: "n1", InterruptID: v.InterruptID}), 404, interrupt.CodeNotFound},
		{"expired", s.forge(t, a, token.Claims{Tenant: "acme", RunID: "r1", NodeID: "n1", InterruptID: v.InterruptID, ExpiresAt: s.clock.Now().Add(-time.Millisecond).UnixMilli()}), 410, interrupt.CodeExpired},
		{"valid", good, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expect(t, s.inspect(t, c.tok), c.status, c.code)
			if c.status != 200 {
				expect(t, s.resolveByToken(t, c.tok, `{}`), c.status, c.code)
			}
		})
	}
	if n := len(s.commits(t, "acme", "r1")); n != 1 {
		t.Errorf("refused tokens wrote: %d commits", n)
	}
}

func TestTokenExpiryEdge(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "n1", example(t, "custom"))
	tv := s.mintOK(t, "r1", "n1", `{"intent":"resolve","ttlMs":60000}`)
	s.clock.Advance(time.Minute)
	expect(t, s.inspect(t, tv.Token), 200, "")
	s.clock.Advance(time.Millisecond)
	expect(t, s.inspect(t, tv.Token), 410, interrupt.CodeExpired)
	expect(t, s.resolveByToken(t, tv.Token, `{}`), 410, interrupt.CodeExpired)

	// A token never outlives its interrupt: at the deadline the token has expired with it.
	s.mustRequest(t, "r2", "pay", example(t, "external-event"))
	long := s.mintOK(t, "r2", "pay", `{"intent":"resolve","ttlMs":2592000000}`)
	s.clock.Advance(24 * time.Hour)
	expect(t, s.resolveByToken(t, long.Token, `{}`), 410, interrupt.CodeExpired)
	if n := len(s.commits(t, "acme", "r2")); n != 1 {
		t.Errorf("%d commits", n)
	}
}

func TestEndRunInvalidatesTokens(t *testing.T) {
	for _, end := range []string{"cancel", "complete"} {
		t.Run(end, func(t *testing.T) {
			s := newStack(t)
			s.mustRequest(t, "r1", "a", example(t, "approval"))
			s.mustRequest(t, "r1", "b", example(t, "clarification"))
			ta := s.mintOK(t, "r1", "a", `{"intent":"resolve"}`).Token
			tb := s.mintOK(t, "r1", "b", `{"intent":"resolve","principal":"carol"}`).Token
			route := "POST /runs/{runId}/" + end
			endCall := call{who: &engine, params: map[string]string{"runId": "r1"}, body: `{"reason":"superseded"}`}
			r := invoke(t, s.fn("end-run"), withRoute(endCall, route))
			var res host.RunEnd
			r.decode(t, &res)
			want := map[string]interrupt.RunStatus{"cancel": interrupt.RunCancelled, "complete": interrupt.RunCompleted}[end]
			if r.Status != 200 || res.Status != want || res.Seq != 3 {
				t.Fatalf("%s: %d %s", end, r.Status, r.Body)
			}
			again := invoke(t, s.fn("end-run"), withRoute(call{who: &engine, params: map[string]string{"runId": "r1"}}, route))
			if again.Status != 200 || !strings.Contains(string(again.Body), `"seq":3`) {
				t.Errorf("second %s: %d %s", end, again.Status, again.Body)
			}
			other := map[string]string{"cancel": "complete", "complete": "cancel"}[end]
			expect(t, invoke(t, s.fn("end-run"), withRoute(call{who: &engine, params: map[string]string{"runId": "r1"}}, "POST /runs/{runId}/"+other)), 409, interrupt.CodeConflict)
			for _, tok := range []string{ta, tb} {
				expect(t, s.inspect(t, tok), 409, interrupt.CodeAlreadyResolved)
				expect(t, s.resolveByToken(t, tok, `{}`), 409, interrupt.CodeAlreadyResolved)
			}
			expect(t, s.resolve(t, approver, "r1", "a", `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`), 409, interrupt.CodeAlreadyResolved)
			expect(t, s.request(t, engine, "r1", "c", example(t, "custom")), 409, interrupt.CodeConflict)
			if snap, _ := s.snapshot(t, engine, "r1"); snap.Status != want || len(snap.Pending) != 0 {
				t.Errorf("snapshot %+v", snap)
			}
			types := s.eventTypes(t, "acme", "r1")
			if types[len(types)-1] != "run."+map[string]string{"cancel": "cancelled", "complete": "completed"}[end] || len(s.commits(t, "acme", "r1")) != 3 {
				t.Errorf("events %v", types)
			}
		})
	}
	s := newStack(t)
	expect(t, invoke(t, s.fn("end-run"), withRoute(call{who: &engine, params: map[string]string{"runId": "ghost"}}, "POST /runs/{runId}/cancel")), 404, interrupt.CodeNotFound)
}

func withRoute(c call, route string) call {
	c.route = route
	return c
}

func TestRotation(t *testing.T) {
	t.Parallel()
	s := dynamoStack(t)
	v := s.mustRequest(t, "r1", "n1", example(t, "custom"))
	underA := s.mintOK(t, "r1", "n1", `{"intent":"inspect"}`).Token
	claims := token.Claims{Tenant: "acme", RunID: "r1", NodeID: "n1", InterruptID: v.InterruptID, Intent: token.IntentInspect}

	// B joins and becomes active: A's tokens still verify, B's are learnt on first sight.
	s.keys["kB"] = localaws.Key()
	localaws.PutSecret(t, s.secrets, s.secretID, localaws.Keyring("kB", s.keys))
	expect(t, s.inspect(t, underA), 200, "")
	expect(t, s.inspect(t, s.forge(t, s.signer(t, "kB"), claims)), 200, "")
	if tv := s.mintOK(t, "r1", "n1", `{"intent":"inspect"}`); !strings.HasPrefix(tv.Token, "ow2.hs256.kB.") {
		t.Errorf("after rotation new tokens are %.16s…, want kid kB", tv.Token)
	}

	// A legacy v1 token verifies under kid "legacy" until it expires.
	legacyKey, _ := base64.StdEncoding.DecodeString(s.keys["legacy"])
	legacy := claims
	legacy.ExpiresAt = s.clock.Now().Add(time.Hour).UnixMilli()
	v1 := mintV1(t, legacyKey, legacy)
	expect(t, s.inspect(t, v1), 200, "")

	// A is removed: once the keyring's TTL passes, A's tokens are refused.
	delete(s.keys, "kA")
	localaws.PutSecret(t, s.secrets, s.secretID, localaws.Keyring("kB", s.keys))
	s.clock.Advance(2 * time.Minute)
	expect(t, s.inspect(t, underA), 401, interrupt.CodeTokenInvalid)
	s.clock.Advance(time.Hour)
	expect(t, s.inspect(t, v1), 410, interrupt.CodeExpired)
}

// TestSecretsManagerCalls: verification is served from the keyring's memory; a flood of
// unknown kids costs at most one read of the secret.
func TestSecretsManagerCalls(t *testing.T) {
	t.Parallel()
	s := dynamoStack(t)
	v := s.mustRequest(t, "r1", "n1", example(t, "approval"))
	tok := s.mintOK(t, "r1", "n1", `{"intent":"resolve"}`).Token
	s.inspect(t, tok)
	s.secretCalls.Store(0)
	expect(t, s.resolveByToken(t, tok, `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","decidedBy":"the bearer"}`), 200, "")
	if n := s.secretCalls.Load(); n != 0 {
		t.Errorf("a warm resolve-by-token made %d Secrets Manager calls", n)
	}
	for i := range 100 {
		kid := strings.ToLower(rand.Text()[:12])
		forged := s.forge(t, signer{kid, []byte(strings.Repeat("k", 32))}, token.Claims{Tenant: "acme", RunID: "r1", NodeID: "n1", InterruptID: v.InterruptID})
		r := s.resolveByToken(t, forged, `{}`)
		if r.Status != 401 {
			t.Fatalf("unknown kid %d: %d %s", i, r.Status, r.Body)
		}
	}
	if n := s.secretCalls.Load(); n > 1 {
		t.Errorf("100 unknown kids made %d Secrets Manager calls, want at most 1", n)
	}
}

// mintV1 signs c as the v1 tokens the host issued before ow2: unpadded base64url of the claims,
// a dot, and their HMAC-SHA256. The host no longer mints them; outstanding ones stay valid.
func mintV1(t testing.TB, key []byte, c token.Claims) string {
	t.Helper()
	c.V, c.JTI = 1, "v1-jti"
	payload, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	p := base64.RawURLEncoding.EncodeToString(payload)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(p))
	return p + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}
