// Package delivery wires the outbound side: subscriptions and their signing secrets, the
// deliverer over the table's stream and its retries, and the mail it sends through SES. Only the
// functions that deliver or manage subscriptions import it, so only they link the SES client
// (TestEachFunctionLinksWhatItsRoleAllows).
package delivery

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"os"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/dynamostream"
	"github.com/interrupthost/interrupthost/pkg/environ"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/secretsmanager"
	"github.com/interrupthost/interrupthost/pkg/ses"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// Subscriptions are the outbound subscriptions, their store and secrets, without a host; a
// deliverer over the same clients for an operator's resend (the run log, the keyring for signed
// approval links, its links under the request's base); and the tenants' Slack apps and Teams
// bots.
func Subscriptions(ctx context.Context, e *app.Env) (*outbound.Subscriptions, *outbound.Deliverer, *slack.Integrations, *teams.Integrations, error) {
	o, err := newOutbound(ctx, e)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	d, err := delivererOn(ctx, e, o, e.Options.PublicBaseURL)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	apps, err := secrets.SlackApps(ctx, e)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	bots, err := secrets.TeamsBots(ctx, e)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return subscriptionsOn(o), d, apps, bots, nil
}

// Resends are the console's subscriptions, read, and the deliverer that resends one of their
// events, as the subscriptions function's resend does, without the Slack apps' secrets.
func Resends(ctx context.Context, e *app.Env) (*outbound.Subscriptions, *outbound.Deliverer, error) {
	o, err := newOutbound(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	d, err := delivererOn(ctx, e, o, e.Options.PublicBaseURL)
	if err != nil {
		return nil, nil, err
	}
	return subscriptionsOn(o), d, nil
}

// outboundDeps are what the outbound functions share: the table's stores, the subscriptions'
// secrets and the delivery targets' rule.
type outboundDeps struct {
	store   *dynamo.Outbound
	runs    *dynamo.Table
	secrets *webhook.Cache
	targets outbound.Targets
	// mailer sends from MAIL_SENDER; nil when the deployment names no sender.
	mailer outbound.Mailer
}

// newOutbound builds the outbound clients.
func newOutbound(ctx context.Context, e *app.Env) (outboundDeps, error) {
	var o outboundDeps
	table, prefix := os.Getenv(environ.EnvTable), os.Getenv(environ.EnvSubscriptionSecrets)
	if table == "" || prefix == "" {
		return o, errors.New("delivery: " + environ.EnvTable + " and " + environ.EnvSubscriptionSecrets + " must be set")
	}
	allow, err := environ.AllowPrivateTargets()
	if err != nil {
		return o, err
	}
	cfg, err := e.AWS(ctx)
	if err != nil {
		return o, err
	}
	db := dynamo.NewClient(cfg)
	o.store, o.runs = dynamo.NewOutbound(db, table), dynamo.NewTable(db, table)
	o.secrets = webhook.NewCache(secretsmanager.NewSecrets(secretsmanager.NewClient(cfg), prefix, os.Getenv(environ.EnvStackName)), nil)
	o.targets = outbound.Targets{AllowPrivate: allow}
	if sender := os.Getenv(environ.EnvMailSender); sender != "" {
		o.mailer = ses.NewMailer(ses.NewClient(cfg), sender, cmp.Or(os.Getenv(environ.EnvMailSenderName), "Interrupt host"))
	}
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

// subscriptionsOn are the subscriptions over o's clients, of the formats this deployment
// posts: standard-webhooks, email where it sends mail, and its channels'.
func subscriptionsOn(o outboundDeps) *outbound.Subscriptions {
	return &outbound.Subscriptions{Store: o.store, Secrets: o.secrets, Targets: o.targets, Mail: o.mailer != nil, Channels: []string{slack.Format, teams.Format},
		Conversations: map[string]outbound.ConversationCheck{teams.Format: teams.Conversations{AllowPrivate: o.targets.AllowPrivate}.Check}}
}

// delivererOn is the deliverer over o's clients, its links under base.
func delivererOn(ctx context.Context, e *app.Env, o outboundDeps, base string) (*outbound.Deliverer, error) {
	keys, err := secrets.Keys(ctx, e)
	if err != nil {
		return nil, err
	}
	bots, err := secrets.TeamsBots(ctx, e)
	if err != nil {
		return nil, err
	}
	cards := &teams.Channel{
		Bots: o.runs, Keys: keys, Conversations: teams.Conversations{AllowPrivate: o.targets.AllowPrivate}, Activities: o.store, Runs: o.runs,
		Connector: &teams.Connector{Secrets: bots.Secrets, TokenURL: os.Getenv(environ.EnvBotFrameworkTokenURL)},
	}
	return &outbound.Deliverer{
		Store: o.store, Log: o.runs, Secrets: o.secrets, Client: outbound.NewHTTPClient(o.targets.AllowPrivate), Contacts: o.runs, Delegations: o.runs, Mailer: o.mailer,
		Channels: []outbound.Channel{&slack.Channel{Contacts: o.runs, Apps: o.runs, Keys: keys}, cards},
		Links:    outbound.Links{Keys: keys, BaseURL: base}, Logger: environ.Logger(), Metrics: environ.Meter(),
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
