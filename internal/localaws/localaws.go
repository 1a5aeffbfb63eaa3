// Package localaws connects tests and local tools to the local stack's AWS APIs (dynalite for
// DynamoDB, moto for Secrets Manager) through the real SDK clients, built as the functions build
// theirs, and gives tests fresh tables and secrets there. A test that needs the stack and cannot
// reach it fails; under `go test -short` it is skipped, so the pure tier runs on any clone.
package localaws

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/interrupthost/interrupthost/internal/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
)

// Where the local stack serves each API, unless AWS_ENDPOINT_URL_<SERVICE> says otherwise.
const (
	DynamoDBAddr       = "127.0.0.1:8000"
	SecretsManagerAddr = "127.0.0.1:5001"
)

// TableLogicalID is the run-log table's resource in template.yaml.
const TableLogicalID = "RunLogTable"

// Config is the one aws.Config of local clients: a fixed region and local credentials, whatever
// the environment holds, so that no local call can reach a real account.
func Config() aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	}
}

func endpoint(env, addr string) *string {
	if v := os.Getenv(env); v != "" {
		return aws.String(v)
	}
	return aws.String("http://" + addr)
}

// DynamoDB is a client of the local DynamoDB API, built by dynamo.NewClient as the functions'.
func DynamoDB(optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	base := func(o *dynamodb.Options) { o.BaseEndpoint = endpoint("AWS_ENDPOINT_URL_DYNAMODB", DynamoDBAddr) }
	return dynamo.NewClient(Config(), append([]func(*dynamodb.Options){base}, optFns...)...)
}

// SecretsManager is a client of the local Secrets Manager API.
func SecretsManager(optFns ...func(*secretsmanager.Options)) *secretsmanager.Client {
	base := func(o *secretsmanager.Options) {
		o.BaseEndpoint = endpoint("AWS_ENDPOINT_URL_SECRETS_MANAGER", SecretsManagerAddr)
	}
	return secretsmanager.NewFromConfig(Config(), append([]func(*secretsmanager.Options){base}, optFns...)...)
}

// NeedsStack skips tb under `go test -short`: the test talks to the local stack.
func NeedsStack(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs the local stack (make test runs it)")
	}
}

// NewTable creates an empty run-log table, from the table definition in template.yaml, under a
// fresh name, and deletes it when the test ends.
func NewTable(tb testing.TB, optFns ...func(*dynamodb.Options)) (*dynamodb.Client, string) {
	tb.Helper()
	NeedsStack(tb)
	db := DynamoDB(optFns...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := db.ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
		tb.Fatalf("localaws: the DynamoDB API is not reachable (start it with `make run`, or run `make test`): %v", err)
	}
	path, err := samtemplate.Find(".")
	if err != nil {
		tb.Fatal(err)
	}
	tmpl, err := samtemplate.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	name := "test-" + strings.ToLower(rand.Text())
	in, err := tmpl.CreateTableInput(TableLogicalID, name)
	if err != nil {
		tb.Fatal(err)
	}
	// The name is fresh: if it exists, an SDK retry of this very call made it.
	var exists *types.ResourceInUseException
	if _, err := db.CreateTable(ctx, in); err != nil && !errors.As(err, &exists) {
		tb.Fatalf("localaws: create table: %v", err)
	}
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, 10*time.Second,
		func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 10 * time.Millisecond }); err != nil {
		tb.Fatalf("localaws: table %s: %v", name, err)
	}
	tb.Cleanup(func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name})
	})
	return db, name
}

// Key is a fresh random 32-byte key, base64 as a keyring secret holds it.
func Key() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// Keyring renders a keyring secret value: the active kid and the keys by kid.
func Keyring(active string, keys map[string]string) string {
	b, _ := json.Marshal(map[string]any{"active": active, "keys": keys})
	return string(b)
}

// NewSecret creates a secret holding value under a fresh name and deletes it when the test ends.
func NewSecret(tb testing.TB, value string, optFns ...func(*secretsmanager.Options)) (*secretsmanager.Client, string) {
	tb.Helper()
	NeedsStack(tb)
	c := SecretsManager(optFns...)
	name := "test/keyring-" + rand.Text()
	// The name is fresh: if it exists, an SDK retry of this very call made it.
	var exists *smtypes.ResourceExistsException
	if _, err := c.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{Name: &name, SecretString: &value}); err != nil && !errors.As(err, &exists) {
		tb.Fatalf("localaws: the Secrets Manager API is not reachable (start it with `make run`, or run `make test`): %v", err)
	}
	tb.Cleanup(func() {
		_, _ = c.DeleteSecret(context.Background(), &secretsmanager.DeleteSecretInput{SecretId: &name, ForceDeleteWithoutRecovery: aws.Bool(true)})
	})
	return c, name
}

// PutSecret replaces a secret's value, as a rotation would: the new version holds AWSCURRENT,
// and no other does. Secrets Manager moves the stage so; moto moves it from its default version
// only, which a rotation's UpdateSecretVersionStage does not update (moto 5.2.5), so after a
// rotation (POST /local-rotation) two versions would hold it, and moving it onto a version that
// holds it already lists it there twice (a later rotation then removes one and the version stays
// current: TestRotationOrphansNoToken failed on every run after the first in one stack). So the
// version is put under a label of its own, and AWSCURRENT moved onto it from every version that
// holds it, as a rotation's finishSecret moves it.
func PutSecret(tb testing.TB, c *secretsmanager.Client, name, value string) {
	tb.Helper()
	ctx := context.Background()
	put, err := c.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: &name, SecretString: &value, VersionStages: []string{"LOCALPUT"}})
	if err != nil {
		tb.Fatal(err)
	}
	desc, err := c.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: &name})
	if err != nil {
		tb.Fatal(err)
	}
	for id, stages := range desc.VersionIdsToStages {
		if id == aws.ToString(put.VersionId) || !slices.Contains(stages, "AWSCURRENT") {
			continue
		}
		if _, err := c.UpdateSecretVersionStage(ctx, &secretsmanager.UpdateSecretVersionStageInput{
			SecretId: &name, VersionStage: aws.String("AWSCURRENT"), RemoveFromVersionId: aws.String(id), MoveToVersionId: put.VersionId,
		}); err != nil {
			tb.Fatal(err)
		}
	}
}
