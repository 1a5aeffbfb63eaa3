package teams_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/botframework"
	"github.com/interrupthost/interrupthost/internal/channeltest"
	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// The bot of the tests: its app id, its Entra tenant and the Bot Connector it is reached by.
const (
	appID       = "0f5b6a1e-1111-4222-8333-444455556666"
	entraTenant = "9a8b7c6d-1111-4222-8333-444455556666"
	serviceURL  = "https://smba.trafficmanager.net/emea/"
	password    = "a-client-secret-of-forty-characters-long"
)

// framework is the Bot Framework's identity the tests sign with, a second key it never
// published, and a third it published for another channel only (webchat); made once, RSA keys
// being slow to make.
var framework = sync.OnceValues(func() (ids [3]*botframework.Identity, err error) {
	for i := range ids {
		if ids[i], err = botframework.New(fmt.Sprintf("key-%d", i)); err != nil {
			return ids, err
		}
	}
	ids[2].Endorsements = []string{"webchat"}
	return ids, nil
})

// identities are the published identity and the unpublished one.
func identities(t *testing.T) (published, other *botframework.Identity) {
	t.Helper()
	ids, err := framework()
	if err != nil {
		t.Fatal(err)
	}
	return ids[0], ids[1]
}

// webchatOnly is the identity published for another channel than Teams.
func webchatOnly(t *testing.T) *botframework.Identity {
	t.Helper()
	ids, err := framework()
	if err != nil {
		t.Fatal(err)
	}
	return ids[2]
}

// keySet is a KeySet reading the published identity's keys from a server of the test's own.
func keySet(t *testing.T, now func() time.Time) *teams.KeySet {
	t.Helper()
	published, _ := identities(t)
	srv := httptest.NewServer(nil)
	srv.Config.Handler = botframework.Handler(srv.URL+"/bf", "/bf", published, webchatOnly(t))
	t.Cleanup(srv.Close)
	return &teams.KeySet{Metadata: srv.URL + "/bf/.well-known/openidconfiguration", Client: srv.Client(), Now: now}
}

// TestTheChannelContract: Teams' cards and invokes under the decider model's table
// (channeltest.Exercise), each invoke carrying a token signed as the Bot Connector signs and
// served by Messages.
func TestTheChannelContract(t *testing.T) {
	t.Parallel()
	channeltest.Exercise(t, func(t *testing.T, w channeltest.World) channeltest.Harness {
		secrets := webhook.NewCache(inmem.NewSecrets(), nil)
		return &harness{w: w, bots: &teams.Integrations{Store: w.Store, Secrets: secrets},
			m: &teams.Messages{Host: w.Host, Bots: w.Store, Verifier: keySet(t, w.Clock.Now), Keys: hosttest.Keys, Contacts: w.Store, Delegations: w.Store, BaseURL: "https://host.example"}}
	})
}

// harness is Teams as channeltest drives it: acme's bot appID in entraTenant, each person's
// Entra object id derived from their name.
type harness struct {
	w    channeltest.World
	bots *teams.Integrations
	m    *teams.Messages
}

// userOf is a person's Entra object id.
func userOf(person string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(person))
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", h.Sum64()&0xffffffffffff)
}

