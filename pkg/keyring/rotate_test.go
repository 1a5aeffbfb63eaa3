package keyring_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/testkeys"
	"github.com/interrupthost/interrupthost/pkg/keyring"
	"github.com/interrupthost/interrupthost/pkg/token"
)

func TestNextRetiresOnlyAfterRetain(t *testing.T) {
	day := 24 * time.Hour
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	retain := 30 * day
	v, err := keyring.Next([]byte(`{"bootstrap":"CloudFormation's placeholder"}`), clock, retain)
	if err != nil {
		t.Fatal(err)
	}
	if active, all := testkeys.Kids(t, v); active != "k20260101t000000" || len(all) != 1 {
		t.Fatalf("first keyring: %s %v", active, all)
	}
	steps := []struct {
		after time.Duration
		want  []string
	}{
		{20 * day, []string{"k20260101t000000", "k20260121t000000"}},
		{20 * day, []string{"k20260101t000000", "k20260121t000000", "k20260210t000000"}}, // the first was superseded 20 days ago
		{15 * day, []string{"k20260121t000000", "k20260210t000000", "k20260225t000000"}}, // now 35 days ago: retired
	}
	for i, s := range steps {
		clock = clock.Add(s.after)
		if v, err = keyring.Next(v, clock, retain); err != nil {
			t.Fatal(err)
		}
		active, all := testkeys.Kids(t, v)
		if !slices.Equal(all, s.want) || active != s.want[len(s.want)-1] {
			t.Errorf("rotation %d: active %s kids %v, want %v", i+1, active, all, s.want)
		}
	}
	legacy := localaws.Keyring("k20260101t000000", map[string]string{"k20260101t000000": localaws.Key(), "legacy": localaws.Key()})
	clock = t0.Add(400 * day)
	if v, err = keyring.Next([]byte(legacy), clock, retain); err != nil {
		t.Fatal(err)
	}
	if _, all := testkeys.Kids(t, v); !slices.Contains(all, "legacy") {
		t.Errorf("rotation dropped the legacy key: %v", all)
	}
}

// TestRotationOrphansNoToken: a kid of any name (the local stack's dev-..., one an operator
// added by hand) keeps verifying for Retain after it stopped being active, so a token signed
// under it before a rotation still verifies after it.
func TestRotationOrphansNoToken(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	clock := t0
	retain := 7 * 24 * time.Hour
	v := []byte(localaws.Keyring("dev-abc123", map[string]string{"dev-abc123": localaws.Key(), "ops-added": localaws.Key()}))
	_, keys, err := keyring.Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	claims := token.Claims{Tenant: "acme", RunID: "r1", NodeID: "n1", InterruptID: "int_1", Intent: token.IntentResolve, Sub: "alice", ExpiresAt: t0.Add(7 * 24 * time.Hour).UnixMilli()}
	tok, _, err := token.Mint(ctx, testkeys.Static{ActiveKid: "dev-abc123", Keys: keys}, claims, t0)
	if err != nil {
		t.Fatal(err)
	}
	verifies := func(raw []byte) bool {
		active, keys, err := keyring.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		_, err = token.Verify(ctx, testkeys.Static{ActiveKid: active, Keys: keys}, tok)
		return err == nil
	}
	steps := []struct {
		after time.Duration
		want  []string
	}{
		{time.Hour, []string{"dev-abc123", "k20261201t080000", "ops-added"}},
		{6 * 24 * time.Hour, []string{"dev-abc123", "k20261201t080000", "k20261207t080000", "ops-added"}},  // retired 6 days ago
		{24*time.Hour + time.Second, []string{"k20261201t080000", "k20261207t080000", "k20261208t080001"}}, // 7 days and a second
	}
	for i, s := range steps {
		clock = clock.Add(s.after)
		if v, err = keyring.Next(v, clock, retain); err != nil {
			t.Fatal(err)
		}
		if _, all := testkeys.Kids(t, v); !slices.Equal(all, s.want) {
			t.Fatalf("rotation %d: kids %v, want %v", i+1, all, s.want)
		}
		if kept := slices.Contains(s.want, "dev-abc123"); verifies(v) != kept {
			t.Errorf("rotation %d: the token minted under dev-abc123 verifies %v, want %v", i+1, !kept, kept)
		}
	}
}
