package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// App is a tenant's Slack app as the host keeps it: never its secrets.
type App struct {
	Tenant string `json:"-"`
	// AppID is Slack's id of the app (api_app_id in its payloads), TeamID the workspace's
	// (team.id): one pair belongs to one tenant.
	AppID  string `json:"appId"`
	TeamID string `json:"teamId"`
	// BotToken says whether the tenant gave a bot token: then Reject asks for a reason in a
	// modal. The token itself is a secret, never answered.
	BotToken  bool      `json:"botToken"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Request is the body of PUT /integrations/slack: the app as a whole.
type Request struct {
	AppID         string `json:"appId"`
	TeamID        string `json:"teamId"`
	SigningSecret string `json:"signingSecret"`
	BotToken      string `json:"botToken,omitempty"`
}

// Slack's ids and secrets as Slack issues them: an app id is A and capitals or digits, a
// workspace's T (an Enterprise Grid's E), a signing secret hexadecimal (32 digits today; more
// are taken), a bot token xoxb-.
var (
	appIDPattern  = regexp.MustCompile(`^A[A-Z0-9]{2,30}$`)
	teamIDPattern = regexp.MustCompile(`^[TE][A-Z0-9]{2,30}$`)
	signingSecret = regexp.MustCompile(`^[0-9a-f]{32,128}$`)
	botToken      = regexp.MustCompile(`^xoxb-[A-Za-z0-9-]{10,250}$`)
)

// check refuses what Slack would never issue, naming the secrets by place only.
func (r Request) check() []interrupt.FieldError {
	var fields []interrupt.FieldError
	add := func(path, msg string) { fields = append(fields, interrupt.FieldError{Path: path, Message: msg}) }
	if !appIDPattern.MatchString(r.AppID) {
		add("/appId", "must be a Slack app id (A and capitals or digits, as A0123ABCDEF): the app's Basic Information page")
	}
	if !teamIDPattern.MatchString(r.TeamID) {
		add("/teamId", "must be a Slack workspace id (T and capitals or digits, as T0123ABCD)")
	}
	if !signingSecret.MatchString(r.SigningSecret) {
		add("/signingSecret", "must be the app's signing secret (hexadecimal digits): the app's Basic Information page")
	}
	if r.BotToken != "" && !botToken.MatchString(r.BotToken) {
		add("/botToken", "must be a bot token (xoxb-...), or left out")
	}
	return fields
}

// ErrNotFound is what a Store answers for a tenant without an app.
var ErrNotFound = errors.New("slackapp: no such app")

// Store keeps each tenant's app and which tenants registered each app and workspace pair.
// A pair is no one's to hold: app and workspace ids are not secret, so a tenant registering
// another's pair first must not lock its owner out. A click is the tenant's whose signing
// secret verifies it (clicks.Interactions). Implementations: dynamo.Table, inmem.Store, held to
// one behaviour by package slackapp/storetest.
type Store interface {
	// PutSlackApp makes a its tenant's app, replacing the one it had (whose pair then no longer
	// lists the tenant); created says whether it had none.
	PutSlackApp(ctx context.Context, a App) (created bool, err error)
	// SlackApp answers the tenant's app, or ErrNotFound.
	SlackApp(ctx context.Context, tenant string) (App, error)
	// DeleteSlackApp removes the tenant's app, or answers ErrNotFound when it has none.
	DeleteSlackApp(ctx context.Context, tenant string) error
	// SlackTenants answers the tenants that registered the pair, sorted; none is an empty list.
	// A tenant listed may have registered another pair since (a writer that died between its
	// two writes): a reader checks the tenant's app before trusting it.
	SlackTenants(ctx context.Context, appID, teamID string) ([]string, error)
}

// Secrets keeps each tenant's app's secrets, named by SecretID, in a secret store
// (webhook.Cache over secretsmanager.Secrets, under the template's SlackSecretPrefix).
type Secrets interface {
	Put(ctx context.Context, id string, secrets []string) error
	// Get answers them; a tenant with none answers an error wrapping interrupt.ErrUnavailable.
	Get(ctx context.Context, id string) ([]string, error)
	// Reload reads them again unless they were read very recently (fresh false): a signature
	// the secret read does not verify may be signed with one just replaced.
	Reload(ctx context.Context, id string) (secrets []string, fresh bool, err error)
	Delete(ctx context.Context, id string) error
}

// Credentials are what the secret store keeps of an app, in the order of its list: the
// signing secret, then the bot token when there is one.
type Credentials struct {
	SigningSecret, BotToken string
}

func (c Credentials) list() []string {
	if c.BotToken == "" {
		return []string{c.SigningSecret}
	}
	return []string{c.SigningSecret, c.BotToken}
}

// CredentialsOf reads the list the secret store keeps.
func CredentialsOf(list []string) (Credentials, error) {
	if len(list) < 1 || len(list) > 2 || list[0] == "" {
		return Credentials{}, fmt.Errorf("slackapp: the app's secret holds %d values, not a signing secret and a bot token", len(list))
	}
	c := Credentials{SigningSecret: list[0]}
	if len(list) == 2 {
		c.BotToken = list[1]
	}
	return c, nil
}

// ValidPair reports whether appID and teamID could be Slack's ids of an app and a workspace:
// a click naming anything else is no registered app's, and nothing is read for it.
func ValidPair(appID, teamID string) bool {
	return appIDPattern.MatchString(appID) && teamIDPattern.MatchString(teamID)
}

// Integrations are the API's operations on the caller's tenant's app. Safe for concurrent use.
type Integrations struct {
	Store   Store
	Secrets Secrets
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives the security events: an app's signing secret replaced or its app removed
	// (never a secret); nil logs nothing.
	Log *slog.Logger
}

// Put makes req the caller's tenant's app; created says whether it had none. Another tenant
// registering the same pair changes nothing of this one's: each tenant's secrets are its own
// (SecretID), and a click decides for the tenant whose secret verifies it. A new app's secrets
// never replace the ones the tenant's current app is verified with: the old app's go once the
// new one is the tenant's, the new app's when it could not be. Replacing the secret a
// registered app is verified with is as strong as a vote, and logged as a security event.
func (i *Integrations) Put(ctx context.Context, p interrupt.Principal, req Request) (App, bool, error) {
	if fields := req.check(); len(fields) > 0 {
		return App{}, false, interrupt.Invalid("the Slack app is not acceptable", fields...)
	}
	old, err := i.Store.SlackApp(ctx, p.Tenant)
	had := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return App{}, false, err
	}
	now := time.Now
	if i.Now != nil {
		now = i.Now
	}
	a := App{Tenant: p.Tenant, AppID: req.AppID, TeamID: req.TeamID, BotToken: req.BotToken != "", UpdatedAt: now().UTC()}
	id := SecretID(a.Tenant, a.AppID, a.TeamID)
	samePair := had && old.AppID == a.AppID && old.TeamID == a.TeamID
	if err := i.Secrets.Put(ctx, id, Credentials{req.SigningSecret, req.BotToken}.list()); err != nil {
		return App{}, false, err
	}
	created, err := i.Store.PutSlackApp(ctx, a)
	if err != nil {
		if !samePair {
			err = errors.Join(err, i.Secrets.Delete(context.WithoutCancel(ctx), id))
		}
		return App{}, false, err
	}
	if had {
		i.security(ctx, "slack app replaced: its clicks are now verified with the secret given", p, old, a)
	}
	if had && !samePair {
		// The old app's secrets, now no app's; a failure leaves them behind, tagged with the
		// stack (docs/operations.md, "Removing a stack").
		_ = i.Secrets.Delete(ctx, SecretID(old.Tenant, old.AppID, old.TeamID))
	}
	return a, created, nil
}

// security logs a security event of the tenant's app: who did it, the app before and after.
func (i *Integrations) security(ctx context.Context, msg string, p interrupt.Principal, old, now App) {
	if i.Log == nil {
		return
	}
	i.Log.LogAttrs(ctx, slog.LevelWarn, msg, slog.String("event", "security"), slog.String("tenant", p.Tenant), slog.String("by", p.Subject),
		slog.String("appId", old.AppID), slog.String("teamId", old.TeamID), slog.String("newAppId", now.AppID), slog.String("newTeamId", now.TeamID))
}

// SecretID names the secrets of a tenant's app of one pair in the secret store: the tenant's id
// (its ':' written '=', which Secrets Manager's names allow and ids never hold), then the pair.
func SecretID(tenant, appID, teamID string) string {
	return strings.ReplaceAll(tenant, ":", "=") + "/" + appID + "-" + teamID
}

// Get answers the caller's tenant's app (404 when it has none).
func (i *Integrations) Get(ctx context.Context, p interrupt.Principal) (App, error) {
	a, err := i.Store.SlackApp(ctx, p.Tenant)
	if errors.Is(err, ErrNotFound) {
		return App{}, interrupt.Errorf(interrupt.CodeNotFound, "this tenant has no Slack app")
	}
	return a, err
}

// Delete removes the caller's tenant's app, then its secrets: from then on its clicks answer
// 401 and its approvals' messages carry no buttons.
func (i *Integrations) Delete(ctx context.Context, p interrupt.Principal) error {
	a, err := i.Get(ctx, p)
	if err != nil {
		return err
	}
	err = i.Store.DeleteSlackApp(ctx, p.Tenant)
	if errors.Is(err, ErrNotFound) {
		return interrupt.Errorf(interrupt.CodeNotFound, "this tenant has no Slack app")
	}
	if err != nil {
		return err
	}
	i.security(ctx, "slack app removed: its clicks decide nothing", p, a, App{})
	return i.Secrets.Delete(ctx, SecretID(a.Tenant, a.AppID, a.TeamID))
}

// interactionsPath is where Slack posts the app's clicks: the manifest's request_url.
const interactionsPath = "/slack/interactions"

// InteractionsURL is the URL the app's manifest names for interactivity, under the API's base.
func InteractionsURL(base string) string { return strings.TrimSuffix(base, "/") + interactionsPath }
