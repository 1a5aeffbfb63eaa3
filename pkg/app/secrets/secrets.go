// Package secrets wires the functions' dependencies that live in Secrets Manager (the token
// keyring, webhook endpoints' and subscriptions' signing secrets) and the functions built on
// them: the outbound deliveries. Only the functions that name one link the Secrets Manager
// client, and only their roles may read a secret.
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
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/awsconfig"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/dynamostream"
	"github.com/interrupthost/interrupthost/pkg/environ"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/keyring"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/secretsmanager"
	"github.com/interrupthost/interrupthost/pkg/signin"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// Keyring is the host with the token keyring: tokens minted or verified.
func Keyring(ctx context.Context, w *app.Wiring) error {
	if err := app.Host(ctx, w); err != nil {
		return err
	}
	return keys(ctx, w)
}

// keys loads the token keyring into the host's configuration, once.
func keys(ctx context.Context, w *app.Wiring) error {
	if w.Host.Keys != nil {
		return nil
	}
	cfg, err := w.AWS(ctx)
	if err != nil {
		return err
	}
	return withKeyring(ctx, cfg, &w.Host)
}

// WebhookSecrets is the host with the webhook endpoints' signing secrets.
func WebhookSecrets(ctx context.Context, w *app.Wiring) error {
	if err := app.Host(ctx, w); err != nil {
		return err
	}
	cfg, err := w.AWS(ctx)
	if err != nil {
		return err
	}
	return withWebhookSecrets(ctx, cfg, &w.Host)
}

// SignIn is the approval page's sign-in with the identity provider, with the host and its
// keyring (which signs the sign-in's cookies).
func SignIn(ctx context.Context, w *app.Wiring) error {
	if err := Keyring(ctx, w); err != nil {
		return err
	}
	var err error
	w.API.SignIn, err = signIn(w.Host, w.API)
	return err
}

// Subscriptions are the outbound subscriptions, their store and secrets, without a host.
func Subscriptions(ctx context.Context, w *app.Wiring) error {
	if w.API.Subscriptions != nil {
		return nil
	}
	cfg, err := w.AWS(ctx)
	if err != nil {
		return err
	}
	o, err := newOutbound(cfg)
	if err != nil {
		return err
	}
	w.API.Subscriptions = o.subscriptions()
	return nil
}

// Resends are Subscriptions with a deliverer (the run log, the keyring for signed approval
// links, its links under the request's base), for an operator's resend.
func Resends(ctx context.Context, w *app.Wiring) error {
	cfg, err := w.AWS(ctx)
	if err != nil {
		return err
	}
	o, err := newOutbound(cfg)
	if err != nil {
		return err
	}
	if w.API.Subscriptions == nil {
		w.API.Subscriptions = o.subscriptions()
	}
	w.API.Resender, err = delivererOn(ctx, o, w.API.PublicBaseURL)
	return err
}

