package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
)

// TestRotationOrphansNoToken rotates the stack's keyring as Secrets Manager would (POST
// /local-rotation runs rotate-keys through its four steps) between minting tokens and using
// them: a token signed before the rotation still inspects and then resolves, and tokens minted
// once the functions have read the keyring again carry the new kid. Not parallel: the other
// tests' tokens must verify across it too, and none of them runs beside it.
func TestRotationOrphansNoToken(t *testing.T) {
	localaws.NeedsStack(t)
	ctx := context.Background()
	tenant := newRun("rotation")
	engine := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "engine", Tenant: tenant, Scopes: []string{"interrupts:write", "runs:read"}})))
	mailer := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "mailer", Tenant: tenant, Scopes: []string{"tokens:delegate"}})))
	run := newRun("rotation")
	payload := strings.Replace(example(t, "approval"), `"requiredApprovals":1`, `"requiredApprovals":1,"approversList":["alice"]`, 1)
	if _, err := engine.Request(ctx, run, "gate", json.RawMessage(payload), nil); err != nil {
		t.Fatal(err)
	}
	old, err := mailer.Mint(ctx, run, "gate", client.TokenRequest{Intent: "resolve", Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	oldKid := kidOf(t, old.Token)

	resp, err := http.Post(gatewayURL()+"/local-rotation", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var rotated struct {
		ActiveKid string `json:"activeKid"`
	}
	err = json.NewDecoder(resp.Body).Decode(&rotated)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || rotated.ActiveKid == "" || rotated.ActiveKid == oldKid {
		t.Fatalf("rotation: %d %+v %v; the old kid %s", resp.StatusCode, rotated, err, oldKid)
	}

	anyone := client.New(gatewayURL())
	if _, err := anyone.Inspect(ctx, old.Token); err != nil {
		t.Fatalf("the token signed before the rotation no longer inspects: %v", err)
	}
	// The functions trust their read of the keyring for KeyringCacheSeconds (2 locally): a
	// token minted after that carries the new kid.
	fresh := time.NewTicker(200 * time.Millisecond)
	defer fresh.Stop()
	for deadline := time.Now().Add(30 * time.Second); ; <-fresh.C {
		tok, err := engine.Mint(ctx, run, "gate", client.TokenRequest{Intent: "inspect"})
		if err != nil {
			t.Fatal(err)
		}
		if kidOf(t, tok.Token) == rotated.ActiveKid {
			if _, err := anyone.Inspect(ctx, tok.Token); err != nil {
				t.Fatalf("a token of the new kid does not inspect: %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the rotation, new tokens still carry %s, not %s", kidOf(t, tok.Token), rotated.ActiveKid)
		}
	}
	if _, err := anyone.ResolveByToken(ctx, old.Token, map[string]any{"action": "accept", "decidedAt": "2026-12-03T09:00:00Z"}); err != nil {
		t.Fatalf("the token signed before the rotation no longer resolves: %v", err)
	}
}

// kidOf is the kid a token was signed under: its third segment (ow2.<alg>.<kid>.<payload>.<mac>).
func kidOf(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 5 {
		t.Fatalf("a token of %d segments", len(parts))
	}
	return parts[2]
}
