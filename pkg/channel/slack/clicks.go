package slack

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/interrupthost/interrupthost/pkg/channel"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// Tolerance is how far a click's signed timestamp may be from now, either way (Slack's own
// advice, and what slack-go's verifier allows): a captured click cannot be replayed later.
const Tolerance = 5 * time.Minute

// SlackBudget bounds each call to Slack a click makes before it is answered (the update through
// response_url, views.open): Slack waits 3 seconds for the answer, and the host's own reads and
// commit take a few tens of milliseconds.
const SlackBudget = 2 * time.Second

// MaxBody bounds a click's body: Slack's block_actions payload carries the message it came
// from, a few KiB; a message of 50 blocks stays far below this.
const MaxBody = 128 << 10

// Caster is the host as the clicks use it (host.Host): a ballot cast in one call that reads the
// run once, and, before a rejection's reason is asked, the interrupt as a page reads it.
type Caster interface {
	OpenAs(ctx context.Context, p interrupt.Principal, runID, interruptID string) (host.Opened, error)
	Cast(ctx context.Context, b host.Ballot) (host.Cast, error)
	Now() time.Time
}

// ContactReader reads one contact of a tenant (contacts.Store).
type ContactReader interface {
	Contact(ctx context.Context, tenant, kind, ref string) (contacts.Contact, error)
}

// DelegationReader reads a principal's delegation (channel.DelegationReader).
type DelegationReader = channel.DelegationReader

// Poster posts a message to a click's response_url (outbound.HTTPClient, which refuses private
// addresses unless the deployment allows them).
type Poster interface {
	Post(ctx context.Context, url string, headers map[string]string, body []byte) (int, error)
}

// Interactions serve POST /slack/interactions: they verify a click as Slack's, from the app of
// the tenant it names, and record it as the contact whose Slack member id clicked. Build once
// per process; safe for concurrent use.
type Interactions struct {
	Host     Caster
	Apps     Store
	Secrets  Secrets
	Keys     token.Keys
	Contacts ContactReader
	// Delegations say whose delegate a clicker may be (delegation.Store); nil: a click decides
	// only as an approver the request names.
	Delegations DelegationReader
	Poster      Poster
	// AllowPrivate lets a response_url be any http(s) URL (the local stack's Slack stand-in);
	// otherwise only Slack's own https://hooks.slack.com/ is posted to.
	AllowPrivate bool
	// SlackAPI is the base URL of Slack's Web API for views.open ("" is Slack's own).
	SlackAPI string
	Log      *slog.Logger
}

// Answer is what a click is answered: 200 and Body (empty, or a modal's errors), and what
// became of it, for the access log and the metrics.
type Answer struct {
	Body    []byte
	Outcome string
}

// Outcomes of a verified click.
const (
	OutcomeRecorded = "recorded"
	OutcomeRefused  = "refused"
	OutcomeIgnored  = "ignored"
	OutcomeAsked    = "asked" // Reject opened the modal that asks for a reason
)

// errSignature is every way a request can fail to be a click signed by a registered app: the
// answer is one 401, whichever it was, and nothing of any run is read or written.
var errSignature = interrupt.Errorf(interrupt.CodeUnauthorized, "not a request signed by a Slack app registered with this host")

// Handle verifies and serves one request; headers are its headers, names lowercased.
func (x *Interactions) Handle(ctx context.Context, headers map[string]string, body []byte) (Answer, error) {
	if len(body) > MaxBody {
		return Answer{}, interrupt.Errorf(interrupt.CodePayloadTooLarge, "the body exceeds %d bytes", MaxBody)
	}
	signers, err := x.verify(ctx, headers, body)
	if err != nil {
		return Answer{}, err
	}
	form, _ := url.ParseQuery(string(body)) // verify parsed it
	var cb slackgo.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		return Answer{Outcome: OutcomeIgnored}, nil // signed by the app, but nothing the host sent
	}
	switch {
	case cb.User.ID == "":
		return Answer{Outcome: OutcomeIgnored}, nil // no member clicked: nobody to decide as
	case cb.Type == slackgo.InteractionTypeBlockActions:
		for _, a := range cb.ActionCallback.BlockActions {
			if a.ActionID == ActionAccept || a.ActionID == ActionReject {
				s := x.signerOf(ctx, signers, a.Value)
				return x.click(ctx, s.tenant, s.creds, cb, a), nil
			}
		}
	case cb.Type == slackgo.InteractionTypeViewSubmission && cb.View.CallbackID == rejectModal:
		var st modalState
		_ = json.Unmarshal([]byte(cb.View.PrivateMetadata), &st) // submitReason refuses what is not
		return x.submitReason(ctx, x.signerOf(ctx, signers, st.Value).tenant, cb), nil
	}
	return Answer{Outcome: OutcomeIgnored}, nil // a Review link's click, or another app's feature
}

