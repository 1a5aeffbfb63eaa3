// Package secrets wires what lives in Secrets Manager (the token keyring, webhook endpoints' and
// subscriptions' signing secrets), the services built on it (tokens, webhooks, the page's
// sign-in, subscriptions), and the functions of outbound deliveries. Only the functions that ask
// for one link the Secrets Manager client, and only their roles may read a secret.
package secrets

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/dynamostream"
	"github.com/interrupthost/interrupthost/pkg/environ"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/keyring"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/secretsmanager"
	"github.com/interrupthost/interrupthost/pkg/signin"
	"github.com/interrupthost/interrupthost/pkg/token"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// Keys are the token keyring from the secret KEYRING_SECRET_ID names, loaded into e the first
// time they are asked for; the function refuses to start when the keyring is missing or unusable
// (a key under 32 bytes, an active kid that is not a key). Only functions that mint or verify
// tokens take it, and only they may read the secret.
func Keys(ctx context.Context, e *app.Env) (token.Keys, error) {
	if e.Keys != nil {
		return e.Keys, nil
	}
	id := os.Getenv(environ.EnvKeyring)
	if id == "" {
		return nil, errors.New("secrets: " + environ.EnvKeyring + " is not set")
	}
	cfg, err := e.AWS(ctx)
	if err != nil {
		return nil, err
	}
	k, err := keyring.New(ctx, secretsmanager.Keyring{Client: secretsmanager.NewClient(cfg), SecretID: id}, keyring.Options{})
	if err != nil {
		return nil, err
	}
	e.Keys = k
	return k, nil
}

