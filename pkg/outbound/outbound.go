// Package outbound delivers a tenant's committed events to the receivers its subscriptions name:
// signed Standard Webhooks requests (or a chat channel's messages, package channel), at least once and in seq order per run
// and subscription, retried with backoff for a day, each attempt recorded (docs/engines.md, "Outbound
// events"). The run log is the source: a delivery is driven by a commit seen on the table's
// stream, and a receiver that fails is caught up later from the log itself, so a slow or dead
// receiver holds up nothing but its own deliveries.
package outbound

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Formats a subscription delivers in.
const (
	// FormatStandard is a Standard Webhooks request: webhook-id, webhook-timestamp and
	// webhook-signature headers, body { type, timestamp, data, links? }.
	FormatStandard = "standard-webhooks"
	// FormatEmail is mail to each person an interrupt asks, at the address their contact names
	// (package contacts), through the deployment's mail service: no URL.
	FormatEmail = "email"
)

// A Channel posts the notices of the subscriptions of its format in a chat service's own form
// (Slack's Block Kit, a Teams card), with the decisions a click there may make where the
// tenant's app and the interrupt's deciders allow (interrupt.Deciders.Accepts): how a notice
// reads in a chat app is the channel's; when, to whom, signed how and retried how, the
// deliverer's. Package channel holds them; a deployment lists the ones it posts
// (Deliverer.Channels, Subscriptions.Channels).
type Channel interface {
	// Format is the subscription format the channel posts ("slack").
	Format() string
	// Render is the body posted for e to a subscription of tenant, n saying whom it notifies
	// and the links they follow, c being the commit that holds e. It may read the tenant's
	// contacts and app; its error is the host's own, and the delivery is tried again later.
	Render(ctx context.Context, tenant string, c runlog.Commit, e runlog.Envelope, n Notice, now time.Time) ([]byte, error)
}

// A Sender is a Channel that sends its notices itself, through its chat service's API (Teams'
// Bot Connector, with the bot's own token), rather than have the deliverer sign them and POST
// them to the subscription's URL: its subscriptions name a Conversation, not a URL. The
// deliverer still decides when and records each attempt, and retries a failed one.
type Sender interface {
	Channel
	// Send posts e's notice n to s's conversation, or updates what it posted of e's interrupt,
	// and reports the service's HTTP status (0 when none answered). An error wrapping ErrStore
	// is the host's own, before anything was sent: the batch is delivered again rather than the
	// attempt counted as the receiver's failure.
	Send(ctx context.Context, s Subscription, c runlog.Commit, e runlog.Envelope, n Notice, now time.Time) (status int, err error)
}

// Conversation is where a Sender's subscription posts: the chat service's base URL and one
// conversation there (Teams: the serviceUrl the Bot Framework names and a channel's or chat's
// conversation id).
type Conversation struct {
	ServiceURL     string `json:"serviceUrl"`
	ConversationID string `json:"conversationId"`
}

// ConversationCheck refuses a conversation a Sender's subscription may not name, saying why in
// a sentence; the error's text is shown to the client. Each Sender's package has its own
// (teams.Conversations.Check: one of Microsoft's Bot Connector hosts).
type ConversationCheck func(Conversation) error

// Asked is whom an email subscription mailed an interrupt's request: those its outcome is mailed
// to, once it has one. It is kept while the outcome is outstanding: dropped once told.
type Asked struct {
	// RunID and InterruptID name the interrupt asked about (a record's key).
	RunID       string      `json:"runId"`
	InterruptID string      `json:"interruptId"`
	Title       string      `json:"title"`
	To          []Addressee `json:"to"`
	// Deadline is the interrupt's, for its reminders to say; zero for none.
	Deadline time.Time `json:"deadline,omitzero"`
}

// AskedKey names one record of whom a subscription asked (Store.Asked, Store.DropAsked): the
// tenant's subscription that asked, and the interrupt it asked about, of its run. One value,
// so that the four ids it is kept under cannot be passed in another order.
type AskedKey struct {
	Tenant, Subscription string
	RunID, InterruptID   string
}

// MailedKey names the mark that a delivery of an event reached an address (Store.Mailed,
// Store.MarkMailed): the tenant's subscription, the event (EventID) and the address mailed,
// as the host compares addresses (its mailbox). One value, so that the four strings a mark is
// kept under cannot be passed in another order.
type MailedKey struct {
	Tenant, Subscription string
	EventID, Address     string
}

// Addressee is one address an interrupt's request was mailed to, and the principal it reaches
// alone, if any (an address two refs share, a list's, reaches no one principal).
type Addressee struct {
	Address   string `json:"address"`
	Name      string `json:"name,omitempty"`
	Principal string `json:"principal,omitempty"`
}

// AllEvents in a subscription's events names every event type.
const AllEvents = "*"

// EventTypes are the types a subscription may name: every event list-events returns.
var EventTypes = interrupt.Events