// signer is a tenant whose app's signing secret verified a click, and its app's credentials.
type signer struct {
	tenant string
	creds  Credentials
}

// signerOf is the signer a click decides for: the one, or, when several tenants registered the
// app with its own secret (each of them holds the app), the one the button's sealed value names
// (else the first, whose tenant aim then finds is not the button's, and refuses).
func (x *Interactions) signerOf(ctx context.Context, signers []signer, value string) signer {
	if len(signers) > 1 {
		if b, err := Open(ctx, x.Keys, value); err == nil {
			for _, s := range signers {
				if s.tenant == b.Tenant {
					return s
				}
			}
		}
	}
	return signers[0]
}

// verify checks Slack's v0 signature of a click against every tenant that registered the app
// and workspace it names, with each one's signing secret, and answers those it verifies with
// (one, but for tenants that share an app's secret): the timestamp first (no read for a stale
// one), then the registered pair, then the MAC in constant time; a secret just replaced is read
// again once. Another tenant registering the pair first, with a secret of its own, neither
// verifies the owner's clicks nor stops them verifying.
func (x *Interactions) verify(ctx context.Context, headers map[string]string, body []byte) ([]signer, error) {
	ts, sig := headers["x-slack-request-timestamp"], headers["x-slack-signature"]
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" || strings.HasPrefix(ts, "+") {
		return nil, errSignature
	}
	if d := x.Host.Now().Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return nil, errSignature
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, errSignature
	}
	var named struct {
		APIAppID string `json:"api_app_id"`
		Team     struct {
			ID string `json:"id"`
		} `json:"team"`
	}
	if json.Unmarshal([]byte(form.Get("payload")), &named) != nil || !ValidPair(named.APIAppID, named.Team.ID) {
		return nil, errSignature
	}
	tenants, err := x.Apps.SlackTenants(ctx, named.APIAppID, named.Team.ID)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", sig)
	var signers []signer
	var errs []error
	for _, tenant := range tenants {
		c, ok, err := x.signedBy(ctx, tenant, named.APIAppID, named.Team.ID, h, body)
		if err != nil {
			errs = append(errs, err) // one tenant's secret unread stops no other's click
		}
		if ok {
			signers = append(signers, signer{tenant, c})
		}
	}
	if len(signers) == 0 {
		return nil, cmp.Or(errors.Join(errs...), error(errSignature))
	}
	return signers, nil
}

// signedBy reports whether the tenant's app is the pair and its signing secret verifies the
// click, with the app's credentials.
func (x *Interactions) signedBy(ctx context.Context, tenant, appID, teamID string, h http.Header, body []byte) (Credentials, bool, error) {
	// A pair whose tenant has since registered another app no longer lists it, but for a
	// writer that died between its two writes: the tenant's app is read to be sure.
	switch a, err := x.Apps.SlackApp(ctx, tenant); {
	case errors.Is(err, ErrNotFound) || (err == nil && (a.AppID != appID || a.TeamID != teamID)):
		return Credentials{}, false, nil
	case err != nil:
		return Credentials{}, false, err
	}
	signed := func(list []string) (Credentials, bool) {
		c, err := CredentialsOf(list)
		if err != nil {
			return c, false
		}
		v, err := slackgo.NewSecretsVerifier(h, c.SigningSecret)
		if err != nil {
			return c, false
		}
		_, _ = v.Write(body)
		return c, v.Ensure() == nil
	}
	id := SecretID(tenant, appID, teamID)
	list, err := x.Secrets.Get(ctx, id)
	if err != nil {
		return Credentials{}, false, err
	}
	if c, ok := signed(list); ok {
		return c, true, nil
	}
	list, fresh, err := x.Secrets.Reload(ctx, id)
	if err != nil {
		return Credentials{}, false, err
	}
	c, ok := signed(list)
	return c, fresh && ok, nil
}

