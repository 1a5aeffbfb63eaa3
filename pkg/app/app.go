// Package app is the composition root every function shares: it reads the deployment's
// configuration from the environment once, at init, and builds the clients and the API over
// them. Functions call it and hand one of the API's handlers to lambda.Start.
package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/dynamostream"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/identity"
	"github.com/interrupthost/interrupthost/pkg/keyring"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/pkg/secretsmanager"
	"github.com/interrupthost/interrupthost/pkg/signin"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// Environment variables the functions read (set by template.yaml).
const (
	EnvTable = "TABLE_NAME"
	// EnvPrincipalClaim names the claim that is the caller's principal (identity.PrincipalClaims);
	// sub when unset.
	EnvPrincipalClaim = "PRINCIPAL_CLAIM"
	EnvTenantClaim    = "TENANT_CLAIM"
	// EnvScopePrefix is what the identity provider puts before every scope name.
	EnvScopePrefix  = "SCOPE_PREFIX"
	EnvCapabilities = "CAPABILITIES"
	EnvKeyring      = "KEYRING_SECRET_ID"
	EnvRefKinds     = "REF_KINDS"
	EnvOverride     = "OVERRIDE_PRINCIPALS"
	EnvGroupsClaim  = "GROUPS_CLAIM"
	EnvRolesClaim   = "ROLES_CLAIM"
	// EnvWebhookSecrets is the name prefix of the webhook endpoints' secrets.
	EnvWebhookSecrets = "WEBHOOK_SECRET_PREFIX"
	EnvInboxRetention = "INBOX_RETENTION_DAYS"
	EnvRetention      = "RETENTION_DAYS"
	EnvEscalation     = "ESCALATION_THRESHOLD"
	// EnvSubscriptionSecrets is the name prefix of the subscriptions' signing secrets.
	EnvSubscriptionSecrets = "SUBSCRIPTION_SECRET_PREFIX"
	// EnvAllowPrivateTargets ("true") lets subscriptions deliver to private addresses and http.
	EnvAllowPrivateTargets = "ALLOW_PRIVATE_DELIVERY_TARGETS"
	// EnvPublicBaseURL is where the API is reached from outside: approval links start with it.
	// The functions the API invokes may be given none (then each request's domain is the
	// base); the others must be, since no request tells them (docs/design.md, "Deployment").
	EnvPublicBaseURL = "PUBLIC_BASE_URL"
	// EnvOIDCIssuer and EnvOIDCClientID are the identity provider approvers sign in with on the
	// approval page, and its app client.
	EnvOIDCIssuer   = "OIDC_ISSUER"
	EnvOIDCClientID = "OIDC_CLIENT_ID"
	// EnvStackName is the stack's name, which tags the secrets the functions create.
	EnvStackName = "STACK_NAME"
	// EnvMetricsNamespace is the CloudWatch namespace of the functions' metrics; without it
	// they publish none.
	EnvMetricsNamespace = "METRICS_NAMESPACE"
	// EnvRedriveSegments is how many segments redrive-stream's Scan of the table reads at once.
	EnvRedriveSegments = "REDRIVE_SCAN_SEGMENTS"
)

// DefaultRedriveSegments is redrive-stream's Scan parallelism unless REDRIVE_SCAN_SEGMENTS says.
const DefaultRedriveSegments = 8

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

// loadConfig is the SDK's configuration of every client a function builds, with Retryer.
func loadConfig(ctx context.Context) (aws.Config, error) {
	return config.LoadDefaultConfig(ctx, config.WithRetryer(Retryer))
}

// Option adds a dependency that only some functions have.
type Option func(ctx context.Context, cfg aws.Config, h *host.Config) error

// withKeyring loads the token keyring from the secret KEYRING_SECRET_ID names; the function
// refuses to start when the keyring is missing or unusable (a key under 32 bytes, an active kid
// that is not a key). Only functions that mint or verify tokens take it, and only they may read
// the secret.
func withKeyring(ctx context.Context, cfg aws.Config, h *host.Config) error {
	id := os.Getenv(EnvKeyring)
	if id == "" {
		return errors.New("app: " + EnvKeyring + " is not set")
	}
	k, err := keyring.New(ctx, secretsmanager.Keyring{Client: secretsmanager.NewClient(cfg), SecretID: id}, keyring.Options{})
	if err != nil {
		return err
	}
	h.Keys = k
	return nil
}

