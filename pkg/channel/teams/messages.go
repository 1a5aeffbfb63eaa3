package teams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/channel"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
	"github.com/interrupthost/interrupthost/pkg/words"
)

// MaxBody bounds an activity's body: an invoke carries the card's data and a few ids, a
// message a user's words; Teams' own bound of a message is 28 KiB.
const MaxBody = 64 << 10

// Caster is the host as the invokes use it (host.Host): a ballot cast in one call that reads
// the run once, and the interrupt as a page reads it for a refresh.
type Caster interface {
	OpenAs(ctx context.Context, p interrupt.Principal, runID, interruptID string) (host.Opened, error)
	Cast(ctx context.Context, b host.Ballot) (host.Cast, error)
	Now() time.Time
}

// ContactReader reads one contact of a tenant (contacts.Store).
type ContactReader interface {
	Contact(ctx context.Context, tenant, kind, ref string) (contacts.Contact, error)
}

// Verifier verifies the Bot Framework's token of an activity (KeySet).
type Verifier interface {
	Verify(ctx context.Context, authorization, channelID, serviceURL string) (Claims, error)
}

// Messages serve POST /teams/messages, the bots' messaging endpoint: they verify each
// activity as the Bot Framework's, for a bot a tenant registered, and record a card's
// Approve or Reject as the contact whose teams id clicked. Build once per process; safe for
// concurrent use.
type Messages struct {
	Host     Caster
	Bots     Store
	Verifier Verifier
	Keys     token.Keys
	Contacts ContactReader
	// Delegations say whose delegate a clicker may be (delegation.Store); nil: a click decides
	// only as an approver the request names.
	Delegations channel.DelegationReader
	// BaseURL is the public base of the host's API, where the approval page is served: a
	// card's Review.
	BaseURL string
	Log     *slog.Logger
}

// Answer is what an activity is answered: 200 and Body (empty for an activity the host does
// nothing with), and what became of it, for the access log and the metrics.
type Answer struct {
	Body    []byte
	Outcome string
}

// Outcomes of a verified activity.
const (
	OutcomeRecorded  = "recorded"
	OutcomeRefused   = "refused"
	OutcomeRefreshed = "refreshed"
	OutcomeIgnored   = "ignored"
)

// errUnauthorized is every way a request can fail to be an activity the Bot Framework sent a
// registered bot: one 401, whichever it was, and nothing of any run read or written.
var errUnauthorized = interrupt.Errorf(interrupt.CodeUnauthorized, "not an activity the Bot Framework sent a Teams bot registered with this host")

// inbound is what the host reads of an activity.
type inbound struct {
	Type       string `json:"type"`
	Name       string `json:"name"`
	ChannelID  string `json:"channelId"`
	ServiceURL string `json:"serviceUrl"`
	From       struct {
		AADObjectID string `json:"aadObjectId"`
	} `json:"from"`
	Conversation struct {
		TenantID string `json:"tenantId"`
	} `json:"conversation"`
	ChannelData struct {
		Tenant struct {
			ID string `json:"id"`
		} `json:"tenant"`
	} `json:"channelData"`
	Value struct {
		Action struct {
			Type string `json:"type"`
			Verb string `json:"verb"`
			Data struct {
				V string `json:"v"`
			} `json:"data"`
		} `json:"action"`
	} `json:"value"`
}

// entraTenant is the Entra tenant the activity's user is of.
func (a inbound) entraTenant() string {
	if a.ChannelData.Tenant.ID != "" {
		return strings.ToLower(a.ChannelData.Tenant.ID)
	}
	return strings.ToLower(a.Conversation.TenantID)
}

