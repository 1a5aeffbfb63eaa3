package secretsmanager_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/testkeys"
	"github.com/interrupthost/interrupthost/pkg/keyring"
	"github.com/interrupthost/interrupthost/pkg/secretsmanager"
)

// TestRotationProtocol runs the four steps against the Secrets Manager API, twice, and checks
// that a keyring reading AWSCURRENT follows.
func TestRotationProtocol(t *testing.T) {
	c, name := localaws.NewSecret(t, `{"bootstrap":"x"}`)
	ctx := context.Background()
	clock := time.Now()
	r := secretsmanager.NewRotator(c, time.Hour)
	r.Now = func() time.Time { return clock }
	var actives []string
	for i, token := range []string{"11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"} {
		for _, step := range []string{"createSecret", "createSecret", "setSecret", "testSecret", "finishSecret", "finishSecret"} {
			if err := r.Rotate(ctx, step, name, token); err != nil {
				t.Fatalf("rotation %d %s: %v", i, step, err)
			}
		}
		out, err := c.GetSecretValue(ctx, &sdk.GetSecretValueInput{SecretId: &name, VersionStage: aws.String("AWSCURRENT")})
		if err != nil {
			t.Fatal(err)
		}
		if *out.VersionId != token {
			t.Errorf("AWSCURRENT is %s, want %s", *out.VersionId, token)
		}
		active, all := testkeys.Kids(t, []byte(*out.SecretString))
		if len(all) != i+1 {
			t.Errorf("rotation %d: kids %v", i, all)
		}
		actives = append(actives, active)
		clock = clock.Add(2 * time.Second)
	}
	k, err := keyring.New(ctx, secretsmanager.NewKeyring(c, name), keyring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if kid, _, _ := k.Active(ctx); kid != actives[1] {
		t.Errorf("keyring active %s, want %s", kid, actives[1])
	}
	if _, err := k.Key(ctx, actives[0]); err != nil {
		t.Errorf("the first kid no longer verifies: %v", err)
	}
	if err := r.Rotate(ctx, "bogusStep", name, "x"); err == nil {
		t.Error("accepted an unknown step")
	}
	var v map[string]any
	out, _ := c.GetSecretValue(ctx, &sdk.GetSecretValueInput{SecretId: &name, VersionStage: aws.String("AWSCURRENT")})
	if err := json.Unmarshal([]byte(*out.SecretString), &v); err != nil || v["bootstrap"] != nil {
		t.Errorf("the placeholder survived: %v", v)
	}
}
