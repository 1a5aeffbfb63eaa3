package teams

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Posted is where a teams subscription's card of one interrupt is: the activity the Bot
// Connector answered its POST with, which later events of the interrupt update in place, and
// the card's Review link as first posted (a later event's notice may carry none).
type Posted struct {
	ActivityID string `json:"activityId"`
	Review     string `json:"review,omitempty"`
}

// Activities keep the activity each teams subscription posted of an interrupt, keyed as the
// deliverer keys whom a subscription asked (tenant, subscription, run, interrupt):
// dynamo.Outbound and inmem.Outbound, held to one behaviour by teams/storetest.Activities. A
// key that names no one interrupt answers runlog.ErrInvalidKey.
type Activities interface {
	PutTeamsActivity(ctx context.Context, k outbound.AskedKey, p Posted, expires time.Time) error
	// TeamsActivity answers the activity posted, and false when none was (or it expired).
	TeamsActivity(ctx context.Context, k outbound.AskedKey) (Posted, bool, error)
}

// ActivityRetention is how long an activity id is kept: as long as a delivery's cursor, past
// any interrupt's deadline and the deliverer's day of retries.
const ActivityRetention = outbound.CursorRetention

// DefaultTokenURL is the Microsoft identity platform's token endpoint a multi-tenant bot's
// client-credentials grant goes to (Bot Framework's "botframework.com" tenant).
const DefaultTokenURL = "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token"

// tokenScope is what a bot's token is for: the Bot Connector's API.
const tokenScope = "https://api.botframework.com/.default"

// connectorHosts are the Bot Connector's hosts a Teams conversation's serviceUrl names: the
// commercial cloud's (by region: /amer/, /emea/, /apac/, ...) and the government clouds'.
var connectorHosts = []string{
	"smba.trafficmanager.net",
	"smba.infra.gcc.teams.microsoft.com",
	"smba.infra.gov.teams.microsoft.us",
	"smba.infra.dod.teams.microsoft.us",
}

// conversationID is how Teams writes a conversation's id ("19:...@thread.tacv2", "a:1...",
// "19:...;messageid=..."): no '/', '?' or '#', which would reach another path of the API.
var conversationID = regexp.MustCompile(`^[A-Za-z0-9:@._;=\-]{1,512}$`)

// Conversations decides which conversations a teams subscription may post to.
// AllowPrivate (the template's AllowPrivateDeliveryTargets, on locally) admits any http or
// https serviceUrl, such as the local stack's stand-in; else it must be one of Microsoft's
// Bot Connector hosts over https: the host sends the bot's token there, and nowhere else.
type Conversations struct {
	AllowPrivate bool
}

// Check refuses a conversation a subscription may not name (outbound.ConversationCheck).
func (cs Conversations) Check(c outbound.Conversation) error {
	u, err := url.Parse(c.ServiceURL)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return errors.New("serviceUrl must be the absolute URL the Bot Framework names the conversation's service by")
	case cs.AllowPrivate && (u.Scheme == "http" || u.Scheme == "https"):
	case u.Scheme != "https" || u.Port() != "" || !isConnector(u.Hostname()):
		return fmt.Errorf("serviceUrl must be one of Microsoft's Bot Connector hosts over https (%s)", strings.Join(connectorHosts, ", "))
	}
	if !conversationID.MatchString(c.ConversationID) {
		return errors.New("conversationId must be a Teams conversation's id (\"19:...@thread.tacv2\"), at most 512 characters")
	}
	return nil
}

