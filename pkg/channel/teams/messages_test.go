package teams_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/botframework"
	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// world is a host over memory with acme's bot and alice's and bob's contacts, and a 2-of-2
// approval of theirs waiting in run-1.
type world struct {
	h           *host.Host
	store       *inmem.Store
	clock       *testclock.Clock
	m           *teams.Messages
	interruptID string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	clock := testclock.New(time.Now().UTC())
	h, store := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	w := &world{h: h, store: store, clock: clock}
	bots := &teams.Integrations{Store: store, Secrets: webhook.NewCache(inmem.NewSecrets(), nil)}
	admin := interrupt.Principal{Subject: "admin", Tenant: "acme"}
	if _, _, err := bots.Put(ctx, admin, teams.Request{AppID: appID, AppPassword: password, EntraTenant: entraTenant}); err != nil {
		t.Fatal(err)
	}
	dir := &contacts.Directory{Store: store}
	for _, p := range []string{"alice", "bob"} {
		if _, _, err := dir.Put(ctx, admin, contacts.KindPrincipal, p, contacts.Request{Teams: userOf(p)}); err != nil {
			t.Fatal(err)
		}
	}
	view, _, err := h.RequestInterrupt(ctx, interrupt.Principal{Subject: "engine", Tenant: "acme"}, "run-1", host.Request{NodeID: "approve",
		Payload: json.RawMessage(`{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay *now*","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`)})
	if err != nil {
		t.Fatal(err)
	}
	w.interruptID = view.InterruptID
	w.m = &teams.Messages{Host: h, Bots: store, Verifier: keySet(t, clock.Now), Keys: hosttest.Keys, Contacts: store, BaseURL: "https://host.example"}
	return w
}

// data is the sealed data of the world's interrupt's button of action.
func (w *world) data(t *testing.T, tenant string, action interrupt.Action) string {
	t.Helper()
	d, err := teams.Seal(context.Background(), hosttest.Keys, teams.Aim{Tenant: tenant, RunID: "run-1", InterruptID: w.interruptID, Action: action})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// commits is how many commits run-1 holds: a refusal adds none.
func (w *world) commits(t *testing.T) int {
	t.Helper()
	cs, err := w.store.Read(context.Background(), runlog.Key{Tenant: "acme", RunID: "run-1"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(cs)
}

// TestATokenNotTheBotFrameworksIsRefused: an invoke whose token is signed by a key the Bot
// Framework did not publish, or by one it published for another channel, for another app id,
// about another serviceUrl, expired, not yet valid, of another issuer, or absent, is 401 and
// records nothing.
func TestATokenNotTheBotFrameworksIsRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, other := identities(t)
	accept := w.data(t, "acme", interrupt.ActionAccept)
	for _, c := range []struct {
		name  string
		click click
		now   time.Duration
	}{
		{name: "a key the Bot Framework never published", click: click{by: other}},
		{name: "a key endorsed for another channel", click: click{by: webchatOnly(t)}},
		{name: "another app id", click: click{appID: "0f5b6a1e-1111-4222-8333-000000000000"}},
		{name: "another serviceUrl", click: click{serviceURL: "https://smba.trafficmanager.net/amer/"}},
		{name: "expired past the skew", click: click{ttl: time.Minute}, now: -7 * time.Minute},
		{name: "not yet valid past the skew", click: click{}, now: 6 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.click.user, c.click.verb, c.click.data = userOf("alice"), teams.VerbAccept, accept
			_, err := send(t, w.m, w.clock.Now().Add(c.now), c.click)
			if e := (*interrupt.Error)(nil); !errors.As(err, &e) || e.Code != interrupt.CodeUnauthorized {
				t.Errorf("answered %v, want 401", err)
			}
		})
	}
	for _, c := range []struct{ name, header string }{
		{"no token", ""},
		{"not a bearer", "Basic YWxpY2U6cGFzcw=="},
		{"not a JWT", "Bearer nonsense"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := `{"type":"invoke","name":"adaptiveCard/action","channelId":"msteams","serviceUrl":"` + serviceURL + `"}`
			_, err := w.m.Handle(context.Background(), map[string]string{"authorization": c.header}, []byte(body))
			if e := (*interrupt.Error)(nil); !errors.As(err, &e) || e.Code != interrupt.CodeUnauthorized {
				t.Errorf("answered %v, want 401", err)
			}
		})
	}
	if n := w.commits(t); n != 1 {
		t.Errorf("the run holds %d commits after the refusals, want the request's alone", n)
	}
}

