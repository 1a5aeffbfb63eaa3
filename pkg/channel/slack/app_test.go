package slack_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/testkeys"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// TestButtonValues: a value names one interrupt of one tenant and one action, and only the
// keyring makes one: changed anywhere, made under another key, or a token of the same keyring,
// it is refused.
func TestButtonValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := slack.Button{Tenant: "acme", RunID: "run-1", InterruptID: "i1", Action: interrupt.ActionAccept}
	v, err := slack.Seal(ctx, hosttest.Keys, b)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := slack.Open(ctx, hosttest.Keys, v); err != nil || got != b {
		t.Fatalf("open %+v %v", got, err)
	}
	parts := strings.Split(v, ".")
	other := b
	other.Tenant = "evilcorp"
	swapped, _ := slack.Seal(ctx, hosttest.Keys, other)
	otherKeys := testkeys.Static{ActiveKid: "k1", Keys: map[string][]byte{"k1": []byte("another key of thirty-two bytes!")}}
	underOther, _ := slack.Seal(ctx, otherKeys, b)
	tok, _, err := token.Sign(ctx, hosttest.Keys, token.Claims{Tenant: "acme", RunID: "run-1", NodeID: "n", InterruptID: "i1", Intent: token.IntentResolve, IssuedAt: 1, ExpiresAt: 2, JTI: "j"})
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"payload of another": strings.Join([]string{parts[0], parts[1], strings.Split(swapped, ".")[2], parts[3]}, "."),
		"payload edited":     strings.Join([]string{parts[0], parts[1], base64.RawURLEncoding.EncodeToString([]byte(`{"t":"acme","r":"run-1","i":"i2","a":"accept"}`)), parts[3]}, "."),
		"another key":        underOther,
		"an unknown kid":     strings.Join([]string{parts[0], "k9", parts[2], parts[3]}, "."),
		"a token":            tok,
		"a MAC cut":          v[:len(v)-2],
		"too long":           v + strings.Repeat("A", 2000),
		"empty":              "",
		"another prefix":     "isb2" + v[4:],
	} {
		if _, err := slack.Open(ctx, hosttest.Keys, bad); !errors.Is(err, slack.ErrButton) {
			t.Errorf("%s: %v, want ErrButton", name, err)
		}
	}
}

