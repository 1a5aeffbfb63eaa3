package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/token"
)

type tokenView struct {
	Token, Intent, ExpiresAt string
}

// TestTokenJourney: an approval requested, a token minted for bob by the team's mailer
// (tokens:delegate), inspected and resolved through it (as bob's mail link would), after which
// the token is dead.
func TestTokenJourney(t *testing.T) {
	run := newRun("mail")
	eng := jwt(t, engine)
	payload := example(t, "approval")
	if a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"approve","payload":`+payload+`}`); a.Status != 201 {
		t.Fatalf("request: %d %s", a.Status, a.Body)
	}
	mailer := jwt(t, delegate)
	a := do(t, "POST", "/runs/"+run+"/interrupts/approve/tokens", mailer, `{"intent":"resolve","principal":"bob"}`)
	var minted tokenView
	a.json(t, &minted)
	if a.Status != 201 {
		t.Fatalf("mint: %d %s", a.Status, a.Body)
	}
	link := "/interrupts/" + minted.Token

	for range 5 {
		if a := do(t, "GET", link, "", ""); a.Status != 200 || string(a.Body) != payload {
			t.Fatalf("inspect: %d %s", a.Status, a.Body)
		}
		if a := do(t, "HEAD", link, "", ""); a.Status != 200 || len(a.Body) != 0 {
			t.Fatalf("HEAD: %d %q", a.Status, a.Body)
		}
	}
	a = do(t, "POST", link, "", `{"resumeValue":{"action":"reject","feedback":"over budget","decidedAt":"2026-11-30T10:00:00Z"}}`)
	var res struct {
		Status      string
		ResumeValue map[string]any
		Seq         int
	}
	a.json(t, &res)
	if a.Status != 200 || res.Status != "resolved" || res.ResumeValue["decidedBy"] != "bob" || res.Seq != 2 {
		t.Fatalf("resolve by token: %d %s", a.Status, a.Body)
	}
	for _, m := range []string{"GET", "POST"} {
		body := ""
		if m == "POST" {
			body = `{"resumeValue":{"action":"accept","decidedAt":"2026-11-30T10:00:00Z"}}`
		}
		if a := do(t, m, link, "", body); a.Status != 409 {
			t.Errorf("%s after resolve: %d %s", m, a.Status, a.Body)
		}
	}
}

func TestTokensDieWithTheirRun(t *testing.T) {
	for _, end := range []string{"cancel", "complete"} {
		run := newRun(end)
		eng := jwt(t, engine)
		do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"pay","payload":`+example(t, "external-event")+`}`)
		a := do(t, "POST", "/runs/"+run+"/interrupts/pay/tokens", eng, `{"intent":"resolve","ttlMs":600000}`)
		var tv tokenView
		a.json(t, &tv)
		if a.Status != 201 {
			t.Fatalf("mint: %d %s", a.Status, a.Body)
		}
		if a := do(t, "POST", "/runs/"+run+"/"+end, eng, ""); a.Status != 200 {
			t.Fatalf("%s: %d %s", end, a.Status, a.Body)
		}
		if a := do(t, "GET", "/interrupts/"+tv.Token, "", ""); a.Status != 409 {
			t.Errorf("inspect after %s: %d %s", end, a.Status, a.Body)
		}
		if a := do(t, "POST", "/interrupts/"+tv.Token, "", `{"resumeValue":{"paid":true}}`); a.Status != 409 {
			t.Errorf("resolve after %s: %d %s", end, a.Status, a.Body)
		}
	}
}

