// Package dynamotest gives integration tests a fresh table on a real DynamoDB API (the local
// dynalite server, or whatever AWS_ENDPOINT_URL_DYNAMODB names), created from the table
// definition in template.yaml. A test that cannot reach the API fails: it never skips.
package dynamotest

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/infra/local/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
)

// DefaultEndpoint is where the local stack serves the DynamoDB API.
const DefaultEndpoint = "http://127.0.0.1:8000"

// TableLogicalID is the run-log table's resource in template.yaml.
const TableLogicalID = "RunLogTable"

// Config is an aws.Config for the local stack: the endpoint from AWS_ENDPOINT_URL_DYNAMODB (or
// DefaultEndpoint), and static credentials when the environment has none.
func Config() (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{config.WithRegion("us-east-1")}
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		opts = append(opts, config.WithBaseEndpoint(DefaultEndpoint))
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	return config.LoadDefaultConfig(context.Background(), opts...)
}

// Client is a DynamoDB client for the local stack, built as the functions build theirs.
func Client(optFns ...func(*dynamodb.Options)) (*dynamodb.Client, error) {
	cfg, err := Config()
	if err != nil {
		return nil, err
	}
	return dynamo.NewClient(cfg, optFns...), nil
}

// NewTable creates an empty run-log table under a fresh name and deletes it when the test ends.
func NewTable(tb testing.TB, optFns ...func(*dynamodb.Options)) (*dynamodb.Client, string) {
	tb.Helper()
	db, err := Client(optFns...)
	if err != nil {
		tb.Fatalf("dynamotest: aws config: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := db.ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
		tb.Fatalf("dynamotest: the DynamoDB API is not reachable (start it with `make run`, or run `make test`): %v", err)
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
		tb.Fatalf("dynamotest: create table: %v", err)
	}
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, 10*time.Second,
		func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 10 * time.Millisecond }); err != nil {
		tb.Fatalf("dynamotest: table %s: %v", name, err)
	}
	tb.Cleanup(func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name})
	})
	return db, name
}
