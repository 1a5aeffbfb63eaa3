package teams_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/botframework"
	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// conversation is the conversation the tests' subscription posts to.
const conversation = "19:approvals@thread.tacv2"

// posting is the world with a Bot Connector of its own (internal/botframework's), a teams
// subscription of acme's to a conversation there, and the deliverer that posts to it.
type posting struct {
	*world
	srv *httptest.Server
	d   *outbound.Deliverer
	ch  *teams.Channel
	out *inmem.Outbound
	sub string
}

func newPosting(t *testing.T) *posting {
	t.Helper()
	ctx := context.Background()
	w := newWorld(t)
	srv := httptest.NewServer(botframework.NewConnector("/bf").Handler())
	t.Cleanup(srv.Close)
	passwords := inmem.NewSecrets()
	if err := passwords.Put(ctx, teams.SecretID("acme", appID), []string{password}); err != nil {
		t.Fatal(err)
	}
	out := inmem.NewOutbound()
	rule := teams.Conversations{AllowPrivate: true}
	ch := &teams.Channel{Bots: w.store, Keys: hosttest.Keys, Conversations: rule, Activities: out, Runs: w.store,
		Connector: &teams.Connector{Secrets: passwords, TokenURL: botframework.TokenURL(srv.URL + "/bf"), Client: srv.Client()}}
	subs := &outbound.Subscriptions{Store: out, Secrets: inmem.NewSecrets(), Channels: []string{teams.Format},
		Conversations: map[string]outbound.ConversationCheck{teams.Format: rule.Check}}
	sub, err := subs.Create(ctx, interrupt.Principal{Subject: "admin", Tenant: "acme"}, outbound.Request{Format: teams.Format, Events: []string{"*"},
		Conversation: &outbound.Conversation{ServiceURL: srv.URL + "/bf/", ConversationID: conversation}})
	if err != nil {
		t.Fatal(err)
	}
	d := &outbound.Deliverer{Store: out, Log: w.store, Channels: []outbound.Channel{ch}, Now: w.clock.Now,
		Links: outbound.Links{Keys: hosttest.Keys, BaseURL: "https://host.example"}}
	return &posting{world: w, srv: srv, d: d, ch: ch, out: out, sub: sub.ID}
}