// withWebhookSecrets keeps webhook endpoints' secrets in Secrets Manager, under the prefix
// WEBHOOK_SECRET_PREFIX names (the only secrets the functions' roles may touch), cached in
// memory. Only the webhook functions take it.
func withWebhookSecrets(ctx context.Context, cfg aws.Config, h *host.Config) error {
	prefix := os.Getenv(EnvWebhookSecrets)
	if prefix == "" {
		return errors.New("app: " + EnvWebhookSecrets + " is not set")
	}
	h.Secrets = webhook.NewCache(secretsmanager.Secrets{Client: secretsmanager.NewClient(cfg), Prefix: prefix, Stack: os.Getenv(EnvStackName)}, h.Now)
	return nil
}

// hostConfig reads the host's behaviour from the environment and refuses what it cannot honour.
func hostConfig() (host.Config, error) {
	log := logger()
	hc := host.Config{
		Capabilities:       list(os.Getenv(EnvCapabilities)),
		RefKinds:           list(os.Getenv(EnvRefKinds)),
		OverridePrincipals: list(os.Getenv(EnvOverride)),
		Metrics:            meter(),
		// The operation succeeded; its run's reads stay longer until a checkpoint is written.
		OnCheckpointError: func(k runlog.Key, seq int64, err error) {
			log.Warn("checkpoint not written", "tenant", k.Tenant, "runId", k.RunID, "seq", seq, "error", err.Error())
		},
	}
	if v := os.Getenv(EnvEscalation); v != "" {
		t, err := strconv.ParseFloat(v, 64)
		// The range a run may configure (host.Configure) and the template admits.
		if err != nil || t < 0 || t > 1 {
			return hc, fmt.Errorf("app: %s=%q is not a threshold from 0 to 1", EnvEscalation, v)
		}
		hc.EscalationThreshold = &t
	}
	for env, into := range map[string]*time.Duration{EnvInboxRetention: &hc.InboxRetention, EnvRetention: &hc.Retention} {
		if v := os.Getenv(env); v != "" {
			days, err := strconv.Atoi(v)
			if err != nil || days < 1 {
				return hc, fmt.Errorf("app: %s=%q is not a number of days", env, v)
			}
			*into = time.Duration(days) * 24 * time.Hour
		}
	}
	return hc, host.CheckConfig(hc)
}

func logger() *slog.Logger { return slog.New(slog.NewJSONHandler(os.Stdout, nil)) }

// meter writes the function's metrics beside its log lines, under METRICS_NAMESPACE.
func meter() *metrics.Log {
	ns := os.Getenv(EnvMetricsNamespace)
	if ns == "" {
		return nil
	}
	return metrics.New(os.Stdout, ns)
}