// Handle verifies and serves one activity; headers are its headers, names lowercased.
func (m *Messages) Handle(ctx context.Context, headers map[string]string, body []byte) (Answer, error) {
	if len(body) > MaxBody {
		return Answer{}, interrupt.Errorf(interrupt.CodePayloadTooLarge, "the body exceeds %d bytes", MaxBody)
	}
	var a inbound
	if json.Unmarshal(body, &a) != nil {
		return Answer{}, errUnauthorized
	}
	claims, err := m.Verifier.Verify(ctx, headers["authorization"], a.ChannelID, a.ServiceURL)
	if errors.Is(err, errToken) {
		return Answer{}, errUnauthorized
	}
	if err != nil {
		return Answer{}, err
	}
	appID := strings.ToLower(claims.Audience)
	tenants, err := m.Bots.TeamsTenants(ctx, appID)
	if err != nil {
		return Answer{}, err
	}
	if len(tenants) == 0 {
		return Answer{}, errUnauthorized
	}
	if a.Type != "invoke" || a.Name != "adaptiveCard/action" {
		return Answer{Outcome: OutcomeIgnored}, nil // an installation, a message: nothing to do
	}
	c, outcome, err := m.invoke(ctx, a, appID, tenants)
	var r refusal
	switch {
	case errors.As(err, &r):
		return Answer{Body: message(r.text), Outcome: OutcomeRefused}, nil
	case err != nil:
		m.log().ErrorContext(ctx, "teams invoke", slog.String("error", err.Error()))
		return Answer{Body: message("The host could not confirm your click just now: open Review to see whether it was recorded, and decide there if it was not."), Outcome: OutcomeRefused}, nil
	}
	b, err := json.Marshal(map[string]any{"statusCode": 200, "type": ContentType, "value": c})
	if err != nil {
		return Answer{}, err
	}
	return Answer{Body: b, Outcome: outcome}, nil
}

// message is the invoke's answer that tells the clicker text and changes nothing.
func message(text string) []byte {
	b, _ := json.Marshal(map[string]any{"statusCode": 200, "type": "application/vnd.microsoft.activity.message", "value": text})
	return b
}

// A refusal is told to the clicker and records nothing.
type refusal struct{ text string }

func (r refusal) Error() string { return r.text }

func refuse(format string, a ...any) error { return refusal{text: fmt.Sprintf(format, a...)} }

// invoke serves an adaptiveCard/action: the card's data opened and held against the bot the
// token was for, then the vote cast (or, for the refresh, the interrupt read); it answers the
// card as the interrupt now stands.
func (m *Messages) invoke(ctx context.Context, a inbound, appID string, tenants []string) (map[string]any, string, error) {
	act := a.Value.Action
	aim, err := Open(ctx, m.Keys, act.Data.V)
	if errors.Is(err, ErrData) || (err == nil && act.Verb != Verb(aim.Action) && !(act.Verb == VerbRefresh && aim.Action == "")) {
		return nil, "", refuse("This card was not made by this host; nothing was recorded.")
	}
	if err != nil {
		return nil, "", err
	}
	// The card's tenant must have registered the bot the token was for, in the Entra tenant
	// the click came from: another tenant's bot decides nothing of this one's.
	if !slices.Contains(tenants, aim.Tenant) {
		return nil, "", refuse("This card is not of your organisation's bot; nothing was recorded.")
	}
	switch bot, err := m.Bots.TeamsBot(ctx, aim.Tenant); {
	case errors.Is(err, ErrNotFound) || (err == nil && (bot.AppID != appID || bot.EntraTenant != a.entraTenant())):
		return nil, "", refuse("This card is not of your organisation's bot; nothing was recorded.")
	case err != nil:
		return nil, "", err
	}
	if act.Verb == VerbRefresh {
		o, err := m.Host.OpenAs(ctx, interrupt.Principal{Tenant: aim.Tenant}, aim.RunID, aim.InterruptID)
		if err != nil {
			return nil, "", refusalOf(err, o)
		}
		c, err := m.card(ctx, aim.Tenant, o)
		return c, OutcomeRefreshed, err
	}
	user := strings.ToLower(a.From.AADObjectID)
	cast, err := m.Host.Cast(ctx, host.Ballot{
		Principal: interrupt.Principal{Tenant: aim.Tenant, Via: interrupt.ViaChat},
		RunID:     aim.RunID, InterruptID: aim.InterruptID,
		Identify: func(ctx context.Context, o host.Opened) (string, error) {
			if !o.Deciders.Accepts(interrupt.ViaChat) {
				return "", refuse("This request is decided on its page: open Review.")
			}
			return m.clicker(ctx, aim.Tenant, o.Deciders, user)
		},
		Value: func(o host.Opened) (json.RawMessage, error) {
			if !slices.Contains(o.Payload.Data.Actions, aim.Action) {
				return nil, refuse("This request does not offer %s; nothing was recorded.", aim.Action)
			}
			return json.Marshal(struct {
				Action    interrupt.Action `json:"action"`
				DecidedAt string           `json:"decidedAt"`
			}{aim.Action, m.Host.Now().UTC().Format(runlog.TimeFormat)})
		},
	})
	if err != nil {
		return nil, "", refusalOf(err, cast.Interrupt)
	}
	c, err := m.card(ctx, aim.Tenant, cast.Interrupt)
	return c, OutcomeRecorded, err
}

