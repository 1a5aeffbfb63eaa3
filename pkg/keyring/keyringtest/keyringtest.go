// Package keyringtest gives tests a keyring secret on a real Secrets Manager API (the local moto
// server, or whatever AWS_ENDPOINT_URL_SECRETS_MANAGER names). A test that cannot reach the API
// fails: it never skips.
package keyringtest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
)

// DefaultEndpoint is where the local stack serves the Secrets Manager API.
const DefaultEndpoint = "http://127.0.0.1:5001"

// Client is a Secrets Manager client for the local stack.
func Client(optFns ...func(*secretsmanager.Options)) (*secretsmanager.Client, error) {
	opts := []func(*config.LoadOptions) error{config.WithRegion("us-east-1")}
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		return nil, err
	}
	if os.Getenv("AWS_ENDPOINT_URL_SECRETS_MANAGER") == "" {
		optFns = append([]func(*secretsmanager.Options){func(o *secretsmanager.Options) { o.BaseEndpoint = aws.String(DefaultEndpoint) }}, optFns...)
	}
	return secretsmanager.NewFromConfig(cfg, optFns...), nil
}

// Key is a fresh random 32-byte key, base64 as the secret holds it.
func Key() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// Value renders a keyring secret value.
func Value(active string, keys map[string]string) string {
	b, _ := json.Marshal(map[string]any{"active": active, "keys": keys})
	return string(b)
}

// NewSecret creates a secret holding value under a fresh name and deletes it when the test ends.
func NewSecret(tb testing.TB, value string, optFns ...func(*secretsmanager.Options)) (*secretsmanager.Client, string) {
	tb.Helper()
	c, err := Client(optFns...)
	if err != nil {
		tb.Fatal(err)
	}
	name := "test/keyring-" + rand.Text()
	// The name is fresh: if it exists, an SDK retry of this very call made it.
	var exists *smtypes.ResourceExistsException
	if _, err := c.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{Name: &name, SecretString: &value}); err != nil && !errors.As(err, &exists) {
		tb.Fatalf("keyringtest: the Secrets Manager API is not reachable (start it with `make run`, or run `make test`): %v", err)
	}
	tb.Cleanup(func() {
		_, _ = c.DeleteSecret(context.Background(), &secretsmanager.DeleteSecretInput{SecretId: &name, ForceDeleteWithoutRecovery: aws.Bool(true)})
	})
	return c, name
}

// Put replaces the secret's value, as a rotation would.
func Put(tb testing.TB, c *secretsmanager.Client, name, value string) {
	tb.Helper()
	if _, err := c.PutSecretValue(context.Background(), &secretsmanager.PutSecretValueInput{SecretId: &name, SecretString: &value}); err != nil {
		tb.Fatal(err)
	}
}
