package teams

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Bot is a tenant's Teams bot as the host keeps it: never its password.
type Bot struct {
	Tenant string `json:"-"`
	// AppID is the bot's Microsoft app id (the Azure Bot's): the audience of the tokens the Bot
	// Framework sends it. EntraTenant is the Microsoft Entra tenant its Teams users are of (what
	// an activity names conversation.tenantId): a click from another Entra tenant decides
	// nothing.
	AppID       string    `json:"appId"`
	EntraTenant string    `json:"tenantId"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Request is the body of PUT /integrations/teams: the bot as a whole.
type Request struct {
	AppID       string `json:"appId"`
	AppPassword string `json:"appPassword"`
	EntraTenant string `json:"tenantId"`
}

// guid is how Microsoft writes an app id and a tenant id; a client secret is printable ASCII
// (Entra's secrets are 40 characters today; more are taken).
var (
	guid        = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	appPassword = regexp.MustCompile(`^[\x21-\x7e]{16,256}$`)
)

// check refuses what Microsoft would never issue, naming the password by place only.
func (r Request) check() []interrupt.FieldError {
	var fields []interrupt.FieldError
	add := func(path, msg string) { fields = append(fields, interrupt.FieldError{Path: path, Message: msg}) }
	if !guid.MatchString(r.AppID) {
		add("/appId", "must be the bot's Microsoft app id (a GUID): the Azure Bot's Configuration page")
	}
	if !appPassword.MatchString(r.AppPassword) {
		add("/appPassword", "must be a client secret of the bot's app registration (16 to 256 printable characters)")
	}
	if !guid.MatchString(r.EntraTenant) {
		add("/tenantId", "must be the Microsoft Entra tenant id (a GUID) the bot's Teams users are of")
	}
	return fields
}

// ErrNotFound is what a Store answers for a tenant without a bot.
var ErrNotFound = errors.New("teams: no such bot")

// Store keeps each tenant's bot and which tenants registered each app id. An app id is no
// one's to hold: it is not secret, so a tenant registering another's first must not lock its
// owner out; a click decides only for the tenant its card's sealed data names, which must have
// registered the app the token was issued for. Implementations: dynamo.Table, inmem.Store,
// held to one behaviour by package teams/storetest.
type Store interface {
	// PutTeamsBot makes b its tenant's bot, replacing the one it had (whose app id then no
	// longer lists the tenant); created says whether it had none.
	PutTeamsBot(ctx context.Context, b Bot) (created bool, err error)
	// TeamsBot answers the tenant's bot, or ErrNotFound.
	TeamsBot(ctx context.Context, tenant string) (Bot, error)
	// DeleteTeamsBot removes the tenant's bot, or answers ErrNotFound when it has none.
	DeleteTeamsBot(ctx context.Context, tenant string) error
	// TeamsTenants answers the tenants that registered the app id, sorted; none is an empty
	// list. A tenant listed may have registered another since (a writer that died between its
	// two writes): a reader checks the tenant's bot before trusting it.
	TeamsTenants(ctx context.Context, appID string) ([]string, error)
}

// Secrets keeps each tenant's bot's password, named by SecretID, in a secret store
// (webhook.Cache over secretsmanager.Secrets, under the template's TeamsSecretPrefix).
type Secrets interface {
	Put(ctx context.Context, id string, secrets []string) error
	// Get answers them; a tenant with none answers an error wrapping interrupt.ErrUnavailable.
	Get(ctx context.Context, id string) ([]string, error)
	Delete(ctx context.Context, id string) error
}

// SecretID names the password of a tenant's bot of one app id in the secret store: the
// tenant's id (its ':' written '=', which Secrets Manager's names allow and ids never hold),
// then the app id, so that registering another bot writes beside the current one's.
func SecretID(tenant, appID string) string {
	return strings.ReplaceAll(tenant, ":", "=") + "/teams-" + strings.ToLower(appID)
}

// Integrations are the API's operations on the caller's tenant's bot. Safe for concurrent use.
type Integrations struct {
	Store   Store
	Secrets Secrets
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives the security events: a bot replaced or removed (never its password); nil
	// logs nothing.
	Log *slog.Logger
}

// Put makes req the caller's tenant's bot; created says whether it had none. Its password is
// written before the bot, beside the current bot's (SecretID), and the old one's is deleted
// once the new bot is the tenant's. Replacing a registered bot is as strong as a vote (whose
// clicks count is the bot's), and logged as a security event.
func (i *Integrations) Put(ctx context.Context, p interrupt.Principal, req Request) (Bot, bool, error) {
	if fields := req.check(); len(fields) > 0 {
		return Bot{}, false, interrupt.Invalid("the Teams bot is not acceptable", fields...)
	}
	old, err := i.Store.TeamsBot(ctx, p.Tenant)
	had := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Bot{}, false, err
	}
	now := time.Now
	if i.Now != nil {
		now = i.Now
	}
	b := Bot{Tenant: p.Tenant, AppID: strings.ToLower(req.AppID), EntraTenant: strings.ToLower(req.EntraTenant), UpdatedAt: now().UTC()}
	id := SecretID(b.Tenant, b.AppID)
	sameApp := had && old.AppID == b.AppID
	if err := i.Secrets.Put(ctx, id, []string{req.AppPassword}); err != nil {
		return Bot{}, false, err
	}
	created, err := i.Store.PutTeamsBot(ctx, b)
	if err != nil {
		if !sameApp {
			err = errors.Join(err, i.Secrets.Delete(context.WithoutCancel(ctx), id))
		}
		return Bot{}, false, err
	}
	if had {
		i.security(ctx, "teams bot replaced: its clicks and posts are now the bot given", p, old, b)
	}
	if had && !sameApp {
		_ = i.Secrets.Delete(ctx, SecretID(old.Tenant, old.AppID)) // left behind on failure, tagged with the stack
	}
	return b, created, nil
}

func (i *Integrations) security(ctx context.Context, msg string, p interrupt.Principal, old, now Bot) {
	if i.Log == nil {
		return
	}
	i.Log.LogAttrs(ctx, slog.LevelWarn, msg, slog.String("event", "security"), slog.String("tenant", p.Tenant), slog.String("by", p.Subject),
		slog.String("appId", old.AppID), slog.String("entraTenant", old.EntraTenant), slog.String("newAppId", now.AppID), slog.String("newEntraTenant", now.EntraTenant))
}

// Get answers the caller's tenant's bot (404 when it has none); never its password.
func (i *Integrations) Get(ctx context.Context, p interrupt.Principal) (Bot, error) {
	b, err := i.Store.TeamsBot(ctx, p.Tenant)
	if errors.Is(err, ErrNotFound) {
		return Bot{}, interrupt.Errorf(interrupt.CodeNotFound, "this tenant has no Teams bot")
	}
	return b, err
}

// Delete removes the caller's tenant's bot, then its password: from then on its clicks decide
// nothing and its cards offer no decision.
func (i *Integrations) Delete(ctx context.Context, p interrupt.Principal) error {
	b, err := i.Get(ctx, p)
	if err != nil {
		return err
	}
	err = i.Store.DeleteTeamsBot(ctx, p.Tenant)
	if errors.Is(err, ErrNotFound) {
		return interrupt.Errorf(interrupt.CodeNotFound, "this tenant has no Teams bot")
	}
	if err != nil {
		return err
	}
	i.security(ctx, "teams bot removed: its clicks decide nothing", p, b, Bot{})
	return i.Secrets.Delete(ctx, SecretID(b.Tenant, b.AppID))
}

// messagesPath is where the Bot Framework posts the bot's activities: the Azure Bot's
// messaging endpoint.
const messagesPath = "/teams/messages"

// MessagesURL is the messaging endpoint an Azure Bot names, under the API's base.
func MessagesURL(base string) string { return strings.TrimSuffix(base, "/") + messagesPath }
