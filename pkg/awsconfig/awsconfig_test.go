package awsconfig_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/interrupthost/interrupthost/pkg/awsconfig"
)

// TestRetryerHasNoQuota: however many calls of one process have failed, the functions' retryer
// still retries the next (the SDK's default empties its process-wide bucket and then fails every
// call of the sandbox without sending it), and it retries each call at most RetryAttempts times
// with backoffs within RetryMaxBackoff.
func TestRetryerHasNoQuota(t *testing.T) {
	ctx := context.Background()
	failure := errors.New("a 5xx")
	exhausted := func(r interface {
		GetRetryToken(context.Context, error) (func(error) error, error)
	}) int {
		for i := range 10_000 {
			if _, err := r.GetRetryToken(ctx, failure); err != nil {
				return i
			}
		}
		return -1
	}
	if n := exhausted(retry.NewStandard()); n < 0 {
		t.Fatalf("the SDK's default retryer never ran out: the test shows nothing")
	} else {
		t.Logf("the SDK's default retryer refuses retries after %d failures", n)
	}
	r := awsconfig.Retryer()
	if n := exhausted(r); n >= 0 {
		t.Errorf("the functions' retryer refused a retry after %d failures", n)
	}
	if r.MaxAttempts() != awsconfig.RetryAttempts {
		t.Errorf("%d attempts, want %d", r.MaxAttempts(), awsconfig.RetryAttempts)
	}
	for attempt := 1; attempt < awsconfig.RetryAttempts; attempt++ {
		if d, err := r.RetryDelay(attempt, failure); err != nil || d > awsconfig.RetryMaxBackoff {
			t.Errorf("attempt %d: backoff %s %v, want at most %s", attempt, d, err, awsconfig.RetryMaxBackoff)
		}
	}
}

// TestLoad: the configuration is Lambda's region and credentials, refused without them, and
// each service client finds its endpoint in its own standard variable, else in the general one.
func TestLoad(t *testing.T) {
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKID")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "token")
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:8000")
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", "") // the local stack sets it
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9999")
	ctx := context.Background()
	cfg, err := awsconfig.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID != "AKID" || creds.SecretAccessKey != "secret" || creds.SessionToken != "token" || cfg.Region != "eu-west-1" {
		t.Errorf("region %q, credentials %+v %v", cfg.Region, creds, err)
	}
	if got := aws.ToString(dynamodb.NewFromConfig(cfg).Options().BaseEndpoint); got != "http://127.0.0.1:8000" {
		t.Errorf("DynamoDB's endpoint %q, want its own variable's", got)
	}
	if got := aws.ToString(secretsmanager.NewFromConfig(cfg).Options().BaseEndpoint); got != "http://127.0.0.1:9999" {
		t.Errorf("Secrets Manager's endpoint %q, want AWS_ENDPOINT_URL's", got)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	if _, err := awsconfig.Load(ctx); err == nil {
		t.Error("loaded without credentials")
	}
}