// Serve builds the handler of the HTTP function named function (its folder under functions/)
// from the environment: what apigw.Operations say its routes need, and nothing else, so a
// function holds only the clients, and its role only the permissions, its routes use. The SDK
// finds its region, credentials and endpoints (AWS_ENDPOINT_URL_DYNAMODB locally) the standard
// way; nothing here is local-only.
func Serve(ctx context.Context, function string) (apigw.Handler, error) {
	needs, err := apigw.NeedsOf(function)
	if err != nil {
		return nil, err
	}
	hc, err := hostConfig()
	if err != nil {
		return nil, err
	}
	opts, err := apiOptions()
	if err != nil {
		return nil, err
	}
	if opts.PublicBaseURL, err = publicBase(true); err != nil {
		return nil, err
	}
	opts.Discovery = host.DiscoveryOf(hc)
	opts.Metrics = hc.Metrics
	var h *host.Host
	if needs&apigw.NeedsRunLog != 0 {
		var with []Option
		if needs&apigw.NeedsKeyring != 0 {
			with = append(with, withKeyring)
		}
		if needs&apigw.NeedsWebhookSecrets != 0 {
			with = append(with, withWebhookSecrets)
		}
		if h, err = newHost(ctx, &hc, with...); err != nil {
			return nil, err
		}
	}
	if needs&apigw.NeedsSignIn != 0 {
		if opts.SignIn, err = signIn(hc, opts); err != nil {
			return nil, err
		}
	}
	if needs&apigw.NeedsSubscriptions != 0 {
		o, err := newOutbound(ctx)
		if err != nil {
			return nil, err
		}
		opts.Subscriptions = &outbound.Subscriptions{Store: o.store, Secrets: o.secrets, Targets: o.targets}
		if needs&apigw.NeedsDelivery != 0 {
			// A resend's links are under the request's base (apigw.Options.PublicBaseURL).
			if opts.Resender, err = delivererOn(ctx, o, opts.PublicBaseURL); err != nil {
				return nil, err
			}
		}
	}
	return apigw.New(h, logger(), opts).Function(function)
}

// MustServe is Serve for a function's init: a function that cannot be configured must not start.
func MustServe(ctx context.Context, function string) apigw.Handler {
	h, err := Serve(ctx, function)
	exitOn(err)
	return h
}

// signIn is the approval page's sign-in with the identity provider OIDC_ISSUER names (the HTTP
// API's JwtIssuer) for the app client OIDC_CLIENT_ID, coming back to the public base's
// /signin/callback (apigw.Options.PublicBaseURL, else the request's domain); the keyring signs
// its cookies.
func signIn(hc host.Config, opts apigw.Options) (*signin.Flow, error) {
	return signin.New(signin.Config{
		Issuer: os.Getenv(EnvOIDCIssuer), ClientID: os.Getenv(EnvOIDCClientID),
		Keys: hc.Keys, TenantClaim: opts.TenantClaim, GroupsClaim: opts.GroupsClaim, RolesClaim: opts.RolesClaim,
		PrincipalClaim: opts.PrincipalClaim,
	})
}

// publicBase is PUBLIC_BASE_URL, checked: where approvers reach the API. optional admits it
// unset, for the functions the API invokes, whose requests say where they came in.
func publicBase(optional bool) (string, error) {
	base := os.Getenv(EnvPublicBaseURL)
	if base == "" && optional {
		return "", nil
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("app: %s=%q is not an http(s) URL", EnvPublicBaseURL, base)
	}
	return base, nil
}

// apiOptions are the claims' names the deployment chose; a principal claim the host does not
// know stops the function, which would otherwise read every caller as nobody.
func apiOptions() (apigw.Options, error) {
	principal, err := identity.PrincipalClaim(os.Getenv(EnvPrincipalClaim))
	if err != nil {
		return apigw.Options{}, fmt.Errorf("app: %s: %w", EnvPrincipalClaim, err)
	}
	return apigw.Options{
		PrincipalClaim: principal, TenantClaim: os.Getenv(EnvTenantClaim), ScopePrefix: os.Getenv(EnvScopePrefix),
		GroupsClaim: os.Getenv(EnvGroupsClaim), RolesClaim: os.Getenv(EnvRolesClaim),
	}, nil
}

// newHost builds the host over the run-log table TABLE_NAME names, with hc (read by
// hostConfig) completed by opts.
func newHost(ctx context.Context, hc *host.Config, opts ...Option) (*host.Host, error) {
	h, _, err := newHostOn(ctx, hc, opts...)
	return h, err
}

// newHostOn is newHost, and the table it is built over.
func newHostOn(ctx context.Context, hc *host.Config, opts ...Option) (*host.Host, *dynamo.Table, error) {
	table := os.Getenv(EnvTable)
	if table == "" {
		return nil, nil, errors.New("app: " + EnvTable + " is not set")
	}
	cfg, err := loadConfig(ctx)
	if err != nil {
		return nil, nil, err
	}
	schemas, err := schema.Load()
	if err != nil {
		return nil, nil, err
	}
	for _, opt := range opts {
		if err := opt(ctx, cfg, hc); err != nil {
			return nil, nil, err
		}
	}
	runs := dynamo.NewTable(dynamo.NewClient(cfg), table)
	return host.New(host.StoresOf(runs), schemas, *hc), runs, nil
}