func (h *harness) Enrol(t *testing.T, people ...string) {
	t.Helper()
	ctx := context.Background()
	admin := interrupt.Principal{Subject: "admin", Tenant: h.w.Tenant}
	if _, _, err := h.bots.Put(ctx, admin, teams.Request{AppID: appID, AppPassword: password, EntraTenant: entraTenant}); err != nil {
		t.Fatal(err)
	}
	dir := &contacts.Directory{Store: h.w.Store}
	for _, p := range people {
		if _, _, err := dir.Put(ctx, admin, contacts.KindPrincipal, p, contacts.Request{Teams: userOf(p)}); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *harness) Offers(t *testing.T, c runlog.Commit, e runlog.Envelope) bool {
	t.Helper()
	ch := &teams.Channel{Bots: h.w.Store, Keys: hosttest.Keys}
	b, err := ch.Render(context.Background(), h.w.Tenant, c, e, outbound.Notice{}, h.w.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cardOf(t, b).Actions {
		if a.Type == "Action.Execute" && (a.Verb == teams.VerbAccept || a.Verb == teams.VerbReject) {
			return true
		}
	}
	return false
}

func (h *harness) Click(t *testing.T, person, runID, interruptID string, action interrupt.Action) bool {
	t.Helper()
	data, err := teams.Seal(context.Background(), hosttest.Keys, teams.Aim{Tenant: h.w.Tenant, RunID: runID, InterruptID: interruptID, Action: action})
	if err != nil {
		t.Fatal(err)
	}
	ans := invoke(t, h.m, h.w.Clock.Now(), click{user: userOf(person), verb: teams.Verb(action), data: data})
	return ans.Outcome == teams.OutcomeRecorded
}

// click is an invoke of a card's button, and how its token is signed.
type click struct {
	user, verb, data string
	// appID, serviceURL and entraTenant default to the tests' bot's.
	appID, serviceURL, entraTenant string
	// by signs the token (default the published identity); ttl its life (default an hour).
	by  *botframework.Identity
	ttl time.Duration
}

// invoke sends c to m as the Bot Connector would, and answers what m answered.
func invoke(t *testing.T, m *teams.Messages, now time.Time, c click) teams.Answer {
	t.Helper()
	ans, err := send(t, m, now, c)
	if err != nil {
		t.Fatalf("the invoke: %v", err)
	}
	return ans
}

func send(t *testing.T, m *teams.Messages, now time.Time, c click) (teams.Answer, error) {
	t.Helper()
	if c.appID == "" {
		c.appID = appID
	}
	if c.serviceURL == "" {
		c.serviceURL = serviceURL
	}
	if c.entraTenant == "" {
		c.entraTenant = entraTenant
	}
	if c.by == nil {
		c.by, _ = identities(t)
	}
	tok, err := c.by.Sign(botframework.Token{AppID: c.appID, ServiceURL: c.serviceURL, Now: now, TTL: c.ttl})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{
		"type": "invoke", "name": "adaptiveCard/action", "channelId": "msteams", "serviceUrl": serviceURL,
		"from":         map[string]any{"id": "29:1", "aadObjectId": c.user},
		"conversation": map[string]any{"id": "19:conv", "tenantId": c.entraTenant},
		"channelData":  map[string]any{"tenant": map[string]any{"id": c.entraTenant}},
		"value":        map[string]any{"action": map[string]any{"type": "Action.Execute", "verb": c.verb, "data": map[string]any{"v": c.data}}, "trigger": "manual"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m.Handle(context.Background(), map[string]string{"authorization": "Bearer " + tok}, body)
}

// adaptiveCard is what the tests read of a card.
type adaptiveCard struct {
	Type    string `json:"type"`
	Version string `json:"version"`
	Body    []struct {
		Type  string `json:"type"`
		ID    string `json:"id"`
		Text  string `json:"text"`
		Facts []struct {
			Title, Value string
		} `json:"facts"`
	} `json:"body"`
	Actions []struct {
		Type  string `json:"type"`
		Verb  string `json:"verb"`
		Title string `json:"title"`
		URL   string `json:"url"`
		Data  struct {
			V string `json:"v"`
		} `json:"data"`
	} `json:"actions"`
	Refresh *struct {
		Action struct {
			Verb string `json:"verb"`
		} `json:"action"`
	} `json:"refresh"`
}

// status is the card's status line.
func (c adaptiveCard) status() string {
	for _, b := range c.Body {
		if b.ID == "interrupt.status" {
			return b.Text
		}
	}
	return ""
}

// cardOf reads the card of a rendered message activity.
func cardOf(t *testing.T, b []byte) adaptiveCard {
	t.Helper()
	var a struct {
		Type        string `json:"type"`
		Attachments []struct {
			ContentType string       `json:"contentType"`
			Content     adaptiveCard `json:"content"`
		} `json:"attachments"`
	}
	if err := json.Unmarshal(b, &a); err != nil || a.Type != "message" || len(a.Attachments) != 1 || a.Attachments[0].ContentType != teams.ContentType {
		t.Fatalf("not a message activity carrying one card: %v: %s", err, b)
	}
	c := a.Attachments[0].Content
	if c.Type != "AdaptiveCard" || c.Version != "1.4" {
		t.Fatalf("not an Adaptive Card v1.4: %s", b)
	}
	return c
}
