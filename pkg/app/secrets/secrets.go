// Package secrets wires what lives in Secrets Manager for the API (the token keyring, webhook
// endpoints' signing secrets) and the services built on it (tokens, webhooks, the page's
// sign-in); package app/delivery adds the subscriptions'. Only the functions that ask for one
// link the Secrets Manager client, and only their roles may read a secret.
package secrets

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
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
	ttl, err := environ.KeyringCache()
	if err != nil {
		return nil, err
	}
	// A cache trusted for less than the cooldown between reads is read again after it, not
	// after the cooldown: the two bound the reads alike.
	k, err := keyring.New(ctx, secretsmanager.NewKeyring(secretsmanager.NewClient(cfg), id), keyring.Options{TTL: ttl, Cooldown: ttl})
	if err != nil {
		return nil, err
	}
	e.Keys = k
	return k, nil
}

// Tokens are the host's token operations, with the keyring.
func Tokens(ctx context.Context, e *app.Env) (*host.Signer, error) {
	h, err := e.Host(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := Keys(ctx, e)
	if err != nil {
		return nil, err
	}
	return host.NewSigner(h, keys), nil
}

// Webhooks are the host's webhook operations, with the endpoints' secrets in Secrets Manager
// under the prefix WEBHOOK_SECRET_PREFIX names (the only secrets the functions' roles may
// touch), cached in memory.
func Webhooks(ctx context.Context, e *app.Env) (*host.Webhooks, error) {
	h, err := e.Host(ctx)
	if err != nil {
		return nil, err
	}
	c, err := cached(ctx, e, environ.EnvWebhookSecrets, h.Now)
	if err != nil {
		return nil, err
	}
	return host.NewWebhooks(h, c), nil
}

// cached are the secrets under the name prefix env names, in Secrets Manager (tagged with the
// stack when they are made), cached in memory (webhook.Cache, its clock now).
func cached(ctx context.Context, e *app.Env, env string, now func() time.Time) (*webhook.Cache, error) {
	prefix := os.Getenv(env)
	if prefix == "" {
		return nil, errors.New("secrets: " + env + " is not set")
	}
	cfg, err := e.AWS(ctx)
	if err != nil {
		return nil, err
	}
	return webhook.NewCache(secretsmanager.NewSecrets(secretsmanager.NewClient(cfg), prefix, os.Getenv(environ.EnvStackName)), now), nil
}

// SignIn is the approval page's sign-in with the identity provider OIDC_ISSUER names (the HTTP
// API's JwtIssuer) for the app client OIDC_CLIENT_ID, coming back to the public base's
// /signin/callback (apigw.Options.PublicBaseURL, else the request's domain); the keyring signs
// its cookies, and the sessions' records are kept in the table, so that a sign-out on the page
// ends the session on the console too (both functions build their sign-in here).
func SignIn(ctx context.Context, e *app.Env) (*signin.Flow, error) {
	keys, err := Keys(ctx, e)
	if err != nil {
		return nil, err
	}
	table, err := e.Table(ctx)
	if err != nil {
		return nil, err
	}
	o := e.Options
	return signin.New(signin.Config{
		Issuer: os.Getenv(environ.EnvOIDCIssuer), ClientID: os.Getenv(environ.EnvOIDCClientID),
		Keys: keys, Sessions: table, TenantClaim: o.TenantClaim, GroupsClaim: o.GroupsClaim, RolesClaim: o.RolesClaim,
		PrincipalClaim: o.PrincipalClaim,
	})
}

// SlackApps are the tenants' Slack apps: in the table, their secrets in Secrets Manager.
func SlackApps(ctx context.Context, e *app.Env) (*slack.Integrations, error) {
	table, err := e.Table(ctx)
	if err != nil {
		return nil, err
	}
	// The apps' secrets live under SLACK_SECRET_PREFIX, the only ones the Slack functions' roles
	// may touch.
	sec, err := cached(ctx, e, environ.EnvSlackSecrets, nil)
	if err != nil {
		return nil, err
	}
	return &slack.Integrations{Store: table, Secrets: sec, Log: environ.Logger()}, nil
}

// SlackClicks serve the Slack apps' clicks: verified with the apps' secrets, their buttons'
// values with the keyring, the clicker found in the contacts, decided through the host; a
// click's response_url posted to as deliveries are (private addresses only where
// ALLOW_PRIVATE_DELIVERY_TARGETS says).
func SlackClicks(ctx context.Context, e *app.Env) (*slack.Interactions, error) {
	h, err := e.Host(ctx)
	if err != nil {
		return nil, err
	}
	apps, err := SlackApps(ctx, e)
	if err != nil {
		return nil, err
	}
	table, err := e.Table(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := Keys(ctx, e)
	if err != nil {
		return nil, err
	}
	allow, err := environ.AllowPrivateTargets()
	if err != nil {
		return nil, err
	}
	return &slack.Interactions{
		Host: h, Apps: apps.Store, Secrets: apps.Secrets, Keys: keys, Contacts: table, Delegations: table,
		Poster: outbound.NewHTTPClient(allow), AllowPrivate: allow, SlackAPI: os.Getenv(environ.EnvSlackAPI), Log: environ.Logger(),
	}, nil
}

// TeamsBots are the tenants' Teams bots: in the table, their passwords in Secrets Manager under
// TEAMS_SECRET_PREFIX, the only ones the functions that manage or post as the bots may touch.
func TeamsBots(ctx context.Context, e *app.Env) (*teams.Integrations, error) {
	table, err := e.Table(ctx)
	if err != nil {
		return nil, err
	}
	sec, err := cached(ctx, e, environ.EnvTeamsSecrets, nil)
	if err != nil {
		return nil, err
	}
	return &teams.Integrations{Store: table, Secrets: sec, Log: environ.Logger()}, nil
}

// TeamsMessages serve the activities the Bot Framework sends the tenants' bots: verified by its
// published keys (BOTFRAMEWORK_OPENID_METADATA, else Microsoft's), the cards' data with the
// keyring, the clicker found in the contacts, decided through the host. It reads no bot's
// password: verifying a click needs none.
func TeamsMessages(ctx context.Context, e *app.Env) (*teams.Messages, error) {
	h, err := e.Host(ctx)
	if err != nil {
		return nil, err
	}
	table, err := e.Table(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := Keys(ctx, e)
	if err != nil {
		return nil, err
	}
	base, err := environ.PublicBase(true)
	if err != nil {
		return nil, err
	}
	return &teams.Messages{
		Host: h, Bots: table, Verifier: &teams.KeySet{Metadata: os.Getenv(environ.EnvBotFrameworkMetadata), Now: h.Now},
		Keys: keys, Contacts: table, Delegations: table, BaseURL: base, Log: environ.Logger(),
	}, nil
}