// outboundDeps are what the outbound functions share: the table's stores, the subscriptions'
// secrets and the delivery targets' rule.
type outboundDeps struct {
	cfg     aws.Config
	store   *dynamo.Outbound
	runs    *dynamo.Table
	secrets *webhook.Cache
	targets outbound.Targets
}

func newOutbound(ctx context.Context) (outboundDeps, error) {
	var o outboundDeps
	table, prefix := os.Getenv(EnvTable), os.Getenv(EnvSubscriptionSecrets)
	if table == "" || prefix == "" {
		return o, errors.New("app: " + EnvTable + " and " + EnvSubscriptionSecrets + " must be set")
	}
	allow, err := strconv.ParseBool(cmp.Or(os.Getenv(EnvAllowPrivateTargets), "false"))
	if err != nil {
		return o, fmt.Errorf("app: %s=%q is not true or false", EnvAllowPrivateTargets, os.Getenv(EnvAllowPrivateTargets))
	}
	if o.cfg, err = loadConfig(ctx); err != nil {
		return o, err
	}
	db := dynamo.NewClient(o.cfg)
	o.store, o.runs = dynamo.NewOutbound(db, table), dynamo.NewTable(db, table)
	o.secrets = webhook.NewCache(secretsmanager.Secrets{Client: secretsmanager.NewClient(o.cfg), Prefix: prefix, Stack: os.Getenv(EnvStackName)}, nil)
	o.targets = outbound.Targets{AllowPrivate: allow}
	return o, nil
}

// deliverer builds the deliverer of deliver-events and retry-deliveries: it signs with the
// subscriptions' secrets and mints approval links with the keyring, under PUBLIC_BASE_URL.
func deliverer(ctx context.Context) (*outbound.Deliverer, error) {
	o, err := newOutbound(ctx)
	if err != nil {
		return nil, err
	}
	base, err := publicBase(false)
	if err != nil {
		return nil, err
	}
	return delivererOn(ctx, o, base)
}

// delivererOn is the deliverer over o's clients, its links under base.
func delivererOn(ctx context.Context, o outboundDeps, base string) (*outbound.Deliverer, error) {
	var hc host.Config
	if err := withKeyring(ctx, o.cfg, &hc); err != nil {
		return nil, err
	}
	return &outbound.Deliverer{
		Store: o.store, Log: o.runs, Secrets: o.secrets, Client: outbound.NewHTTPClient(o.targets.AllowPrivate),
		Links: outbound.Links{Keys: hc.Keys, BaseURL: base}, Logger: logger(), Metrics: meter(),
	}, nil
}

// MustDeliver is deliver-events' handler: the run-log table's stream, delivered.
func MustDeliver(ctx context.Context) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	d, err := deliverer(ctx)
	exitOn(err)
	return dynamostream.Handler(d, logger())
}

// MustRedrive is redrive-stream's handler: the stream's dead-letter queue, each failed batch's
// commits read back from the table and delivered (dynamostream.Redriver).
func MustRedrive(ctx context.Context) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	o, err := newOutbound(ctx)
	exitOn(err)
	base, err := publicBase(false)
	exitOn(err)
	d, err := delivererOn(ctx, o, base)
	exitOn(err)
	segments, err := redriveSegments()
	exitOn(err)
	return dynamostream.Redriver(d, o.runs, segments, logger())
}

// MustReadModels is read-models' handler: the table's stream and its own dead-letter queue,
// each run they name reindexed from its log (dynamostream.ReadModels, host.Host.Reindex). It
// reads the run log and writes the read models' items, nothing else.
func MustReadModels(ctx context.Context) func(context.Context, json.RawMessage) (dynamostream.BatchResponse, error) {
	hc, err := hostConfig()
	exitOn(err)
	h, runs, err := newHostOn(ctx, &hc)
	exitOn(err)
	segments, err := redriveSegments()
	exitOn(err)
	return dynamostream.ReadModels(h, runs, segments, logger(), hc.Metrics, nil)
}

