package client

import (
	"context"
	"net/http"
)

// Subscription is where the host delivers a tenant's events.
type Subscription struct {
	ID string `json:"id"`
	// URL is the receiver; an email subscription has none.
	URL string `json:"url,omitempty"`
	// Conversation is where a teams subscription posts its cards (InConversation).
	Conversation *Conversation `json:"conversation,omitempty"`
	Events       []string      `json:"events"`
	Format       string        `json:"format"`
	// ApprovalLinks is "plain" (links that name the interrupt; the page signs the approver in)
	// or "signed" (a token per named approver; WithSignedLinks).
	ApprovalLinks string `json:"approvalLinks"`
	CreatedAt     string `json:"createdAt"`
	// Secret signs the deliveries; the host shows it only in Subscribe's answer.
	Secret string `json:"secret,omitempty"`
}

// Subscribe has the host deliver the caller's tenant's events of the types named (["*"]: all)
// to url, in format "standard-webhooks" (or "slack"), or mails them to the people they ask
// (format "email", url ""), or posts them as cards to a Teams conversation (format "teams",
// url "", InConversation). Keep the answer's Secret: it verifies the deliveries (NewReceiver)
// and is never shown again.
func (c *Client) Subscribe(ctx context.Context, url string, events []string, format string, opts ...SubscribeOption) (Subscription, error) {
	req := map[string]any{"events": events, "format": format}
	if url != "" {
		req["url"] = url
	}
	for _, opt := range opts {
		opt(req)
	}
	var out Subscription
	err := c.do(ctx, http.MethodPost, "/subscriptions", req, &out)
	return out, err
}

// SubscribeOption sets a member of the subscription Subscribe asks for.
type SubscribeOption func(map[string]any)

// WithSignedLinks asks for approval links that each hold a token deciding as one named
// approver, for a receiver that sends each link to its person (a team's own mailer). The host
// grants them only to a caller holding tokens:delegate.
func WithSignedLinks() SubscribeOption {
	return func(req map[string]any) { req["approvalLinks"] = "signed" }
}

// Conversation is a Teams conversation the tenant's bot is in: the serviceUrl the Bot
// Framework names it by and its id.
type Conversation struct {
	ServiceURL     string `json:"serviceUrl"`
	ConversationID string `json:"conversationId"`
}

// InConversation has a teams subscription (format "teams", url "") post its cards to the
// conversation conversationID reached at serviceURL, as the tenant's bot.
func InConversation(serviceURL, conversationID string) SubscribeOption {
	return func(req map[string]any) {
		req["conversation"] = Conversation{ServiceURL: serviceURL, ConversationID: conversationID}
	}
}

// Unsubscribe deletes a subscription: nothing more is delivered to it.
func (c *Client) Unsubscribe(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/subscriptions/"+esc(id), nil, nil)
}

// Attempt is one delivery attempt of a subscription.
type Attempt struct {
	EventID    string `json:"eventId"`
	EventType  string `json:"eventType"`
	RunID      string `json:"runId"`
	Status     string `json:"status"`
	Attempts   int    `json:"attempts"`
	StatusCode int    `json:"statusCode,omitempty"`
	LastError  string `json:"lastError,omitempty"`
	At         string `json:"at"`
	// Resent marks an operator's resend (Resend).
	Resent bool `json:"resent,omitempty"`
	// Unreached are the refs an email subscription's mail could not reach: no contact, or no
	// address.
	Unreached []string `json:"unreached,omitempty"`
	// Refused are the addresses an email subscription's mail was not sent to, past a bound of
	// the tenant's mail (per event, per hour), each with why.
	Refused []string `json:"refused,omitempty"`
}

// Resend sends the event eventID (as a delivery's webhook-id names it: <runId>:<seq>:<index>)
// to the subscription's receiver again, now, once, and answers the attempt: delivered, or
// failed with the receiver's answer. Nothing else moves; a failed resend is not retried. Only an
// event the subscription was sent is sent again: another is a 404 problem.
func (c *Client) Resend(ctx context.Context, id, eventID string) (Attempt, error) {
	var out Attempt
	err := c.do(ctx, http.MethodPost, "/subscriptions/"+esc(id)+"/deliveries", map[string]string{"eventId": eventID}, &out)
	return out, err
}

// Deliveries lists a subscription's recent delivery attempts, newest first.
func (c *Client) Deliveries(ctx context.Context, id string) ([]Attempt, error) {
	var out struct {
		Deliveries []Attempt `json:"deliveries"`
	}
	err := c.do(ctx, http.MethodGet, "/subscriptions/"+esc(id)+"/deliveries", nil, &out)
	return out.Deliveries, err
}

// Subscriptions lists the tenant's subscriptions, oldest first (without their secrets).
func (c *Client) Subscriptions(ctx context.Context) ([]Subscription, error) {
	var out struct {
		Subscriptions []Subscription `json:"subscriptions"`
	}
	err := c.do(ctx, http.MethodGet, "/subscriptions", nil, &out)
	return out.Subscriptions, err
}

// Subscription reads one of the tenant's subscriptions (without its secret).
func (c *Client) Subscription(ctx context.Context, id string) (Subscription, error) {
	var out Subscription
	err := c.do(ctx, http.MethodGet, "/subscriptions/"+esc(id), nil, &out)
	return out, err
}