// TestIntegrations: a tenant's app as the API keeps it: what Slack would never issue is 400
// naming the member, the secret never answered, another tenant registering the same pair
// touches nothing of the first's, and replacing a registered app's secret is a security event.
func TestIntegrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	secrets := inmem.NewSecrets()
	var logs bytes.Buffer
	i := &slack.Integrations{Store: inmem.New(), Secrets: secretsWithReload{secrets}, Log: slog.New(slog.NewJSONHandler(&logs, nil))}
	acme, evil := hosttest.Who("admin"), interrupt.Principal{Subject: "admin", Tenant: "evilcorp"}
	good := slack.Request{AppID: "A0001", TeamID: "T0001", SigningSecret: "8f742231b10e8888abcd99e5a6b7c885"}
	for _, tc := range []struct {
		req  slack.Request
		path string
	}{
		{slack.Request{TeamID: "T0001", SigningSecret: good.SigningSecret}, "/appId"},
		{slack.Request{AppID: "A0001", TeamID: "U0001", SigningSecret: good.SigningSecret}, "/teamId"},
		{slack.Request{AppID: "A0001", TeamID: "T0001", SigningSecret: "not-hex"}, "/signingSecret"},
		{slack.Request{AppID: "A0001", TeamID: "T0001", SigningSecret: good.SigningSecret, BotToken: "xoxp-user-token-1234"}, "/botToken"},
	} {
		_, _, err := i.Put(ctx, acme, tc.req)
		var e *interrupt.Error
		if !errors.As(err, &e) || e.Code != interrupt.CodeValidation || len(e.Fields) != 1 || e.Fields[0].Path != tc.path {
			t.Errorf("%+v: %v, want 400 at %s", tc.req, err, tc.path)
		}
	}
	if secrets.Writes() != 0 {
		t.Fatalf("a refused app wrote %d secrets", secrets.Writes())
	}
	a, created, err := i.Put(ctx, acme, good)
	if err != nil || !created || a.AppID != "A0001" || a.BotToken {
		t.Fatalf("put: %+v %v %v", a, created, err)
	}
	// evilcorp registers the same pair with a secret of its own: acme's app and secret stay
	// whole (the pair is no one's to hold; a click is the tenant's whose secret verifies it).
	squat := slack.Request{AppID: "A0001", TeamID: "T0001", SigningSecret: "0123456789abcdef0123456789abcdef"}
	if _, created, err := i.Put(ctx, evil, squat); err != nil || !created {
		t.Errorf("another tenant's registration of the pair: %v %v", created, err)
	}
	first := slack.SecretID("acme", "A0001", "T0001")
	if got, err := secrets.Get(ctx, first); err != nil || len(got) != 1 || got[0] != good.SigningSecret {
		t.Fatalf("acme's secret after evilcorp's registration: %v %v", got, err)
	}
	if got, _ := secrets.Get(ctx, slack.SecretID("evilcorp", "A0001", "T0001")); len(got) != 1 || got[0] != squat.SigningSecret {
		t.Errorf("evilcorp's secret: %v", got)
	}
	if a, err := i.Get(ctx, acme); err != nil || a.AppID != "A0001" {
		t.Errorf("acme's app: %+v %v", a, err)
	}
	if logs.Len() != 0 {
		t.Errorf("a first registration logged a security event: %s", logs.String())
	}
	// Replacing the secret a registered app is verified with is a security event, logged with
	// who did it and never the secret.
	rotated := good
	rotated.SigningSecret = "fedcba9876543210fedcba9876543210"
	if _, created, err := i.Put(ctx, acme, rotated); err != nil || created {
		t.Fatalf("replace: %v %v", created, err)
	}
	if line := logs.String(); !strings.Contains(line, `"event":"security"`) || !strings.Contains(line, `"by":"admin"`) || !strings.Contains(line, `"tenant":"acme"`) ||
		strings.Contains(line, rotated.SigningSecret) || strings.Contains(line, good.SigningSecret) {
		t.Errorf("the replacement's log: %s", line)
	}
	// A move to a pair of its own replaces the app, and its old secret goes.
	moved := slack.Request{AppID: "A0003", TeamID: "T0001", SigningSecret: good.SigningSecret, BotToken: "xoxb-1234567890-abcdefghij"}
	if a, created, err := i.Put(ctx, acme, moved); err != nil || created || !a.BotToken {
		t.Fatalf("move: %+v %v %v", a, created, err)
	}
	if _, err := secrets.Get(ctx, first); err == nil {
		t.Errorf("the old app's secret is kept")
	}
	if err := i.Delete(ctx, acme); err != nil {
		t.Fatal(err)
	}
	if got, err := secrets.Get(ctx, slack.SecretID("acme", "A0003", "T0001")); err == nil {
		t.Errorf("the deleted app's secret is kept: %d values", len(got))
	}
	if err := i.Delete(ctx, acme); interrupt.ErrorCode(err) != interrupt.CodeNotFound {
		t.Errorf("delete again: %v", err)
	}
	if id := slack.SecretID("tenant:with:colons", "A1", "T1"); id != "tenant=with=colons/A1-T1" {
		t.Errorf("SecretID %q", id)
	}
}

// secretsWithReload is the in-memory secrets as slack.Secrets: a reload reads again.
type secretsWithReload struct{ *inmem.Secrets }

func (s secretsWithReload) Reload(ctx context.Context, id string) ([]string, bool, error) {
	v, err := s.Get(ctx, id)
	return v, err == nil, err
}