// redriveSegments is REDRIVE_SCAN_SEGMENTS, checked: how many segments a redrive's Scan reads at
// once.
func redriveSegments() (int, error) {
	segments, err := strconv.Atoi(cmp.Or(os.Getenv(EnvRedriveSegments), strconv.Itoa(DefaultRedriveSegments)))
	if err == nil && (segments < 1 || segments > 1_000_000) {
		err = errors.New("out of range")
	}
	if err != nil {
		return 0, fmt.Errorf("app: %s=%q is not a number of segments from 1 to 1000000: %w", EnvRedriveSegments, os.Getenv(EnvRedriveSegments), err)
	}
	return segments, nil
}

// RetryBatch bounds the retry entries one retry-deliveries invocation takes on.
const RetryBatch = 200

// MustRetryDeliveries is retry-deliveries' handler: one pass over the retries due per scheduled
// invocation (the schedule's input is not read), and one log line saying what it did when
// anything was due.
func MustRetryDeliveries(ctx context.Context) func(context.Context, json.RawMessage) (outbound.Report, error) {
	d, err := deliverer(ctx)
	exitOn(err)
	log := logger()
	return func(ctx context.Context, _ json.RawMessage) (outbound.Report, error) {
		r, err := d.Retries(ctx, RetryBatch)
		attrs := []any{"due", r.Retries, "delivered", r.Delivered, "retrying", r.Retrying, "failed", r.Failed}
		switch {
		case err != nil:
			log.Error("retries", append(attrs, "error", err.Error())...)
		case r.Retries > 0:
			log.Info("retries", attrs...)
		}
		return r, err
	}
}

// MustSweep is the expiry-sweep function's handler: one sweep per scheduled invocation (the
// schedule's input is not read), bounded by the invocation's deadline, and one log line saying
// what it did.
func MustSweep(ctx context.Context) func(context.Context, json.RawMessage) (host.SweepReport, error) {
	hc, err := hostConfig()
	exitOn(err)
	h, err := newHost(ctx, &hc)
	exitOn(err)
	log := logger()
	return func(ctx context.Context, _ json.RawMessage) (host.SweepReport, error) {
		r, err := h.Sweep(ctx)
		attrs := []any{"from", r.From, "to", r.To, "entries", r.Entries, "expired", r.Expired, "deferred", r.Deferred, "tenants", r.Tenants, "caughtUp", r.CaughtUp, "lagSeconds", r.LagSeconds}
		if err != nil {
			log.Error("sweep", append(attrs, "error", err.Error())...)
		} else {
			log.Info("sweep", attrs...)
		}
		return r, err
	}
}

func exitOn(err error) {
	if err != nil {
		slog.Error("init failed", "error", err)
		os.Exit(1)
	}
}

// RotationHandler is the rotate-keys function: Secrets Manager's rotation of the keyring, which
// keeps superseded kids for the longest token lifetime (plus the keyring cache's TTL) so that no
// outstanding token is orphaned.
func RotationHandler(ctx context.Context) (func(context.Context, events.SecretsManagerSecretRotationEvent) error, error) {
	cfg, err := loadConfig(ctx)
	if err != nil {
		return nil, err
	}
	r := secretsmanager.Rotator{Client: secretsmanager.NewClient(cfg), Retain: host.MaxTokenTTL + time.Hour}
	log := logger()
	return func(ctx context.Context, ev events.SecretsManagerSecretRotationEvent) error {
		err := r.Rotate(ctx, ev.Step, ev.SecretID, ev.ClientRequestToken)
		if err != nil {
			log.Error("rotation step failed", "step", ev.Step, "error", err)
		} else {
			log.Info("rotation step done", "step", ev.Step)
		}
		return err
	}, nil
}

func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