// What approval links a subscription's deliveries carry (Subscription.ApprovalLinks).
const (
	// LinksPlain links name the interrupt and hold no credential: whoever opens one signs in on
	// the page and decides as themselves. Every subscription gets these unless it opted in.
	LinksPlain = "plain"
	// LinksSigned links hold a token that decides as one named approver: only for a
	// subscription whose creator holds tokens:delegate and asked for them, a team's own mailer
	// that sends each link to its person and no one else.
	LinksSigned = "signed"
)

// Subscription is where a tenant's events go. Its signing secret lives in a secret store,
// shown once when the subscription is created and never again.
type Subscription struct {
	ID     string `json:"id"`
	Tenant string `json:"-"`
	URL    string `json:"url,omitempty"`
	// Conversation is where a Sender's subscription posts, in place of a URL; nil for others.
	Conversation *Conversation `json:"conversation,omitempty"`
	Events       []string      `json:"events"`
	Format       string        `json:"format"`
	// ApprovalLinks is LinksPlain or LinksSigned.
	ApprovalLinks string `json:"approvalLinks"`
	// CreatedBy is the subject that created it: a signed link never goes to the requester of
	// its interrupt, whatever it may delegate.
	CreatedBy string    `json:"-"`
	CreatedAt time.Time `json:"createdAt"`
}

// Wants reports whether the subscription names events of type t. "*" names the legacy aliases
// (approval.requested beside interrupt.requested) only for standard-webhooks receivers, whose
// code may still read them: mail and a chat channel would say the same thing twice.
func (s Subscription) Wants(t string) bool {
	if slices.Contains(s.Events, t) {
		return true
	}
	// The tenant's own events are named, never implied: a receiver of "*" written for runs'
	// events (each with a run id) would not expect one of no run.
	if slices.Contains(interrupt.TenantEvents, t) {
		return false
	}
	return slices.Contains(s.Events, AllEvents) && (s.Format == FormatStandard || s.Format == "" || !interrupt.IsLegacyType(t))
}

// wantsAny reports whether the subscription names any of envs.
func (s Subscription) wantsAny(envs []runlog.Envelope) bool {
	return slices.ContainsFunc(envs, func(e runlog.Envelope) bool { return s.Wants(e.Type) })
}

// Position is where an event sits in its run's log: the commit's seq and the envelope's index.
type Position struct {
	Seq   int64 `json:"seq"`
	Index int   `json:"index"`
}

// before reports whether p comes before o in the log.
func (p Position) before(o Position) bool {
	return p.Seq < o.Seq || (p.Seq == o.Seq && p.Index < o.Index)
}

// Cursor is how far one subscription's deliveries of one run have come: Next is the first event
// not yet delivered. While RetryAt is set the retrier owns the cursor and the stream leaves it
// alone, so the run's events keep their order behind the one that failed.
type Cursor struct {
	Tenant, Subscription, RunID string
	Next                        Position
	// Version is 0 for a cursor never saved; each save increments it, conditionally, so two
	// workers never both move one cursor.
	Version int64
	// Attempts counts the failed attempts of the event at Next; FailingSince is the first.
	Attempts     int
	FailingSince time.Time
	RetryAt      time.Time
	LastError    string
}

// Retry is an entry of the retry index: the cursor it names is due at At (a hint, re-validated
// against the cursor).
type Retry struct {
	At                          time.Time
	Tenant, Subscription, RunID string
}

// Attempt statuses.
const (
	StatusDelivered = "delivered"
	StatusRetrying  = "retrying"
	StatusFailed    = "failed"
)

// Attempt is one delivery attempt as GET /subscriptions/{id}/deliveries lists it.
type Attempt struct {
	// EventID is the delivery's webhook-id: <runId>:<seq>:<index>.
	EventID   string `json:"eventId"`
	EventType string `json:"eventType"`
	RunID     string `json:"runId"`
	Status    string `json:"status"`
	// Attempts is the attempt's number for its event, from 1.
	Attempts   int       `json:"attempts"`
	StatusCode int       `json:"statusCode,omitempty"`
	LastError  string    `json:"lastError,omitempty"`
	At         time.Time `json:"at"`
	// Resent marks an attempt an operator asked for (POST /subscriptions/{id}/deliveries): sent
	// once, beside the event's deliveries, which it neither moves nor retries.
	Resent bool `json:"resent,omitempty"`
	// Unreached are the refs an email subscription's mail could not reach ("principal carol"):
	// no contact, or none with an address.
	Unreached []string `json:"unreached,omitempty"`
	// Refused are the addresses an email subscription's mail was not sent to, past a bound of
	// the tenant's messages (MaxMailsPerEvent, MaxMailsPerTenantHour), each with why.
	Refused []string `json:"refused,omitempty"`
}