func isConnector(host string) bool {
	for _, h := range connectorHosts {
		if strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}

// RunReader reads a run as it now stands (outbound.Reader's Tail, dynamo.Table).
type RunReader interface {
	Tail(ctx context.Context, k runlog.Key) (*runlog.Checkpoint, []runlog.Commit, error)
}

// Connector posts as a tenant's bot through the Bot Connector's REST API, with the bot's token
// from the Microsoft identity platform's client-credentials grant: one token source per bot
// (app id and password), each token reused until shortly before it expires. Build once per
// process; safe for concurrent use.
type Connector struct {
	// Secrets read the bots' passwords (SecretID).
	Secrets interface {
		Get(ctx context.Context, id string) ([]string, error)
	}
	// TokenURL is the token endpoint; "" is DefaultTokenURL.
	TokenURL string
	// Client makes the requests; nil is one bounded by outbound.Timeout.
	Client *http.Client

	mu      sync.Mutex
	sources map[[sha256.Size]byte]oauth2.TokenSource
}

func (cn *Connector) client() *http.Client {
	if cn.Client != nil {
		return cn.Client
	}
	return &http.Client{Timeout: outbound.Timeout}
}

// token is a bearer token of bot b, whose password the secret store holds.
func (cn *Connector) token(ctx context.Context, b Bot) (string, error) {
	pw, err := cn.Secrets.Get(ctx, SecretID(b.Tenant, b.AppID))
	if err != nil || len(pw) == 0 {
		return "", fmt.Errorf("%w: the Teams bot's password could not be read", outbound.ErrStore)
	}
	tokenURL := cn.TokenURL
	if tokenURL == "" {
		tokenURL = DefaultTokenURL
	}
	// A source per app id and password: a bot registered again with a new password gets a
	// token of its own, and a token is never shared across bots.
	key := sha256.Sum256([]byte(tokenURL + "\x00" + b.AppID + "\x00" + pw[0]))
	cn.mu.Lock()
	src, ok := cn.sources[key]
	if !ok {
		cfg := clientcredentials.Config{ClientID: b.AppID, ClientSecret: pw[0], TokenURL: tokenURL,
			Scopes: []string{tokenScope}, AuthStyle: oauth2.AuthStyleInParams}
		// The source outlives this call: its requests are made with the connector's client, not
		// under this delivery's context.
		src = cfg.TokenSource(context.WithValue(context.Background(), oauth2.HTTPClient, cn.client()))
		if cn.sources == nil {
			cn.sources = map[[sha256.Size]byte]oauth2.TokenSource{}
		}
		cn.sources[key] = src
	}
	cn.mu.Unlock()
	tok, err := src.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil {
			return "", fmt.Errorf("the Microsoft identity platform refused the bot's token (%d)", re.Response.StatusCode)
		}
		return "", errors.New("the bot's token could not be had from the Microsoft identity platform")
	}
	return tok.AccessToken, nil
}