// A refusal is told to the clicker alone and records nothing.
type refusal struct{ text string }

func (r refusal) Error() string { return r.text }

func refuse(format string, a ...any) error { return refusal{text: fmt.Sprintf(format, a...)} }

// button is the button a click names, opened: the host's, for this tenant and this action.
func (x *Interactions) button(ctx context.Context, tenant, value, actionID string) (Button, error) {
	b, err := Open(ctx, x.Keys, value)
	if errors.Is(err, ErrButton) || (err == nil && (b.Tenant != tenant || ActionID(b.Action) != actionID)) {
		return b, refuse("This button was not made by this host for your workspace; nothing was recorded.")
	}
	return b, err
}

// identify is who a click of Slack member user decides as, under the one rule: the interrupt
// one a chat click may decide at all (interrupt.Deciders.Accepts), and the clicker the one of
// its named principals whose contact names that member id.
func (x *Interactions) identify(ctx context.Context, tenant string, o host.Opened, user string) (string, error) {
	if !o.Deciders.Accepts(interrupt.ViaChat) {
		return "", refuse("This request is decided on its page: open Review.")
	}
	return x.clicker(ctx, tenant, o.Deciders, user)
}

// mayDecide reports, before a rejection's reason is asked, whether the click could decide: the
// reason is asked only of someone whose rejection would count. It writes nothing; the
// submission is judged again when it is recorded.
func (x *Interactions) mayDecide(ctx context.Context, tenant string, b Button, user string) error {
	o, err := x.Host.OpenAs(ctx, interrupt.Principal{Tenant: tenant}, b.RunID, b.InterruptID)
	if err != nil {
		return refusalOf(err, o)
	}
	who, err := x.identify(ctx, tenant, o, user)
	if err != nil {
		return err
	}
	// Opened as the clicker: the host judges them, a delegate's place included.
	as, err := x.Host.OpenAs(ctx, interrupt.Principal{Subject: who, Tenant: tenant, Via: interrupt.ViaChat}, b.RunID, b.InterruptID)
	if err != nil {
		return refusalOf(err, as)
	}
	if as.Refused != nil {
		return refusalOf(as.Refused, as)
	}
	if v := as.Voted; v != nil {
		return refuse("%s already voted %s on this request; a vote counts once.", cmp.Or(v.OnBehalfOf, who), v.Action)
	}
	return nil
}

// clicker is the one principal a click of Slack member user may decide d's interrupt as
// (channel.Clickers: an approver the request names, or their delegate, whose contact names that
// member id). None, or two of them naming one member, decides nothing.
func (x *Interactions) clicker(ctx context.Context, tenant string, d interrupt.Deciders, user string) (string, error) {
	who, err := channel.Clickers(ctx, x.Contacts, x.Delegations, tenant, d, func(c contacts.Contact) bool { return c.Slack == user })
	if err != nil {
		return "", err
	}
	switch len(who) {
	case 0:
		return "", refuse("No contact of this workspace's tenant names your Slack account as one of this request's approvers, so a click of yours decides nothing. Open Review and sign in, or ask for your contact to name your Slack id.")
	case 1:
		return who[0], nil
	}
	return "", refuse("Your Slack account is the contact of several approvers of this request (%s); a click cannot say which you are. Open Review and sign in.", strings.Join(who, ", "))
}

// refusalOf says why err kept a click from deciding, in words for the clicker; an error of the
// host's own (a store's) is returned as it is.
func refusalOf(err error, o host.Opened) error {
	if words, ok := channel.Refusal(err, closedSummary(o), o.Voted); ok {
		return refusal{text: words}
	}
	return err
}