// withKeyring loads the token keyring from the secret KEYRING_SECRET_ID names; the function
// refuses to start when the keyring is missing or unusable (a key under 32 bytes, an active kid
// that is not a key). Only functions that mint or verify tokens take it, and only they may read
// the secret.
func withKeyring(ctx context.Context, cfg aws.Config, h *host.Config) error {
	id := os.Getenv(environ.EnvKeyring)
	if id == "" {
		return errors.New("secrets: " + environ.EnvKeyring + " is not set")
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
	prefix := os.Getenv(environ.EnvWebhookSecrets)
	if prefix == "" {
		return errors.New("secrets: " + environ.EnvWebhookSecrets + " is not set")
	}
	h.Secrets = webhook.NewCache(secretsmanager.Secrets{Client: secretsmanager.NewClient(cfg), Prefix: prefix, Stack: os.Getenv(environ.EnvStackName)}, h.Now)
	return nil
}

// signIn is the approval page's sign-in with the identity provider OIDC_ISSUER names (the HTTP
// API's JwtIssuer) for the app client OIDC_CLIENT_ID, coming back to the public base's
// /signin/callback (apigw.Options.PublicBaseURL, else the request's domain); the keyring signs
// its cookies.
func signIn(hc host.Config, opts apigw.Options) (*signin.Flow, error) {
	return signin.New(signin.Config{
		Issuer: os.Getenv(environ.EnvOIDCIssuer), ClientID: os.Getenv(environ.EnvOIDCClientID),
		Keys: hc.Keys, TenantClaim: opts.TenantClaim, GroupsClaim: opts.GroupsClaim, RolesClaim: opts.RolesClaim,
		PrincipalClaim: opts.PrincipalClaim,
	})
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

// subscriptions are the subscriptions' service over o's clients.
func (o outboundDeps) subscriptions() *outbound.Subscriptions {
	return &outbound.Subscriptions{Store: o.store, Secrets: o.secrets, Targets: o.targets}
}

// newOutbound builds the outbound clients over cfg.
func newOutbound(cfg aws.Config) (outboundDeps, error) {
	o := outboundDeps{cfg: cfg}
	table, prefix := os.Getenv(environ.EnvTable), os.Getenv(environ.EnvSubscriptionSecrets)
	if table == "" || prefix == "" {
		return o, errors.New("secrets: " + environ.EnvTable + " and " + environ.EnvSubscriptionSecrets + " must be set")
	}
	allow, err := strconv.ParseBool(cmp.Or(os.Getenv(environ.EnvAllowPrivateTargets), "false"))
	if err != nil {
		return o, fmt.Errorf("secrets: %s=%q is not true or false", environ.EnvAllowPrivateTargets, os.Getenv(environ.EnvAllowPrivateTargets))
	}
	db := dynamo.NewClient(o.cfg)
	o.store, o.runs = dynamo.NewOutbound(db, table), dynamo.NewTable(db, table)
	o.secrets = webhook.NewCache(secretsmanager.Secrets{Client: secretsmanager.NewClient(o.cfg), Prefix: prefix, Stack: os.Getenv(environ.EnvStackName)}, nil)
	o.targets = outbound.Targets{AllowPrivate: allow}
	return o, nil
}

// loadOutbound is newOutbound with the SDK's configuration loaded.
func loadOutbound(ctx context.Context) (outboundDeps, error) {
	cfg, err := awsconfig.Load(ctx)
	if err != nil {
		return outboundDeps{}, err
	}
	return newOutbound(cfg)
}

// deliverer builds the deliverer of deliver-events and retry-deliveries: it signs with the
// subscriptions' secrets and mints approval links with the keyring, under PUBLIC_BASE_URL.
func deliverer(ctx context.Context) (*outbound.Deliverer, error) {
	o, err := loadOutbound(ctx)
	if err != nil {
		return nil, err
	}
	base, err := environ.PublicBase(false)
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
		Links: outbound.Links{Keys: hc.Keys, BaseURL: base}, Logger: environ.Logger(), Metrics: environ.Meter(),
	}, nil
}

// MustDeliver is deliver-events' handler: the run-log table's stream, delivered.
func MustDeliver(ctx context.Context) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	d, err := deliverer(ctx)
	environ.ExitOn(err)
	return dynamostream.Handler(d, environ.Logger())
}

// MustRedrive is redrive-stream's handler: the stream's dead-letter queue, each failed batch's
// commits read back from the table and delivered (dynamostream.Redriver).
func MustRedrive(ctx context.Context) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	o, err := loadOutbound(ctx)
	environ.ExitOn(err)
	base, err := environ.PublicBase(false)
	environ.ExitOn(err)
	d, err := delivererOn(ctx, o, base)
	environ.ExitOn(err)
	segments, err := app.RedriveSegments()
	environ.ExitOn(err)
	return dynamostream.Redriver(d, o.runs, segments, environ.Logger())
}

// RetryBatch bounds the retry entries one retry-deliveries invocation takes on.
const RetryBatch = 200

// MustRetryDeliveries is retry-deliveries' handler: one pass over the retries due per scheduled
// invocation (the schedule's input is not read), and one log line saying what it did when
// anything was due.
func MustRetryDeliveries(ctx context.Context) func(context.Context, json.RawMessage) (outbound.Report, error) {
	d, err := deliverer(ctx)
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