func TestTokenErrorsThroughTheGateway(t *testing.T) {
	run := newRun("bad")
	eng := jwt(t, engine)
	do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"n1","payload":`+example(t, "custom")+`}`)
	var inspect, resolve tokenView
	do(t, "POST", "/runs/"+run+"/interrupts/n1/tokens", eng, `{"intent":"inspect"}`).json(t, &inspect)
	do(t, "POST", "/runs/"+run+"/interrupts/n1/tokens", eng, `{"intent":"resolve"}`).json(t, &resolve)
	c, err := token.Verify(context.Background(), localKeys(t), resolve.Token)
	if err != nil {
		t.Fatal(err)
	}
	c.ExpiresAt = time.Now().Add(-time.Millisecond).UnixMilli()
	expired := mintLocal(t, c)
	cases := []struct {
		name, method, tok string
		status            int
	}{
		{"garbage", "GET", "not-a-token", 401},
		{"unadvertised alg", "GET", "ow2.hs512" + inspect.Token[len("ow2.hs256"):], 401},
		{"inspect token resolving", "POST", inspect.Token, 403},
		{"expired", "GET", expired, 410},
		{"expired, resolving", "POST", expired, 410},
	}
	for _, c := range cases {
		body := ""
		if c.method == "POST" {
			body = `{"resumeValue":{}}`
		}
		a := do(t, c.method, "/interrupts/"+c.tok, "", body)
		if a.Status != c.status || a.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s, want %d", c.name, a.Status, a.Body, c.status)
		}
	}
}

// keys reads the local stack's keyring from its secret.
type keys struct {
	sm        *secretsmanager.Client
	secretID  string
	ActiveKid string            `json:"active"`
	Keys      map[string]string `json:"keys"`
}

func localKeys(t *testing.T) *keys {
	t.Helper()
	localaws.NeedsStack(t)
	k := &keys{secretID: os.Getenv("KEYRING_SECRET_ID")}
	if k.secretID == "" {
		t.Fatal("KEYRING_SECRET_ID is not set: run the suite with `make test`")
	}
	k.sm = localaws.SecretsManager()
	out, err := k.sm.GetSecretValue(context.Background(), &secretsmanager.GetSecretValueInput{SecretId: &k.secretID, VersionStage: aws.String("AWSCURRENT")})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(*out.SecretString), k); err != nil {
		t.Fatal(err)
	}
	return k
}

func (k *keys) Active(context.Context) (string, []byte, error) {
	key, err := base64.StdEncoding.DecodeString(k.Keys[k.ActiveKid])
	return k.ActiveKid, key, err
}

func (k *keys) Key(_ context.Context, kid string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(k.Keys[kid])
}

// mintLocal signs claims with the local keyring's active key, as the functions would.
func mintLocal(t *testing.T, c token.Claims) string {
	t.Helper()
	s, _, err := token.Mint(context.Background(), localKeys(t), c, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRotationThroughTheGateway adds a kid to the local keyring and makes it active: running
// functions verify tokens under it on first sight, and keep verifying the older kid.
func TestRotationThroughTheGateway(t *testing.T) {
	ring := localKeys(t)
	run := newRun("rotate")
	eng := jwt(t, engine)
	a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"n1","payload":`+example(t, "custom")+`,"token":{"intent":"inspect"}}`)
	var created struct {
		InterruptID string
		Tokens      []tokenView
	}
	a.json(t, &created)

	newKid := "e2e-" + strings.ToLower(rand.Text()[:8])
	ring.Keys[newKid] = localaws.Key()
	localaws.PutSecret(t, ring.sm, ring.secretID, localaws.Keyring(newKid, ring.Keys))
	ring.ActiveKid = newKid
	underNew, _, err := token.Mint(context.Background(), ring, token.Claims{
		Tenant: "acme", RunID: run, NodeID: "n1", InterruptID: created.InterruptID, Intent: token.IntentInspect,
		ExpiresAt: time.Now().Add(time.Minute).UnixMilli(),
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(underNew, "ow2.hs256."+newKid+".") {
		t.Fatalf("forged %.30s…", underNew)
	}
	if a := do(t, "GET", "/interrupts/"+underNew, "", ""); a.Status != 200 {
		t.Errorf("token under the new kid: %d %s", a.Status, a.Body)
	}
	if a := do(t, "GET", "/interrupts/"+created.Tokens[0].Token, "", ""); a.Status != 200 {
		t.Errorf("token under the old kid: %d %s", a.Status, a.Body)
	}
}

// TestV1Tokens: a v1 token (<payload>.<mac>, the MAC under the keyring's legacy kid) inspects and
// resolves until its expiresAt, and past it answers 410, as the spec keeps it. The token is
// built here byte by byte from the v1 grammar, not by the host's own code.
func TestV1Tokens(t *testing.T) {
	ring := localKeys(t)
	legacy, err := base64.StdEncoding.DecodeString(ring.Keys[token.LegacyKid])
	if err != nil || len(legacy) == 0 {
		t.Fatalf("the local keyring holds no legacy kid: %v", err)
	}
	run := newRun("v1")
	eng := jwt(t, engine)
	a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"n1","payload":`+example(t, "custom")+`}`)
	var created struct{ InterruptID string }
	a.json(t, &created)
	if a.Status != 201 {
		t.Fatalf("request: %d %s", a.Status, a.Body)
	}
	v1 := func(intent string, exp time.Time) string {
		payload, _ := json.Marshal(map[string]any{
			"v": 1, "tenant": "acme", "runId": run, "nodeId": "n1", "interruptId": created.InterruptID,
			"intent": intent, "iat": time.Now().UnixMilli(), "exp": exp.UnixMilli(), "jti": rand.Text(),
		})
		p := base64.RawURLEncoding.EncodeToString(payload)
		mac := hmac.New(sha256.New, legacy)
		mac.Write([]byte(p))
		return p + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	}
	expired := v1(token.IntentResolve, time.Now().Add(-time.Second))
	if a := do(t, "GET", "/interrupts/"+expired, "", ""); a.Status != 410 || !strings.Contains(string(a.Body), `"code":"interrupt_expired"`) {
		t.Errorf("inspect with a v1 token past its expiresAt: %d %s", a.Status, a.Body)
	}
	if a := do(t, "POST", "/interrupts/"+expired, "", `{"resumeValue":{"ok":true}}`); a.Status != 410 {
		t.Errorf("resolve with a v1 token past its expiresAt: %d %s", a.Status, a.Body)
	}
	live := v1(token.IntentResolve, time.Now().Add(time.Minute))
	if a := do(t, "GET", "/interrupts/"+live, "", ""); a.Status != 200 || !strings.Contains(string(a.Body), `"customKind":"acme.calibration"`) {
		t.Errorf("inspect with a v1 token: %d %s", a.Status, a.Body)
	}
	if a := do(t, "POST", "/interrupts/"+v1(token.IntentInspect, time.Now().Add(time.Minute)), "", `{"resumeValue":{"ok":true}}`); a.Status != 403 {
		t.Errorf("resolve with a v1 inspect token: %d %s", a.Status, a.Body)
	}
	if a := do(t, "POST", "/interrupts/"+live, "", `{"resumeValue":{"ok":true}}`); a.Status != 200 {
		t.Errorf("resolve with a v1 token: %d %s", a.Status, a.Body)
	}
	if a := do(t, "GET", "/interrupts/"+live, "", ""); a.Status != 409 {
		t.Errorf("the v1 token after its interrupt resolved: %d %s", a.Status, a.Body)
	}
}
