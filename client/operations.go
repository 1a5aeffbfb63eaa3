package client

import (
	"context"
	"time"

	"net/http"
)

// Discovery is what the host advertises (GET /.well-known/interrupt-host): its capabilities,
// its interrupt facet (token algorithms, ref kinds) and its release.
type Discovery struct {
	Capabilities []string `json:"capabilities"`
	Interrupt    struct {
		TokenAlgs []string `json:"tokenAlgs"`
		RefKinds  []string `json:"refKinds"`
	} `json:"interrupt"`
	Implementation struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"implementation"`
}

// Discover reads what the host advertises; it needs no token.
func (c *Client) Discover(ctx context.Context) (Discovery, error) {
	var out Discovery
	err := c.do(ctx, http.MethodGet, "/.well-known/interrupt-host", nil, &out)
	return out, err
}

// Configuration is a run's configurable settings as they stand, and the commit that set them.
type Configuration struct {
	RunID               string  `json:"runId"`
	EscalationThreshold float64 `json:"escalationThreshold"`
	Seq                 int64   `json:"seq"`
}

// Configure sets the run's escalation threshold (scope runs:configure): an agent's decision
// below it suspends its node on a low-confidence interrupt.
func (c *Client) Configure(ctx context.Context, runID string, escalationThreshold float64) (Configuration, error) {
	var out Configuration
	err := c.do(ctx, http.MethodPut, "/runs/"+esc(runID)+"/configurable", map[string]float64{"escalationThreshold": escalationThreshold}, &out)
	return out, err
}

// AgentDecision is an agent's decision at a node, with the confidence it had; Key makes it
// once (the same key again answers the first answer).
type AgentDecision struct {
	NodeID     string  `json:"nodeId"`
	Key        string  `json:"key"`
	AgentID    string  `json:"agentId"`
	Confidence float64 `json:"confidence"`
	Decision   any     `json:"decision"`
}

// Decided is the answer to an agent's decision: whether it suspended the node (Escalated), on
// which low-confidence interrupt.
type Decided struct {
	RunID       string `json:"runId"`
	NodeID      string `json:"nodeId"`
	Seq         int64  `json:"seq"`
	Escalated   bool   `json:"escalated"`
	InterruptID string `json:"interruptId,omitempty"`
}

// Decide records an agent's decision (scope interrupts:write); below the run's threshold it
// suspends the node on a low-confidence interrupt, which people then decide.
func (c *Client) Decide(ctx context.Context, runID string, d AgentDecision) (Decided, error) {
	var out Decided
	err := c.do(ctx, http.MethodPost, "/runs/"+esc(runID)+"/agent-decisions", d, &out, idempotent(nil)...)
	return out, err
}

// Contact is where a principal, group or role of the tenant is reached: mail, Slack.
type Contact struct {
	Kind      string `json:"kind"`
	Ref       string `json:"ref"`
	Email     string `json:"email,omitempty"`
	Name      string `json:"name,omitempty"`
	Slack     string `json:"slack,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
}

// PutContact says where the ref of kind ("principal", "group", "role") is reached (scope
// contacts:manage).
func (c *Client) PutContact(ctx context.Context, kind, ref, email, name, slack string) (Contact, error) {
	var out Contact
	in := map[string]string{}
	for k, v := range map[string]string{"email": email, "name": name, "slack": slack} {
		if v != "" {
			in[k] = v
		}
	}
	err := c.do(ctx, http.MethodPut, "/contacts/"+esc(kind)+"/"+esc(ref), in, &out)
	return out, err
}

// Contact reads one contact.
func (c *Client) Contact(ctx context.Context, kind, ref string) (Contact, error) {
	var out Contact
	err := c.do(ctx, http.MethodGet, "/contacts/"+esc(kind)+"/"+esc(ref), nil, &out)
	return out, err
}

// DeleteContact deletes one contact.
func (c *Client) DeleteContact(ctx context.Context, kind, ref string) error {
	return c.do(ctx, http.MethodDelete, "/contacts/"+esc(kind)+"/"+esc(ref), nil, nil)
}