// TestTwoOfTwoInTeams: a stranger's click records nothing and says why; alice's records her
// vote and the card says 1 of 2; her second records nothing; bob's releases it, decided by bob,
// and the card offers no decision any more.
func TestTwoOfTwoInTeams(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	accept := w.data(t, "acme", interrupt.ActionAccept)
	refused := func(a teams.Answer, why string) {
		t.Helper()
		var r struct {
			StatusCode int    `json:"statusCode"`
			Type       string `json:"type"`
			Value      string `json:"value"`
		}
		if err := json.Unmarshal(a.Body, &r); err != nil || a.Outcome != teams.OutcomeRefused || r.StatusCode != 200 ||
			r.Type != "application/vnd.microsoft.activity.message" || !strings.Contains(r.Value, why) {
			t.Errorf("answered %s %s, want a message saying %q", a.Outcome, a.Body, why)
		}
	}
	cardAnswer := func(a teams.Answer) adaptiveCard {
		t.Helper()
		var r struct {
			StatusCode int          `json:"statusCode"`
			Type       string       `json:"type"`
			Value      adaptiveCard `json:"value"`
		}
		if err := json.Unmarshal(a.Body, &r); err != nil || r.StatusCode != 200 || r.Type != teams.ContentType || r.Value.Version != "1.4" {
			t.Fatalf("answered %s %s, want the card", a.Outcome, a.Body)
		}
		return r.Value
	}
	refused(invoke(t, w.m, w.clock.Now(), click{user: userOf("mallory"), verb: teams.VerbAccept, data: accept}), "No contact names your Teams account")
	if n := w.commits(t); n != 1 {
		t.Fatalf("a stranger's click wrote: %d commits", n)
	}
	a := invoke(t, w.m, w.clock.Now(), click{user: userOf("alice"), verb: teams.VerbAccept, data: accept})
	if a.Outcome != teams.OutcomeRecorded {
		t.Fatalf("alice's click: %s %s", a.Outcome, a.Body)
	}
	c := cardAnswer(a)
	if !strings.Contains(c.status(), "1 of 2") || !strings.Contains(c.status(), "alice") {
		t.Errorf("after alice's vote the card says %q", c.status())
	}
	if len(c.Actions) != 3 || c.Actions[0].Verb != teams.VerbAccept || c.Actions[1].Verb != teams.VerbReject || c.Actions[2].URL != "https://host.example/approve/run-1/"+w.interruptID {
		t.Errorf("after one vote the card offers %+v", c.Actions)
	}
	refused(invoke(t, w.m, w.clock.Now(), click{user: userOf("alice"), verb: teams.VerbAccept, data: accept}), "a vote counts once")
	if n := w.commits(t); n != 2 {
		t.Errorf("alice's second click: %d commits, want 2", n)
	}
	a = invoke(t, w.m, w.clock.Now(), click{user: userOf("bob"), verb: teams.VerbAccept, data: accept})
	c = cardAnswer(a)
	if c.status() != "Accepted by bob" || len(c.Actions) != 1 || c.Actions[0].Type != "Action.OpenUrl" || c.Refresh != nil {
		t.Errorf("after bob's vote the card says %q and offers %+v", c.status(), c.Actions)
	}
	o, _ := w.h.OpenAs(context.Background(), interrupt.Principal{Tenant: "acme"}, "run-1", w.interruptID)
	if o.Status != interrupt.StatusResolved || o.DecidedBy != "bob" {
		t.Errorf("the interrupt is %s by %q", o.Status, o.DecidedBy)
	}
}

// TestACardDecidesOnlyForItsBot: data the host did not make, data moved to another verb,
// another tenant's data, a bot of another Entra tenant: each is refused and records nothing. A
// refresh answers the card and records nothing; an activity other than a card's action is
// answered and does nothing.
func TestACardDecidesOnlyForItsBot(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	// globex registers a bot of its own; its users' clicks on acme's card decide nothing.
	globex := &teams.Integrations{Store: w.store, Secrets: webhook.NewCache(inmem.NewSecrets(), nil)}
	const globexApp = "0f5b6a1e-1111-4222-8333-777777777777"
	if _, _, err := globex.Put(ctx, interrupt.Principal{Subject: "admin", Tenant: "globex"}, teams.Request{AppID: globexApp, AppPassword: password, EntraTenant: entraTenant}); err != nil {
		t.Fatal(err)
	}
	accept := w.data(t, "acme", interrupt.ActionAccept)
	for _, c := range []struct {
		name  string
		click click
		why   string
	}{
		{"data the host did not make", click{verb: teams.VerbAccept, data: "itc1.k1.e30.AAAA"}, "not made by this host"},
		{"Approve's data under Reject", click{verb: teams.VerbReject, data: accept}, "not made by this host"},
		{"another tenant's bot", click{verb: teams.VerbAccept, data: accept, appID: globexApp}, "not of your organisation's bot"},
		{"another Entra tenant", click{verb: teams.VerbAccept, data: accept, entraTenant: "9a8b7c6d-1111-4222-8333-000000000000"}, "not of your organisation's bot"},
		{"globex's data on acme's bot", click{verb: teams.VerbAccept, data: w.data(t, "globex", interrupt.ActionAccept)}, "not of your organisation's bot"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.click.user = userOf("alice")
			a := invoke(t, w.m, w.clock.Now(), c.click)
			if a.Outcome != teams.OutcomeRefused || !strings.Contains(string(a.Body), c.why) {
				t.Errorf("answered %s %s, want a refusal saying %q", a.Outcome, a.Body, c.why)
			}
		})
	}
	refresh := w.data(t, "acme", "")
	if a := invoke(t, w.m, w.clock.Now(), click{user: userOf("alice"), verb: teams.VerbRefresh, data: refresh}); a.Outcome != teams.OutcomeRefreshed || !strings.Contains(string(a.Body), "0 of 2") {
		t.Errorf("the refresh answered %s %s", a.Outcome, a.Body)
	}
	published, _ := identities(t)
	tok, err := published.Sign(botframeworkToken(w.clock.Now()))
	if err != nil {
		t.Fatal(err)
	}
	install := `{"type":"installationUpdate","action":"add","channelId":"msteams","serviceUrl":"` + serviceURL + `"}`
	if a, err := w.m.Handle(ctx, map[string]string{"authorization": "Bearer " + tok}, []byte(install)); err != nil || a.Outcome != teams.OutcomeIgnored || len(a.Body) != 0 {
		t.Errorf("an installation: %s %s %v", a.Outcome, a.Body, err)
	}
	if n := w.commits(t); n != 1 {
		t.Errorf("the run holds %d commits, want the request's alone", n)
	}
}

// botframeworkToken is the tests' bot's token at now.
func botframeworkToken(now time.Time) botframework.Token {
	return botframework.Token{AppID: appID, ServiceURL: serviceURL, Now: now}
}
