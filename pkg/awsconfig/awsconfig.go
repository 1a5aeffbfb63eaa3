// Package awsconfig is the AWS SDK's configuration of every client the functions build: from
// what Lambda gives every sandbox, with the functions' retry policy. It links no service client
// and none of the SDK's other ways to find credentials, so each function links the clients its
// own wiring names and nothing else.
package awsconfig

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Retry policy of the functions' AWS calls (docs/design.md, "Faults"): up to RetryAttempts
// attempts, with full-jitter exponential backoff capped at RetryMaxBackoff, so that the retries
// of one call end well within a function's 10 s timeout.
const (
	RetryAttempts   = 5
	RetryMaxBackoff = 800 * time.Millisecond
)

// Retryer is the SDK's standard retryer without its client-side rate limiter. That limiter is a
// token bucket shared by the process: a burst of errors empties it, and then every call of the
// sandbox fails at once without being sent, until enough calls succeed, even after the store
// has recovered. A Lambda sandbox runs one invocation at a time, so the bucket protects nothing
// the attempt bound does not, and fails invocations the store would have served.
func Retryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = RetryAttempts
		o.MaxBackoff = RetryMaxBackoff
		o.RateLimiter = ratelimit.None
	})
}

// Load is the configuration, with Retryer, from what Lambda sets in every sandbox: AWS_REGION,
// and the execution role's credentials in AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN. It stands for the SDK's config.LoadDefaultConfig, which finds the same
// values on Lambda but links the clients of every other way to find credentials (STS, SSO, the
// console's sign-in) and the shared files' parsing: 2.5 MB of each function that a sandbox
// fetches at every cold start and never runs (docs/design.md, "Deployment"). Endpoints are the
// SDK's standard variables (Env). What it does not read, unlike the default loader: shared config
// and credentials files, container and instance credentials (a runtime that provides only those,
// as SnapStart's does, fails at init, saying so), AWS_CA_BUNDLE and
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS. The credentials are the sandbox's, as static as the default
// loader's environment provider makes them.
func Load(context.Context) (aws.Config, error) {
	region, id, secret := os.Getenv("AWS_REGION"), os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if region == "" || id == "" || secret == "" {
		return aws.Config{}, errors.New("awsconfig: AWS_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set, as Lambda sets them")
	}
	cfg := aws.Config{
		Region:        region,
		Credentials:   credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN")),
		Retryer:       Retryer,
		ConfigSources: []any{Env{}},
	}
	if v := os.Getenv("AWS_ENDPOINT_URL"); v != "" {
		cfg.BaseEndpoint = &v
	}
	return cfg, nil
}

// Env is the configuration's source of service endpoints: the SDK's standard
// AWS_ENDPOINT_URL_<SERVICE> variables (AWS_ENDPOINT_URL_DYNAMODB, ..._SECRETS_MANAGER), read as
// the SDK's own environment source reads them. The local stack points the functions at its
// stores with them; in AWS they are unset, or name a VPC endpoint.
type Env struct{}

// GetServiceBaseEndpoint answers the endpoint of the service the SDK calls sdkID ("DynamoDB",
// "Secrets Manager") if its variable is set: the method every service client looks for in the
// configuration's sources.
func (Env) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	v := os.Getenv("AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_"))
	return v, v != "", nil
}
