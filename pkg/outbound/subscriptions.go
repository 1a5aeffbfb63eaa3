package outbound

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// SecretStore keeps subscriptions' signing secrets (webhook.Cache over Secrets Manager): never
// in the table, never in a log line, in an answer only when the subscription is created.
type SecretStore interface {
	// Put creates or replaces the subscription's secrets.
	Put(ctx context.Context, id string, secrets []string) error
	// Delete removes them; a subscription with none is no error.
	Delete(ctx context.Context, id string) error
}

// Subscriptions manages a tenant's subscriptions. Safe for concurrent use.
type Subscriptions struct {
	Store   Store
	Secrets SecretStore
	Targets Targets
	// Mail says the deployment sends mail (it names a sender): email subscriptions are refused
	// otherwise.
	Mail bool
	// Channels are the formats of the chat channels the deployment posts (Channel.Format):
	// a subscription may name them, with plain links only (a channel reaches many people).
	Channels []string
	// Conversations check the conversation a subscription of each Sender's format names (Teams:
	// teams.Format); a format listed here takes a conversation and no URL, and has no signing
	// secret, since the channel's service authenticates the host rather than a signature.
	Conversations map[string]ConversationCheck
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Limits of subscriptions.
const (
	MaxSubscriptions = 20
	MaxEventTypes    = 32
	// MaxDeliveriesListed is how many recent attempts GET /subscriptions/{id}/deliveries shows.
	MaxDeliveriesListed = 100
)

// Request creates a subscription.
type Request struct {
	URL string `json:"url,omitempty"`
	// Conversation is where a Sender's subscription posts (format teams), in place of a URL.
	Conversation *Conversation `json:"conversation,omitempty"`
	Events       []string      `json:"events"`
	Format       string        `json:"format,omitempty"`
	// ApprovalLinks is LinksPlain (the default) or LinksSigned.
	ApprovalLinks string `json:"approvalLinks,omitempty"`
}

// Created is a new subscription with its signing secret, which is never shown again; none for
// the email format, whose messages nothing signs.
type Created struct {
	Subscription
	Secret string `json:"secret,omitempty"`
}

// check validates a request, reporting every failing field.
func (m *Subscriptions) check(ctx context.Context, req *Request) []interrupt.FieldError {
	var fields []interrupt.FieldError
	if req.Format == "" {
		req.Format = FormatStandard
	}
	if req.ApprovalLinks == "" {
		req.ApprovalLinks = LinksPlain
	}
	channel := slices.Contains(m.Channels, req.Format)
	switch {
	case req.Format == FormatStandard, channel:
	case req.Format == FormatEmail:
		if !m.Mail {
			fields = append(fields, interrupt.FieldError{Path: "/format", Message: "this deployment sends no mail: it names no sender (SenderAddress)"})
		}
	default:
		fields = append(fields, interrupt.FieldError{Path: "/format", Message: "must be one of " + strings.Join(append([]string{FormatStandard, FormatEmail}, m.Channels...), ", ")})
	}
	switch {
	case req.ApprovalLinks != LinksPlain && req.ApprovalLinks != LinksSigned:
		fields = append(fields, interrupt.FieldError{Path: "/approvalLinks", Message: "must be plain or signed"})
	case req.ApprovalLinks == LinksSigned && channel:
		fields = append(fields, interrupt.FieldError{Path: "/approvalLinks", Message: "a channel reaches many people: only a receiver that sends each link to its person (standard-webhooks, email) takes signed links"})
	}
	conversation, converses := m.Conversations[req.Format]
	switch {
	case converses && req.URL != "":
		fields = append(fields, interrupt.FieldError{Path: "/url", Message: "must be absent: a " + req.Format + " subscription names a conversation"})
	case converses && req.Conversation == nil:
		fields = append(fields, interrupt.FieldError{Path: "/conversation", Message: "must name the conversation to post to: {serviceUrl, conversationId}"})
	case converses:
		if err := conversation(*req.Conversation); err != nil {
			fields = append(fields, interrupt.FieldError{Path: "/conversation", Message: err.Error()})
		}
	case req.Conversation != nil:
		fields = append(fields, interrupt.FieldError{Path: "/conversation", Message: "must be absent: only a subscription of a format that posts to a conversation names one"})
	}
	switch {
	case converses:
	case req.Format == FormatEmail && req.URL != "":
		fields = append(fields, interrupt.FieldError{Path: "/url", Message: "must be absent: mail goes to each person's contact"})
	case req.Format != FormatEmail:
		if err := m.Targets.Check(ctx, req.URL); err != nil {
			fields = append(fields, interrupt.FieldError{Path: "/url", Message: err.Error()})
		}
	}
	if len(req.Events) < 1 || len(req.Events) > MaxEventTypes {
		fields = append(fields, interrupt.FieldError{Path: "/events", Message: fmt.Sprintf("must list 1 to %d event types, or [\"*\"]", MaxEventTypes)})
	}
	for i, t := range req.Events {
		if t != AllEvents && !slices.Contains(EventTypes, t) {
			fields = append(fields, interrupt.FieldError{Path: fmt.Sprintf("/events/%d", i), Message: "must be \"*\" or one of " + strings.Join(EventTypes, ", ")})
		}
	}
	return fields
}

// Create subscribes a receiver to the caller's tenant's events. The secret is stored first, so
// a subscription that posts never exists without it; an email subscription has none.
func (m *Subscriptions) Create(ctx context.Context, p interrupt.Principal, req Request) (Created, error) {
	if fields := m.check(ctx, &req); len(fields) > 0 {
		return Created{}, interrupt.Invalid("the subscription is not acceptable", fields...)
	}
	if req.ApprovalLinks == LinksSigned && !p.Holds(interrupt.ScopeTokensDelegate) {
		return Created{}, interrupt.Errorf(interrupt.CodeForbidden,
			"signed approval links decide as the approvers they name: a subscription receives them only when its creator holds %s", interrupt.ScopeTokensDelegate)
	}
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	slices.Sort(req.Events)
	s := Subscription{
		ID: "sub_" + strings.ToLower(rand.Text()), Tenant: p.Tenant, URL: req.URL, Conversation: req.Conversation,
		Events: slices.Compact(req.Events), Format: req.Format, ApprovalLinks: req.ApprovalLinks, CreatedBy: p.Subject, CreatedAt: now().UTC(),
	}
	var secret string
	if m.signed(s) {
		secret = NewSecret()
		if err := m.Secrets.Put(ctx, s.ID, []string{secret}); err != nil {
			return Created{}, err
		}
	}
	if err := m.Store.CreateSubscription(ctx, s, MaxSubscriptions); err != nil {
		if secret != "" {
			if derr := m.Secrets.Delete(context.WithoutCancel(ctx), s.ID); derr != nil {
				return Created{}, errors.Join(err, derr)
			}
		}
		if errors.Is(err, ErrLimit) {
			return Created{}, interrupt.Errorf(interrupt.CodeConflict, "a tenant has at most %d subscriptions; delete one first", MaxSubscriptions)
		}
		return Created{}, err
	}
	return Created{Subscription: s, Secret: secret}, nil
}

// Get reads one of the caller's tenant's subscriptions; another tenant's does not exist.
func (m *Subscriptions) Get(ctx context.Context, p interrupt.Principal, id string) (Subscription, error) {
	s, err := m.Store.Subscription(ctx, p.Tenant, id)
	if errors.Is(err, ErrNoSubscription) {
		return s, interrupt.Errorf(interrupt.CodeNotFound, "no subscription %s", id)
	}
	return s, err
}

// List lists the caller's tenant's subscriptions, oldest first (at most MaxSubscriptions).
func (m *Subscriptions) List(ctx context.Context, p interrupt.Principal) ([]Subscription, error) {
	subs, err := m.Store.Subscriptions(ctx, p.Tenant)
	if err != nil {
		return nil, err
	}
	subs = slices.Clone(subs)
	slices.SortFunc(subs, func(a, b Subscription) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return subs, nil
}

// Delete removes a subscription, then its secret: nothing is delivered to it from then on (a
// retry due finds it gone), and its cursors and attempts expire with their retention.
func (m *Subscriptions) Delete(ctx context.Context, p interrupt.Principal, id string) error {
	s, err := m.Get(ctx, p, id)
	if err != nil {
		return err
	}
	if err := m.Store.DeleteSubscription(ctx, p.Tenant, id); err != nil {
		return err
	}
	if !m.signed(s) {
		return nil // it has no secret
	}
	return m.Secrets.Delete(ctx, id)
}

// signed reports whether s's deliveries are signed with a secret of its own: not mail, nor a
// Sender's posts, which its chat service authenticates.
func (m *Subscriptions) signed(s Subscription) bool {
	_, converses := m.Conversations[s.Format]
	return s.Format != FormatEmail && !converses && s.Conversation == nil
}

// Deliveries lists a subscription's recent attempts, newest first.
func (m *Subscriptions) Deliveries(ctx context.Context, p interrupt.Principal, id string) ([]Attempt, error) {
	if _, err := m.Get(ctx, p, id); err != nil {
		return nil, err
	}
	return m.Store.Attempts(ctx, p.Tenant, id, MaxDeliveriesListed)
}