// click serves a block_actions click of Approve or Reject: it records the vote, or opens the
// modal that asks a rejection's reason where the tenant gave a bot token, or tells the clicker
// why not; then updates the message with the interrupt as the vote left it.
func (x *Interactions) click(ctx context.Context, tenant string, creds Credentials, cb slackgo.InteractionCallback, a *slackgo.BlockAction) Answer {
	b, err := x.button(ctx, tenant, a.Value, a.ActionID)
	if err == nil && b.Action == interrupt.ActionReject && creds.BotToken != "" {
		if err = x.mayDecide(ctx, tenant, b, cb.User.ID); err == nil {
			if err = x.askReason(ctx, creds.BotToken, cb, a.Value); err == nil {
				return Answer{Outcome: OutcomeAsked}
			}
		}
	}
	var o host.Opened
	if err == nil {
		o, err = x.record(ctx, tenant, b, cb.User.ID, "")
	}
	if err != nil {
		x.tell(ctx, cb.ResponseURL, err)
		return Answer{Outcome: OutcomeRefused}
	}
	x.respond(ctx, cb.ResponseURL, updated(o, cb.Message.Blocks))
	return Answer{Outcome: OutcomeRecorded}
}

// record decides the button's interrupt as the principal whose contact names Slack member
// user, with decidedAt now and the reason as the vote's feedback, in one host call that reads
// the run once (host.Cast), and answers the interrupt as the vote left it. The host judges it
// under the one rule and records it once: of two clicks of one person, the second is refused
// as already voted.
func (x *Interactions) record(ctx context.Context, tenant string, b Button, user, reason string) (host.Opened, error) {
	c, err := x.Host.Cast(ctx, host.Ballot{
		Principal: interrupt.Principal{Tenant: tenant, Via: interrupt.ViaChat},
		RunID:     b.RunID, InterruptID: b.InterruptID,
		Identify: func(ctx context.Context, o host.Opened) (string, error) { return x.identify(ctx, tenant, o, user) },
		Value: func(o host.Opened) (json.RawMessage, error) {
			if !slices.Contains(o.Payload.Data.Actions, b.Action) {
				return nil, refuse("This request does not offer %s; nothing was recorded.", b.Action)
			}
			return json.Marshal(struct {
				Action    interrupt.Action `json:"action"`
				DecidedAt string           `json:"decidedAt"`
				Feedback  string           `json:"feedback,omitempty"`
			}{b.Action, x.Host.Now().UTC().Format(runlog.TimeFormat), reason})
		},
	})
	if err != nil {
		return c.Interrupt, refusalOf(err, c.Interrupt)
	}
	return c.Interrupt, nil
}

// tell answers a refusal to the clicker alone; an error of the host's own is logged and told as
// a failure to record.
func (x *Interactions) tell(ctx context.Context, responseURL string, err error) {
	var r refusal
	if !errors.As(err, &r) {
		x.log().ErrorContext(ctx, "slack click", slog.String("error", err.Error()))
		r = refusal{text: "The host could not confirm your click just now: open Review to see whether it was recorded, and decide there if it was not."}
	}
	x.respond(ctx, responseURL, &slackgo.WebhookMessage{ResponseType: slackgo.ResponseTypeEphemeral, Text: r.text})
}

// respond posts msg to a click's response_url when it is Slack's (or any, where the deployment
// allows private targets). A failure is logged: the decision, if any, is recorded already.
func (x *Interactions) respond(ctx context.Context, responseURL string, msg *slackgo.WebhookMessage) {
	if !x.postable(responseURL) {
		x.log().WarnContext(ctx, "slack click: a response_url that is not Slack's is not posted to")
		return
	}
	b, err := json.Marshal(msg)
	if err == nil {
		var status int
		ctx, cancel := context.WithTimeout(ctx, SlackBudget)
		defer cancel()
		status, err = x.Poster.Post(ctx, responseURL, map[string]string{"Content-Type": "application/json"}, b)
		if err == nil && status/100 != 2 {
			err = fmt.Errorf("status %d", status)
		}
	}
	if err != nil {
		x.log().WarnContext(ctx, "slack click: the response_url refused the update", slog.String("error", err.Error()))
	}
}

// slackHooks is where Slack's response_urls point.
const slackHooks = "https://hooks.slack.com/"

func (x *Interactions) postable(raw string) bool {
	if strings.HasPrefix(raw, slackHooks) {
		return true
	}
	u, err := url.Parse(raw)
	return x.AllowPrivate && err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (x *Interactions) log() *slog.Logger {
	if x.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return x.Log
}