// stream hands run-1's commits to the deliverer as the table's stream would, and answers what
// the pass did.
func (p *posting) stream(t *testing.T) outbound.Report {
	t.Helper()
	cs, err := p.store.Read(context.Background(), runlog.Key{Tenant: "acme", RunID: "run-1"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var batch []runlog.StreamRecord
	for _, c := range cs {
		batch = append(batch, runlog.StreamRecord{Key: runlog.Key{Tenant: "acme", RunID: "run-1"}, Commit: c})
	}
	r, errs := p.d.Commits(context.Background(), batch)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// deliver delivers run-1's commits as the table's stream would, and fails the test on any
// attempt that was not delivered.
func (p *posting) deliver(t *testing.T) {
	t.Helper()
	if r := p.stream(t); r.Retrying+r.Failed > 0 {
		t.Fatalf("the deliveries: %+v", r)
	}
}

// activities are what the conversation holds, as the Bot Connector lists them.
func (p *posting) activities(t *testing.T) []botframework.Activity {
	t.Helper()
	resp, err := p.srv.Client().Get(p.srv.URL + "/bf/v3/conversations/" + url.PathEscape(conversation) + "/activities")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct{ Activities []botframework.Activity }
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("listing the conversation: %d %v", resp.StatusCode, err)
	}
	return l.Activities
}

// TestACardIsPostedAndUpdatedInPlace: a teams subscription's request is posted once to its
// conversation as the tenant's bot, with Approve and Reject; alice's vote and bob's, and the
// resolution, put the card as it then stands in its place, so the conversation holds one card
// that says "1 of 2" and then "Accepted by bob".
func TestACardIsPostedAndUpdatedInPlace(t *testing.T) {
	t.Parallel()
	p := newPosting(t)
	p.deliver(t)
	acts := p.activities(t)
	if len(acts) != 1 || acts[0].AppID != appID || acts[0].Updates != 0 {
		t.Fatalf("after the request the conversation holds %+v", acts)
	}
	c := cardOf(t, acts[0].Activity)
	if len(c.Actions) != 3 || c.Actions[0].Verb != teams.VerbAccept || c.Actions[1].Verb != teams.VerbReject || c.Refresh == nil {
		t.Fatalf("the card posted offers %+v", c.Actions)
	}
	review := c.Actions[2].URL
	accept := c.Actions[0].Data.V
	if a := invoke(t, p.m, p.clock.Now(), click{user: userOf("alice"), verb: teams.VerbAccept, data: accept}); a.Outcome != teams.OutcomeRecorded {
		t.Fatalf("alice's click: %s %s", a.Outcome, a.Body)
	}
	p.deliver(t)
	acts = p.activities(t)
	if len(acts) != 1 || acts[0].Updates == 0 {
		t.Fatalf("after alice's vote the conversation holds %+v", acts)
	}
	if c := cardOf(t, acts[0].Activity); !strings.Contains(c.status(), "1 of 2") || len(c.Actions) != 3 || c.Actions[2].URL != review {
		t.Errorf("after alice's vote the card says %q and offers %+v", c.status(), c.Actions)
	}
	if a := invoke(t, p.m, p.clock.Now(), click{user: userOf("bob"), verb: teams.VerbAccept, data: accept}); a.Outcome != teams.OutcomeRecorded {
		t.Fatalf("bob's click: %s %s", a.Outcome, a.Body)
	}
	p.deliver(t)
	acts = p.activities(t)
	if len(acts) != 1 {
		t.Fatalf("after bob's vote the conversation holds %d activities", len(acts))
	}
	if c := cardOf(t, acts[0].Activity); c.status() != "Accepted by bob" || len(c.Actions) != 1 || c.Refresh != nil {
		t.Errorf("after bob's vote the card says %q and offers %+v", c.status(), c.Actions)
	}
}

// TestAConversationOutsideMicrosoftsIsRefused: a subscription names a conversation of one of
// Microsoft's Bot Connector hosts over https, by a Teams conversation id, and no URL; the local
// stack's rule (AllowPrivate) admits its own http stand-in.
func TestAConversationOutsideMicrosoftsIsRefused(t *testing.T) {
	t.Parallel()
	strict := teams.Conversations{}
	for _, c := range []struct {
		conv outbound.Conversation
		ok   bool
	}{
		{outbound.Conversation{ServiceURL: "https://smba.trafficmanager.net/emea/", ConversationID: conversation}, true},
		{outbound.Conversation{ServiceURL: "https://smba.infra.gcc.teams.microsoft.com/", ConversationID: "a:1xYz_-AbC"}, true},
		{outbound.Conversation{ServiceURL: "http://smba.trafficmanager.net/emea/", ConversationID: conversation}, false},
		{outbound.Conversation{ServiceURL: "https://smba.trafficmanager.net:8443/emea/", ConversationID: conversation}, false},
		{outbound.Conversation{ServiceURL: "https://smba.trafficmanager.net.evil.example/", ConversationID: conversation}, false},
		{outbound.Conversation{ServiceURL: "https://169.254.169.254/", ConversationID: conversation}, false},
		{outbound.Conversation{ServiceURL: "https://user@smba.trafficmanager.net/", ConversationID: conversation}, false},
		{outbound.Conversation{ServiceURL: "smba.trafficmanager.net", ConversationID: conversation}, false},
		{outbound.Conversation{ServiceURL: "https://smba.trafficmanager.net/emea/", ConversationID: "19:x/../../other"}, false},
		{outbound.Conversation{ServiceURL: "https://smba.trafficmanager.net/emea/", ConversationID: ""}, false},
	} {
		if err := strict.Check(c.conv); (err == nil) != c.ok {
			t.Errorf("%+v: %v, want accepted %v", c.conv, err, c.ok)
		}
	}
	local := teams.Conversations{AllowPrivate: true}
	if err := local.Check(outbound.Conversation{ServiceURL: "http://127.0.0.1:3000/local-botframework/", ConversationID: conversation}); err != nil {
		t.Errorf("the local stand-in: %v", err)
	}
	subs := &outbound.Subscriptions{Store: inmem.NewOutbound(), Secrets: inmem.NewSecrets(), Channels: []string{teams.Format},
		Conversations: map[string]outbound.ConversationCheck{teams.Format: strict.Check}}
	admin := interrupt.Principal{Subject: "admin", Tenant: "acme"}
	conv := &outbound.Conversation{ServiceURL: "https://smba.trafficmanager.net/emea/", ConversationID: conversation}
	for _, r := range []outbound.Request{
		{Format: teams.Format, Events: []string{"*"}},
		{Format: teams.Format, Events: []string{"*"}, Conversation: conv, URL: "https://receiver.example/"},
		{Format: teams.Format, Events: []string{"*"}, Conversation: &outbound.Conversation{ServiceURL: "https://bots.example/", ConversationID: conversation}},
		{Format: outbound.FormatStandard, Events: []string{"*"}, Conversation: conv, URL: "https://receiver.example/"},
	} {
		if _, err := subs.Create(context.Background(), admin, r); interrupt.ErrorCode(err) != interrupt.CodeValidation {
			t.Errorf("%+v: %v, want a validation error", r, err)
		}
	}
	created, err := subs.Create(context.Background(), admin, outbound.Request{Format: teams.Format, Events: []string{"*"}, Conversation: conv})
	if err != nil || created.Secret != "" || *created.Conversation != *conv {
		t.Errorf("a teams subscription: %+v %v", created, err)
	}
}

// TestAPostTheBotCannotMakeIsRetried: while the identity platform refuses the bot its token,
// or the tenant has no bot, nothing is posted and the attempt is recorded as the receiver's
// failure, saying why, and retried; once the token is had, the retry posts the card once.
func TestAPostTheBotCannotMakeIsRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newPosting(t)
	good := p.ch.Connector.TokenURL
	p.ch.Connector.TokenURL = p.srv.URL + "/bf/no-token-here"
	if r := p.stream(t); r.Retrying != 1 || r.Delivered != 0 {
		t.Fatalf("a refused token: %+v", r)
	}
	attempts, err := p.out.Attempts(ctx, "acme", p.sub, 10)
	if err != nil || len(attempts) != 1 || attempts[0].Status != outbound.StatusRetrying || !strings.Contains(attempts[0].LastError, "refused the bot's token (404)") {
		t.Fatalf("attempts %+v %v", attempts, err)
	}
	if acts := p.activities(t); len(acts) != 0 {
		t.Fatalf("a post without a token: %+v", acts)
	}
	p.ch.Connector.TokenURL = good
	p.clock.Advance(time.Minute)
	if r, err := p.d.Retries(ctx, 10); err != nil || r.Delivered != 1 {
		t.Fatalf("the retry: %+v %v", r, err)
	}
	if acts := p.activities(t); len(acts) != 1 {
		t.Fatalf("after the retry the conversation holds %d activities", len(acts))
	}

	// A tenant without a bot: told so, nothing posted.
	q := newPosting(t)
	if err := (&teams.Integrations{Store: q.store, Secrets: webhook.NewCache(inmem.NewSecrets(), nil)}).Delete(ctx, interrupt.Principal{Subject: "admin", Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	if r := q.stream(t); r.Retrying != 1 {
		t.Fatalf("no bot: %+v", r)
	}
	if attempts, err := q.out.Attempts(ctx, "acme", q.sub, 10); err != nil || len(attempts) != 1 || !strings.Contains(attempts[0].LastError, "no Teams bot") {
		t.Errorf("no bot: attempts %+v %v", attempts, err)
	}
	if acts := q.activities(t); len(acts) != 0 {
		t.Errorf("a tenant without a bot posted %+v", acts)
	}
}
