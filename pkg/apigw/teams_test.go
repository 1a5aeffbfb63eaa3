package apigw_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/internal/botframework"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// botFramework is the Bot Framework's identity as the API's tests see it: its key, published
// by a server of the test binary's, and the metadata URL naming it.
type botFramework struct {
	id       *botframework.Identity
	metadata string
}

// testBotFramework is made once: an RSA key is slow to make, and the server lives as long as
// the test binary.
var testBotFramework = sync.OnceValue(func() botFramework {
	id, err := botframework.New("apigw-test")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(nil)
	srv.Config.Handler = botframework.Handler(srv.URL+"/bf", "/bf", id)
	return botFramework{id: id, metadata: srv.URL + "/bf/.well-known/openidconfiguration"}
})

// The tests' bot.
const (
	teamsApp     = "0f5b6a1e-1111-4222-8333-444455556666"
	teamsEntra   = "9a8b7c6d-1111-4222-8333-444455556666"
	teamsService = "https://smba.trafficmanager.net/emea/"
	teamsAlice   = "00000000-0000-4000-8000-00000000a11c"
)

// teamsInvoke is an invoke of a card's button as the Bot Connector sends it, and its token.
func teamsInvoke(t testing.TB, user, verb, data string, now time.Time) (string, string) {
	t.Helper()
	tok, err := testBotFramework().id.Sign(botframework.Token{AppID: teamsApp, ServiceURL: teamsService, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{
		"type": "invoke", "name": "adaptiveCard/action", "channelId": "msteams", "serviceUrl": teamsService,
		"from": map[string]any{"aadObjectId": user}, "conversation": map[string]any{"tenantId": teamsEntra},
		"value": map[string]any{"action": map[string]any{"type": "Action.Execute", "verb": verb, "data": map[string]any{"v": data}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + tok, string(body)
}

func (s *stack) teamsBot(t *testing.T, who caller, route, body string) response {
	t.Helper()
	return invoke(t, s.fn("subscriptions"), call{who: &who, route: route, body: body})
}

// TestTeamsRoutes: an administrator registers the tenant's bot (201, then 200), reads it back
// without its password and with the messaging endpoint; subscriptions:manage reads it but may
// not register one; a bot that is not Microsoft's ids is 400; delete, then 404.
func TestTeamsRoutes(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	admin := caller{"admin", "acme", []string{"integrations:manage"}}
	body := `{"appId":"` + teamsApp + `","appPassword":"a-client-secret-of-forty-characters-long","tenantId":"` + teamsEntra + `"}`
	if r := s.teamsBot(t, admin, "PUT /integrations/teams", body); r.Status != 201 || strings.Contains(string(r.Body), "client-secret") || !strings.Contains(string(r.Body), `"messagesUrl":"https://`) {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	if r := s.teamsBot(t, admin, "PUT /integrations/teams", body); r.Status != 200 {
		t.Errorf("put again: %d %s", r.Status, r.Body)
	}
	ops := caller{"ops", "acme", []string{"subscriptions:manage"}}
	if r := s.teamsBot(t, ops, "GET /integrations/teams", ""); r.Status != 200 || strings.Contains(string(r.Body), "client-secret") || !strings.Contains(string(r.Body), teamsApp) {
		t.Errorf("read by subscriptions:manage: %d %s", r.Status, r.Body)
	}
	if r := s.teamsBot(t, ops, "PUT /integrations/teams", body); r.Status != 403 {
		t.Errorf("put by subscriptions:manage: %d %s", r.Status, r.Body)
	}
	if r := s.teamsBot(t, admin, "PUT /integrations/teams", `{"appId":"nope","appPassword":"short","tenantId":"x"}`); r.Status != 400 ||
		!strings.Contains(r.Headers["Content-Type"], "application/problem+json") || strings.Count(string(r.Body), `"path"`) != 3 {
		t.Errorf("a bot that is not Microsoft's: %d %s", r.Status, r.Body)
	}
	if r := s.teamsBot(t, admin, "DELETE /integrations/teams", ""); r.Status != 204 {
		t.Errorf("delete: %d %s", r.Status, r.Body)
	}
	if r := s.teamsBot(t, admin, "GET /integrations/teams", ""); r.Status != 404 {
		t.Errorf("read after delete: %d %s", r.Status, r.Body)
	}
}

// TestTeamsMessagesRoute: alice's click on a 2-of-2 approval through the function records her
// vote and answers the card saying 1 of 2; an invoke without the Bot Framework's token is a
// 401 problem that writes nothing.
func TestTeamsMessagesRoute(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ctx := context.Background()
	admin := interrupt.Principal{Subject: "admin", Tenant: "acme"}
	if _, _, err := s.services.Teams.Put(ctx, admin, teams.Request{AppID: teamsApp, AppPassword: "a-client-secret-of-forty-characters-long", EntraTenant: teamsEntra}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.services.Contacts.Put(ctx, admin, contacts.KindPrincipal, "alice", contacts.Request{Teams: teamsAlice}); err != nil {
		t.Fatal(err)
	}
	v := s.mustRequest(t, "r1", "n1", `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"a","artifactType":"t","title":"Pay","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`)
	data, err := teams.Seal(ctx, s.services.TeamsMessages.Keys, teams.Aim{Tenant: "acme", RunID: "r1", InterruptID: v.InterruptID, Action: interrupt.ActionAccept})
	if err != nil {
		t.Fatal(err)
	}
	h := s.fn("teams-messages")
	post := func(auth, body string) events.APIGatewayV2HTTPResponse {
		t.Helper()
		resp, err := h(ctx, events.APIGatewayV2HTTPRequest{
			RouteKey: "POST /teams/messages", RawPath: "/teams/messages",
			Headers: map[string]string{"Authorization": auth, "Content-Type": "application/json"}, Body: base64.StdEncoding.EncodeToString([]byte(body)), IsBase64Encoded: true,
			RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: "t", RouteKey: "POST /teams/messages", DomainName: testDomain, Stage: "$default"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	before := s.items(t)
	_, body := teamsInvoke(t, teamsAlice, teams.VerbAccept, data, s.clock.Now())
	if r := post("Bearer not-a-token", body); r.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(r.Headers["Content-Type"], "application/problem+json") {
		t.Errorf("no token: %d %s", r.StatusCode, r.Body)
	}
	if after := s.items(t); after != before {
		t.Errorf("a refused invoke wrote: %v -> %v", before, after)
	}
	auth, body := teamsInvoke(t, teamsAlice, teams.VerbAccept, data, s.clock.Now())
	r := post(auth, body)
	var ans struct {
		StatusCode int    `json:"statusCode"`
		Type       string `json:"type"`
		Value      struct {
			Body []struct {
				ID   string `json:"id"`
				Text string `json:"text"`
			} `json:"body"`
		} `json:"value"`
	}
	if r.StatusCode != 200 || json.Unmarshal([]byte(r.Body), &ans) != nil || ans.Type != teams.ContentType || !strings.Contains(string(r.Body), "1 of 2") {
		t.Errorf("alice's click: %d %s", r.StatusCode, r.Body)
	}
}