// send makes one request of the Bot Connector and answers its status and, for a POST, the
// activity id it made. Any status but 2xx is an error naming it, never the body it answered.
func (cn *Connector) send(ctx context.Context, method, endpoint, token string, body []byte) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := cn.client().Do(req)
	if err != nil {
		var uerr interface{ Timeout() bool }
		if errors.As(err, &uerr) && uerr.Timeout() {
			return 0, "", fmt.Errorf("no answer within %s", outbound.Timeout)
		}
		return 0, "", errors.New("the Bot Connector could not be reached")
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.CopyN(io.Discard, resp.Body, 4096)
		return resp.StatusCode, "", fmt.Errorf("the Bot Connector answered %d", resp.StatusCode)
	}
	var made struct {
		ID string `json:"id"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&made) // a PUT's answer need not name it
	return resp.StatusCode, made.ID, nil
}

// activitiesURL is the conversation's activities under its serviceUrl, the id path-escaped.
func activitiesURL(c outbound.Conversation) string {
	return strings.TrimSuffix(c.ServiceURL, "/") + "/v3/conversations/" + url.PathEscape(c.ConversationID) + "/activities"
}

// Send posts e's card to the subscription's conversation as the tenant's bot (outbound.Sender):
// an interrupt's request is POSTed and the activity id kept (Activities); a later event of an
// interrupt whose card this subscription posted PUTs the card as the interrupt now stands in
// its place, so that the conversation shows one card per request, its votes and its outcome;
// any other event is posted as a card of its own. A request whose id could not be kept after
// its POST fails the batch, which is delivered again: the card may then be posted twice, never
// lost.
func (ch *Channel) Send(ctx context.Context, s outbound.Subscription, c runlog.Commit, e runlog.Envelope, n outbound.Notice, now time.Time) (int, error) {
	if s.Conversation == nil {
		return 0, errors.New("the subscription names no conversation")
	}
	// What the subscription was created with is checked again: the rule may have changed.
	if err := ch.Conversations.Check(*s.Conversation); err != nil {
		return 0, err
	}
	if ch.Connector == nil || ch.Bots == nil {
		return 0, errors.New("this deployment posts no Teams cards")
	}
	bot, err := ch.Bots.TeamsBot(ctx, s.Tenant)
	switch {
	case errors.Is(err, ErrNotFound):
		return 0, errors.New("the tenant has no Teams bot (PUT /integrations/teams)")
	case err != nil:
		return 0, fmt.Errorf("%w: the tenant's Teams bot: %w", outbound.ErrStore, err)
	}
	k := outbound.AskedKey{Tenant: s.Tenant, Subscription: s.ID, RunID: e.RunID, InterruptID: e.InterruptID}
	var posted Posted
	found := false
	if e.InterruptID != "" && e.Type != interrupt.EventRequested && ch.Activities != nil {
		if posted, found, err = ch.Activities.TeamsActivity(ctx, k); err != nil {
			return 0, fmt.Errorf("%w: the card posted: %w", outbound.ErrStore, err)
		}
	}
	var body []byte
	var redrawn bool
	if found {
		body, redrawn, err = ch.redraw(ctx, s.Tenant, e, posted, now)
	}
	if !redrawn && err == nil {
		body, err = ch.Render(ctx, s.Tenant, c, e, n, now)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: the card: %w", outbound.ErrStore, err)
	}
	tok, err := ch.Connector.token(ctx, bot)
	if err != nil {
		return 0, err
	}
	endpoint := activitiesURL(*s.Conversation)
	if redrawn {
		status, _, err := ch.Connector.send(ctx, http.MethodPut, endpoint+"/"+url.PathEscape(posted.ActivityID), tok, body)
		return status, err
	}
	status, id, err := ch.Connector.send(ctx, http.MethodPost, endpoint, tok, body)
	if err != nil || e.Type != interrupt.EventRequested || e.InterruptID == "" || id == "" || ch.Activities == nil {
		return status, err
	}
	p := Posted{ActivityID: id}
	for _, l := range n.Links {
		if l.Principal == "" {
			p.Review = l.URL
			break
		}
	}
	if err := ch.Activities.PutTeamsActivity(ctx, k, p, now.Add(ActivityRetention)); err != nil {
		return status, fmt.Errorf("%w: the card's activity id: %w", outbound.ErrStore, err)
	}
	return status, nil
}

// redraw is the update of the activity posted of e's interrupt: the card as the interrupt now
// stands in the run. ok is false when the run no longer holds it (archived): e is then posted
// as a card of its own.
func (ch *Channel) redraw(ctx context.Context, tenant string, e runlog.Envelope, p Posted, now time.Time) (_ []byte, ok bool, _ error) {
	if ch.Runs == nil {
		return nil, false, nil
	}
	cp, commits, err := ch.Runs.Tail(ctx, runlog.Key{Tenant: tenant, RunID: e.RunID})
	if err != nil {
		return nil, false, err
	}
	if cp == nil && len(commits) > 0 && commits[0].Seq != 1 {
		return nil, false, nil
	}
	st, err := runlog.Resume(cp, commits)
	if err != nil || st == nil {
		return nil, false, err
	}
	in := st.ByID(e.InterruptID)
	if in == nil {
		return nil, false, nil
	}
	c, err := standing(ctx, ch.Keys, tenant, host.OpenedOf(e.RunID, in, now), p.Review)
	if err != nil {
		return nil, false, err
	}
	b, err := json.Marshal(map[string]any{
		"type": "message", "id": p.ActivityID,
		"attachments": []any{map[string]any{"contentType": ContentType, "content": c}},
	})
	return b, err == nil, err
}