// Tokens are the host's token operations, with the keyring.
func Tokens(ctx context.Context, e *app.Env) (*host.Tokens, error) {
	h, err := e.Host(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := Keys(ctx, e)
	if err != nil {
		return nil, err
	}
	return host.NewTokens(h, keys), nil
}

// Webhooks are the host's webhook operations, with the endpoints' secrets in Secrets Manager
// under the prefix WEBHOOK_SECRET_PREFIX names (the only secrets the functions' roles may
// touch), cached in memory.
func Webhooks(ctx context.Context, e *app.Env) (*host.Webhooks, error) {
	h, err := e.Host(ctx)
	if err != nil {
		return nil, err
	}
	prefix := os.Getenv(environ.EnvWebhookSecrets)
	if prefix == "" {
		return nil, errors.New("secrets: " + environ.EnvWebhookSecrets + " is not set")
	}
	cfg, err := e.AWS(ctx)
	if err != nil {
		return nil, err
	}
	return host.NewWebhooks(h, webhook.NewCache(secretsmanager.Secrets{Client: secretsmanager.NewClient(cfg), Prefix: prefix, Stack: os.Getenv(environ.EnvStackName)}, h.Now)), nil
}

// SignIn is the approval page's sign-in with the identity provider OIDC_ISSUER names (the HTTP
// API's JwtIssuer) for the app client OIDC_CLIENT_ID, coming back to the public base's
// /signin/callback (apigw.Options.PublicBaseURL, else the request's domain); the keyring signs
// its cookies.
func SignIn(ctx context.Context, e *app.Env) (*signin.Flow, error) {
	keys, err := Keys(ctx, e)
	if err != nil {
		return nil, err
	}
	o := e.Options
	return signin.New(signin.Config{
		Issuer: os.Getenv(environ.EnvOIDCIssuer), ClientID: os.Getenv(environ.EnvOIDCClientID),
		Keys: keys, TenantClaim: o.TenantClaim, GroupsClaim: o.GroupsClaim, RolesClaim: o.RolesClaim,
		PrincipalClaim: o.PrincipalClaim,
	})
}

// Subscriptions are the outbound subscriptions, their store and secrets, without a host; and a
// deliverer over the same clients for an operator's resend (the run log, the keyring for signed
// approval links, its links under the request's base).
func Subscriptions(ctx context.Context, e *app.Env) (*outbound.Subscriptions, *outbound.Deliverer, error) {
	o, err := newOutbound(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	d, err := delivererOn(ctx, e, o, e.Options.PublicBaseURL)
	if err != nil {
		return nil, nil, err
	}
	return &outbound.Subscriptions{Store: o.store, Secrets: o.secrets, Targets: o.targets}, d, nil
}

// outboundDeps are what the outbound functions share: the table's stores, the subscriptions'
// secrets and the delivery targets' rule.
type outboundDeps struct {
	store   *dynamo.Outbound
	runs    *dynamo.Table
	secrets *webhook.Cache
	targets outbound.Targets
}

// newOutbound builds the outbound clients.
func newOutbound(ctx context.Context, e *app.Env) (outboundDeps, error) {
	var o outboundDeps
	table, prefix := os.Getenv(environ.EnvTable), os.Getenv(environ.EnvSubscriptionSecrets)
	if table == "" || prefix == "" {
		return o, errors.New("secrets: " + environ.EnvTable + " and " + environ.EnvSubscriptionSecrets + " must be set")
	}
	allow, err := strconv.ParseBool(cmp.Or(os.Getenv(environ.EnvAllowPrivateTargets), "false"))
	if err != nil {
		return o, fmt.Errorf("secrets: %s=%q is not true or false", environ.EnvAllowPrivateTargets, os.Getenv(environ.EnvAllowPrivateTargets))
	}
	cfg, err := e.AWS(ctx)
	if err != nil {
		return o, err
	}
	db := dynamo.NewClient(cfg)
	o.store, o.runs = dynamo.NewOutbound(db, table), dynamo.NewTable(db, table)
	o.secrets = webhook.NewCache(secretsmanager.Secrets{Client: secretsmanager.NewClient(cfg), Prefix: prefix, Stack: os.Getenv(environ.EnvStackName)}, nil)
	o.targets = outbound.Targets{AllowPrivate: allow}
	return o, nil
}

// deliverer builds the deliverer of deliver-events and retry-deliveries: it signs with the
// subscriptions' secrets and mints approval links with the keyring, under PUBLIC_BASE_URL.
func deliverer(ctx context.Context, e *app.Env) (*outbound.Deliverer, outboundDeps, error) {
	o, err := newOutbound(ctx, e)
	if err != nil {
		return nil, o, err
	}
	base, err := environ.PublicBase(false)
	if err != nil {
		return nil, o, err
	}
	d, err := delivererOn(ctx, e, o, base)
	return d, o, err
}

// delivererOn is the deliverer over o's clients, its links under base.
func delivererOn(ctx context.Context, e *app.Env, o outboundDeps, base string) (*outbound.Deliverer, error) {
	keys, err := Keys(ctx, e)
	if err != nil {
		return nil, err
	}
	return &outbound.Deliverer{
		Store: o.store, Log: o.runs, Secrets: o.secrets, Client: outbound.NewHTTPClient(o.targets.AllowPrivate), Contacts: o.runs,
		Links: outbound.Links{Keys: keys, BaseURL: base}, Logger: environ.Logger(), Metrics: environ.Meter(),
	}, nil
}

// MustDeliver is deliver-events' handler: the run-log table's stream, delivered.
func MustDeliver(ctx context.Context) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	d, _, err := deliverer(ctx, app.Must(app.Load()))
	environ.ExitOn(err)
	return dynamostream.Handler(d, environ.Logger())
}

// MustRedrive is redrive-stream's handler: the stream's dead-letter queue, each failed batch's
// commits read back from the table and delivered (dynamostream.Redriver).
func MustRedrive(ctx context.Context) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	d, o, err := deliverer(ctx, app.Must(app.Load()))
	environ.ExitOn(err)
	return dynamostream.Redriver(d, o.runs, app.Must(app.RedriveSegments()), environ.Logger())
}

// RetryBatch bounds the retry entries one retry-deliveries invocation takes on.
const RetryBatch = 200

// MustRetryDeliveries is retry-deliveries' handler: one pass over the retries due per scheduled
// invocation (the schedule's input is not read), and one log line saying what it did when
// anything was due.
func MustRetryDeliveries(ctx context.Context) func(context.Context, json.RawMessage) (outbound.Report, error) {
	d, _, err := deliverer(ctx, app.Must(app.Load()))
	environ.ExitOn(err)
	log := environ.Logger()
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