// ContactsPage is a page of the tenant's contacts; Next, when set, is the after of the next.
type ContactsPage struct {
	Contacts []Contact `json:"contacts"`
	Next     string    `json:"next,omitempty"`
}

// Contacts reads a page of the tenant's contacts, by kind then ref.
func (c *Client) Contacts(ctx context.Context, after string, limit int) (ContactsPage, error) {
	var out ContactsPage
	err := c.do(ctx, http.MethodGet, paged("/contacts", after, limit), nil, &out)
	return out, err
}

// SlackApp is the tenant's Slack app as the host shows it: never its secrets.
type SlackApp struct {
	AppID  string `json:"appId"`
	TeamID string `json:"teamId"`
	// BotToken says whether a bot token was given: then Reject asks for a reason in a modal.
	BotToken  bool      `json:"botToken"`
	UpdatedAt time.Time `json:"updatedAt"`
	// InteractionsURL is the app's interactivity request URL, for its manifest.
	InteractionsURL string `json:"interactionsUrl"`
}

// SlackAppRequest makes a Slack app the tenant's: its ids, its signing secret and, optionally,
// its bot token (docs/approvers.md, "Deciding in Slack").
type SlackAppRequest struct {
	AppID         string `json:"appId"`
	TeamID        string `json:"teamId"`
	SigningSecret string `json:"signingSecret"`
	BotToken      string `json:"botToken,omitempty"`
}

// PutSlackApp makes the app the tenant's, replacing the one it had (scope
// subscriptions:manage); another tenant's app is a *Problem of status 409.
func (c *Client) PutSlackApp(ctx context.Context, req SlackAppRequest) (SlackApp, error) {
	var out SlackApp
	err := c.do(ctx, http.MethodPut, "/integrations/slack", req, &out)
	return out, err
}

// SlackApp reads the tenant's Slack app; a tenant without one is a *Problem of status 404.
func (c *Client) SlackApp(ctx context.Context) (SlackApp, error) {
	var out SlackApp
	err := c.do(ctx, http.MethodGet, "/integrations/slack", nil, &out)
	return out, err
}

// DeleteSlackApp forgets the tenant's Slack app and its secrets.
func (c *Client) DeleteSlackApp(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "/integrations/slack", nil, nil)
}

// TeamsBot is the tenant's Teams bot as the host shows it: never its password.
type TeamsBot struct {
	AppID string `json:"appId"`
	// TenantID is the Microsoft Entra tenant the bot's Teams users are of.
	TenantID  string    `json:"tenantId"`
	UpdatedAt time.Time `json:"updatedAt"`
	// MessagesURL is the Azure Bot's messaging endpoint.
	MessagesURL string `json:"messagesUrl"`
}

// TeamsBotRequest makes a Teams bot the tenant's: its Microsoft app id, a client secret of its
// app registration, and its Entra tenant (docs/operations.md, "Teams").
type TeamsBotRequest struct {
	AppID       string `json:"appId"`
	AppPassword string `json:"appPassword"`
	TenantID    string `json:"tenantId"`
}

// PutTeamsBot makes the bot the tenant's, replacing the one it had (scope
// integrations:manage).
func (c *Client) PutTeamsBot(ctx context.Context, req TeamsBotRequest) (TeamsBot, error) {
	var out TeamsBot
	err := c.do(ctx, http.MethodPut, "/integrations/teams", req, &out)
	return out, err
}

// TeamsBot reads the tenant's Teams bot; a tenant without one is a *Problem of status 404.
func (c *Client) TeamsBot(ctx context.Context) (TeamsBot, error) {
	var out TeamsBot
	err := c.do(ctx, http.MethodGet, "/integrations/teams", nil, &out)
	return out, err
}

// DeleteTeamsBot forgets the tenant's Teams bot and its password.
func (c *Client) DeleteTeamsBot(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "/integrations/teams", nil, nil)
}
