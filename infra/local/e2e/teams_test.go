package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/internal/botframework"
)

// teamsEntraTenant is the Entra tenant of the suite's Teams bots.
const teamsEntraTenant = "9a8b7c6d-1111-4222-8333-444455556666"

// teamsAppID is a fresh bot app id: the local stack keeps what earlier runs made.
func teamsAppID() string {
	b := []byte(strings.ToLower(rand.Text()))
	hex := make([]byte, 12)
	for i := range hex {
		hex[i] = "0123456789abcdef"[b[i]%16]
	}
	return "0f5b6a1e-1111-4222-8333-" + string(hex)
}

// botFrameworkToken is a token of the stack's Bot Framework stand-in for appID about an
// activity that came through serviceURL (POST /local-botframework/token).
func botFrameworkToken(t testing.TB, appID, serviceURL string) string {
	t.Helper()
	a := call{method: "POST", path: botframework.Path + "/token", body: fmt.Sprintf(`{"appId":%q,"serviceUrl":%q}`, appID, serviceURL)}.must(t)
	var out struct {
		Token string `json:"token"`
	}
	if a.Status != 200 || json.Unmarshal(a.Body, &out) != nil || out.Token == "" {
		t.Fatalf("the stand-in's token: %d %s", a.Status, a.Body)
	}
	return out.Token
}

// teamsInvoke is the body of a card's Approve as Teams sends it, with data and from user,
// through the stack's stand-in.
func teamsInvoke(data, user string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "invoke", "name": "adaptiveCard/action", "channelId": "msteams", "serviceUrl": botframework.ServiceURL(gatewayURL()),
		"from": map[string]any{"aadObjectId": user}, "conversation": map[string]any{"id": "19:local", "tenantId": teamsEntraTenant},
		"value": map[string]any{"action": map[string]any{"type": "Action.Execute", "verb": "interrupt.accept", "data": map[string]any{"v": data}}},
	})
	return string(b)
}

// TestTeamsActivities walks what the stack's Teams endpoint takes before a card's data is
// read: a tenant's bot registered by an administrator (subscriptions:manage may only read
// it, never its password); an invoke whose token the stand-in signed for another app id,
// about another serviceUrl, or signed by a key the stand-in never published, is 401; one for
// the bot, of data the host did not make, is told why and records nothing; an installation is
// answered and does nothing.
func TestTeamsActivities(t *testing.T) {
	ctx := context.Background()
	op := operator(t)
	appID := teamsAppID()
	req := client.TeamsBotRequest{AppID: appID, AppPassword: "a-client-secret-of-forty-characters-long", TenantID: teamsEntraTenant}
	if _, err := newClient(t, op).PutTeamsBot(ctx, req); !client.IsCode(err, "forbidden") {
		t.Fatalf("subscriptions:manage registering a Teams bot: %v, want 403", err)
	}
	c := newClient(t, admin(op))
	bot, err := c.PutTeamsBot(ctx, req)
	if err != nil || bot.MessagesURL != gatewayURL()+"/teams/messages" || bot.AppID != appID {
		t.Fatalf("put the bot: %+v %v", bot, err)
	}
	if got, err := newClient(t, op).TeamsBot(ctx); err != nil || got.AppID != appID || strings.Contains(mustJSON(t, got), req.AppPassword) {
		t.Fatalf("read the bot: %+v %v", got, err)
	}
	service := botframework.ServiceURL(gatewayURL())
	stranger, err := botframework.New("not-published")
	if err != nil {
		t.Fatal(err)
	}
	unpublished, err := stranger.Sign(botframework.Token{AppID: appID, ServiceURL: service, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	body := teamsInvoke("not-a-card", "00000000-0000-4000-8000-00000000a11c")
	for name, tok := range map[string]string{
		"another app id":        botFrameworkToken(t, teamsAppID(), service),
		"another serviceUrl":    botFrameworkToken(t, appID, "https://smba.trafficmanager.net/emea/"),
		"a key never published": unpublished,
	} {
		if a := (call{method: "POST", path: "/teams/messages", bearer: tok, body: body}).must(t); a.Status != 401 || !strings.HasPrefix(a.Header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s: %d %s, want a 401 problem", name, a.Status, a.Body)
		}
	}
	tok := botFrameworkToken(t, appID, service)
	a := (call{method: "POST", path: "/teams/messages", bearer: tok, body: body}).must(t)
	var ans struct {
		StatusCode int    `json:"statusCode"`
		Type       string `json:"type"`
		Value      string `json:"value"`
	}
	if a.Status != 200 || json.Unmarshal(a.Body, &ans) != nil || ans.Type != "application/vnd.microsoft.activity.message" || !strings.Contains(ans.Value, "not made by this host") {
		t.Errorf("data the host did not make: %d %s", a.Status, a.Body)
	}
	install := `{"type":"installationUpdate","action":"add","channelId":"msteams","serviceUrl":"` + service + `"}`
	if a := (call{method: "POST", path: "/teams/messages", bearer: tok, body: install}).must(t); a.Status != 200 {
		t.Errorf("an installation: %d %s", a.Status, a.Body)
	}
}