// Errors of the stores.
var (
	// ErrNoSubscription is what a store answers for a subscription it does not hold.
	ErrNoSubscription = errors.New("outbound: no such subscription")
	// ErrCursorMoved refuses to save a cursor another worker saved since it was read.
	ErrCursorMoved = errors.New("outbound: the cursor moved")
	// ErrLimit refuses a subscription to a tenant that holds as many as it may.
	ErrLimit = errors.New("outbound: the tenant holds as many subscriptions as it may")
)

// Store keeps subscriptions, cursors, attempts and the retry index (pkg/dynamo, pkg/inmem, held
// to the same behaviour by the suite of pkg/outbound/storetest, which both run). Tenant, subscription and run ids that are not ids
// (runlog.ValidID), and event ids ParseEventID refuses, answer runlog.ErrInvalidKey; a store
// that cannot be reached, throttles or fails answers an error wrapping interrupt.ErrUnavailable.
type Store interface {
	// CreateSubscription stores s unless its tenant holds limit subscriptions already
	// (ErrLimit), a bound that holds however many create at once. s.ID is new (the caller draws
	// it at random): what an id already held does is not said.
	CreateSubscription(ctx context.Context, s Subscription, limit int) error
	// Subscription reads one of tenant's subscriptions, or ErrNoSubscription (for another
	// tenant's, and for an id that is not one, too).
	Subscription(ctx context.Context, tenant, id string) (Subscription, error)
	// DeleteSubscription removes one of tenant's subscriptions and gives its place in the
	// tenant's limit back; one it does not hold is no error, and frees no place.
	DeleteSubscription(ctx context.Context, tenant, id string) error
	// Subscriptions lists tenant's subscriptions, oldest first; none for a tenant with none.
	Subscriptions(ctx context.Context, tenant string) ([]Subscription, error)

	// Cursor reads a cursor; one never saved comes back with Version 0.
	Cursor(ctx context.Context, tenant, subscription, runID string) (Cursor, error)
	// SaveCursor writes c as version c.Version+1 if the stored one is still c.Version, else
	// ErrCursorMoved (so does a save tried again after it was applied); it keeps the cursor
	// until expires.
	SaveCursor(ctx context.Context, c Cursor, expires time.Time) error

	// RecordAttempt keeps an attempt until expires. An attempt is its event at its time: one
	// recorded again is kept once.
	RecordAttempt(ctx context.Context, tenant, subscription string, a Attempt, expires time.Time) error
	// Attempts lists a subscription's most recent attempts not expired, newest first (by At), at
	// most limit (at least 1); none for a subscription with none.
	Attempts(ctx context.Context, tenant, subscription string, limit int) ([]Attempt, error)
	// Attempted reports whether an attempt of the subscription to deliver eventID is kept (not
	// expired): a resend sends a receiver only what its subscription was sent, never history
	// from before it existed or of a type it does not take.
	Attempted(ctx context.Context, tenant, subscription, eventID string) (bool, error)

	// Mailed reports whether the delivery of k.EventID reached k.Address already and the mark
	// is kept (not expired): an event delivered again mails only the addresses it has not
	// reached.
	Mailed(ctx context.Context, k MailedKey) (bool, error)
	// MarkMailed keeps, until expires, that k.EventID was mailed to k.Address; marking it again
	// is no error.
	MarkMailed(ctx context.Context, k MailedKey, expires time.Time) error
	// TakeMail counts one message of the tenant's into the hour at falls in, unless limit are
	// counted there already: then it counts nothing and answers false. The count is the
	// tenant's across its subscriptions; takers at once never count past limit. A tenant that
	// is not an id is runlog.ErrInvalidKey.
	TakeMail(ctx context.Context, tenant string, at time.Time, limit int) (bool, error)

	// RecordAsked keeps, until expires, whom an email subscription asked about the interrupt
	// a.InterruptID of run a.RunID; recording it again replaces it. Ids that are not ids
	// (runlog.ValidID) are runlog.ErrInvalidKey.
	RecordAsked(ctx context.Context, tenant, subscription string, a Asked, expires time.Time) error
	// Asked answers whom the subscription asked about an interrupt, and false when it asked no
	// one, the record expired or was dropped.
	Asked(ctx context.Context, k AskedKey) (Asked, bool, error)
	// AskedInRun lists the subscription's records of a run that are kept (not expired, not
	// dropped), by interrupt id; none is an empty list.
	AskedInRun(ctx context.Context, tenant, subscription, runID string) ([]Asked, error)
	// DropAsked removes a record once its outcome was told; one not kept is no error.
	DropAsked(ctx context.Context, k AskedKey) error

	// ScheduleRetry files r in the retry index; filing it again is no error (it is one entry).
	ScheduleRetry(ctx context.Context, r Retry) error
	// DueRetries lists the entries due at now (At not after it), oldest first, at most limit
	// (at least 1).
	DueRetries(ctx context.Context, now time.Time, limit int) ([]Retry, error)
	// DropRetry removes r's entry (r as DueRetries answered it); one not filed is no error.
	DropRetry(ctx context.Context, r Retry) error
}