// card is the card of o as it now stands, its Review the approval page under m's base.
func (m *Messages) card(ctx context.Context, tenant string, o host.Opened) (map[string]any, error) {
	return standing(ctx, m.Keys, tenant, o, strings.TrimSuffix(m.BaseURL, "/")+"/approve/"+o.RunID+"/"+o.InterruptID)
}

// standing is the card of o as it now stands: its votes or its outcome, and the decisions while
// it is open to a chat click; review is its Review link. An invoke answers it, and the
// deliverer puts it in place of the card it posted (Channel.Send).
func standing(ctx context.Context, keys token.Keys, tenant string, o host.Opened, review string) (map[string]any, error) {
	title := ""
	if ab := about(o.Raw); len(ab) > 0 {
		title = ab[0]
	}
	// The headline says what the card is now: a request, or its outcome.
	event := interrupt.EventRequested
	switch o.Status {
	case interrupt.StatusResolved:
		event = interrupt.EventResolved
	case interrupt.StatusExpired:
		event = interrupt.EventExpired
	}
	v := view{Headline: headline(runlog.Envelope{Type: event, RunID: o.RunID}, title), About: about(o.Raw),
		RunID: o.RunID, Deadline: o.Deadline, For: o.Payload.Data.ApproversList, Review: review}
	if o.Status == interrupt.StatusPending {
		v.Status = pending(o.Votes, o.Tally)
		if o.Deciders.Accepts(interrupt.ViaChat) && keys != nil {
			var err error
			if v.Decide, v.Refresh, err = sealed(ctx, keys, Aim{Tenant: tenant, RunID: o.RunID, InterruptID: o.InterruptID}, o.Payload.Data.Actions); err != nil {
				return nil, err
			}
		}
	} else {
		v.Status, v.Deadline = closed(o), time.Time{}
	}
	return card(v), nil
}

// closed says what became of a request no longer pending: "Accepted by bob".
func closed(o host.Opened) string {
	switch o.Status {
	case interrupt.StatusResolved:
		var rv struct {
			Action string `json:"action"`
		}
		_ = json.Unmarshal(o.Outcome, &rv) // a value without it says less
		s, ok := words.Decided(rv.Action)
		if !ok {
			s = "Decided"
		}
		if o.DecidedBy != "" {
			s += " by " + o.DecidedBy
		}
		return s
	case interrupt.StatusExpired:
		return "Expired without a decision"
	case interrupt.StatusCancelled:
		return "Closed: its run ended"
	}
	return string(o.Status)
}

// clicker is the one principal a click of Entra user may decide d's interrupt as
// (channel.Clickers: an approver the request names, or their delegate, whose contact names that
// Entra object id). None, or two of them naming one user, decides nothing.
func (m *Messages) clicker(ctx context.Context, tenant string, d interrupt.Deciders, user string) (string, error) {
	var who []string
	if user != "" {
		var err error
		if who, err = channel.Clickers(ctx, m.Contacts, m.Delegations, tenant, d, func(c contacts.Contact) bool { return c.Teams == user }); err != nil {
			return "", err
		}
	}
	switch len(who) {
	case 0:
		return "", refuse("No contact names your Teams account as one of this request's approvers, so a click of yours decides nothing. Open Review and sign in, or ask for your contact to name your Teams id.")
	case 1:
		return who[0], nil
	}
	return "", refuse("Your Teams account is the contact of several approvers of this request (%s); a click cannot say which you are. Open Review and sign in.", strings.Join(who, ", "))
}

// refusalOf says why err kept a click from deciding, in words for the clicker; an error of the
// host's own (a store's) is returned as it is.
func refusalOf(err error, o host.Opened) error {
	var r refusal
	if errors.As(err, &r) {
		return err
	}
	if words, ok := channel.Refusal(err, closed(o), o.Voted); ok {
		return refusal{text: words}
	}
	return err
}

func (m *Messages) log() *slog.Logger {
	if m.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return m.Log
}
