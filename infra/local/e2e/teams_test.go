package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
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

// teamsUser is the Entra object id of one of the suite's people.
func teamsUser(person string) string {
	return map[string]string{"alice": "00000000-0000-4000-8000-0000000a11ce", "bob": "00000000-0000-4000-8000-000000000b0b",
		"mallory": "00000000-0000-4000-8000-00000000bad0"}[person]
}

// teamsCard is what the suite reads of an Adaptive Card.
type teamsCard struct {
	Body []struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"body"`
	Actions []struct {
		Type string `json:"type"`
		Verb string `json:"verb"`
		Data struct {
			V string `json:"v"`
		} `json:"data"`
	} `json:"actions"`
}

func (c teamsCard) status() string {
	for _, b := range c.Body {
		if b.ID == "interrupt.status" {
			return b.Text
		}
	}
	return ""
}

// conversationCards polls the stand-in's conversation until ok holds of its cards, as last
// put (the deliverer follows the table's stream, which signals nothing a test can wait on), for
// 30 s at most.
func conversationCards(t *testing.T, conversation string, ok func([]teamsCard) bool) []teamsCard {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var list struct {
			Activities []struct {
				Activity struct {
					Attachments []struct {
						ContentType string    `json:"contentType"`
						Content     teamsCard `json:"content"`
					} `json:"attachments"`
				} `json:"activity"`
			} `json:"activities"`
		}
		a := call{method: "GET", path: botframework.Path + "/v3/conversations/" + url.PathEscape(conversation) + "/activities"}.must(t)
		a.json(t, &list)
		var cards []teamsCard
		for _, act := range list.Activities {
			for _, at := range act.Activity.Attachments {
				if at.ContentType == "application/vnd.microsoft.card.adaptive" {
					cards = append(cards, at.Content)
				}
			}
		}
		if ok(cards) {
			return cards
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the conversation holds %+v", cards)
		}
		<-time.After(100 * time.Millisecond) // the stream signals nothing a test can wait on
	}
}

// TestTeamsDecisions walks issue 58's journey on the stack: a tenant's bot, contacts with
// alice's and bob's Teams ids, a teams subscription to a conversation of the stand-in, a 2-of-2
// approval. The card appears in the conversation, posted as the bot; invokes with a token of a
// key the stand-in never published, for another app id, about another serviceUrl, or expired
// are 401; an Entra user no contact names is told why and nothing is recorded; alice's click
// records her vote and the card in the conversation comes to say 1 of 2; her second records
// nothing; another tenant's bot decides nothing of this tenant's; bob's releases it with bob as
// the decider, the card says so, and the engine's Await says so.
func TestTeamsDecisions(t *testing.T) {
	ctx := context.Background()
	op := admin(operator(t))
	op.Scopes = append(op.Scopes, "contacts:manage")
	c := newClient(t, op)
	appID := teamsAppID()
	if _, err := c.PutTeamsBot(ctx, client.TeamsBotRequest{AppID: appID, AppPassword: "a-client-secret-of-forty-characters-long", TenantID: teamsEntraTenant}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"alice", "bob"} {
		if a := do(t, "PUT", "/contacts/principal/"+p, jwt(t, op), `{"teams":"`+teamsUser(p)+`"}`); a.Status/100 != 2 {
			t.Fatalf("%s's contact: %d %s", p, a.Status, a.Body)
		}
	}
	service := botframework.ServiceURL(gatewayURL())
	conversation := "19:" + newRun("approvals") + "@thread.tacv2"
	if _, err := c.Subscribe(ctx, "", []string{"*"}, "teams", client.InConversation(service, conversation)); err != nil {
		t.Fatal(err)
	}
	run := newRun("teams")
	payload := `{"kind":"approval","key":"pay","timeoutMs":3600000,"data":{"artifactId":"inv-5881","artifactType":"invoice","title":"Pay invoice 5881","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`
	if a := do(t, "POST", "/runs/"+run+"/interrupts", jwt(t, op), `{"nodeId":"approve","payload":`+payload+`}`); a.Status != 201 {
		t.Fatalf("request: %d %s", a.Status, a.Body)
	}
	card := conversationCards(t, conversation, func(cs []teamsCard) bool { return len(cs) > 0 })[0]
	var accept string
	for _, a := range card.Actions {
		if a.Verb == "interrupt.accept" {
			accept = a.Data.V
		}
	}
	if accept == "" {
		t.Fatalf("the card posted offers no Approve: %+v", card)
	}

	invoke := func(tok, user string) answer {
		t.Helper()
		return call{method: "POST", path: "/teams/messages", bearer: tok, body: teamsInvoke(accept, user)}.must(t)
	}
	told := func(a answer, want string) {
		t.Helper()
		var ans struct {
			Type  string `json:"type"`
			Value string `json:"value"`
		}
		if a.Status != 200 || json.Unmarshal(a.Body, &ans) != nil || ans.Type != "application/vnd.microsoft.activity.message" || !strings.Contains(ans.Value, want) {
			t.Errorf("answered %d %s, want a message saying %q", a.Status, a.Body, want)
		}
	}
	answered := func(a answer) teamsCard {
		t.Helper()
		var ans struct {
			Type  string    `json:"type"`
			Value teamsCard `json:"value"`
		}
		if a.Status != 200 || json.Unmarshal(a.Body, &ans) != nil || ans.Type != "application/vnd.microsoft.card.adaptive" {
			t.Fatalf("answered %d %s, want the card", a.Status, a.Body)
		}
		return ans.Value
	}
	votes := func() (voted []string) {
		t.Helper()
		var page struct {
			Events []struct {
				Type    string `json:"type"`
				Payload struct {
					Principal string `json:"principal"`
				} `json:"payload"`
			} `json:"events"`
		}
		do(t, "GET", "/runs/"+run+"/events", jwt(t, op), "").json(t, &page)
		for _, e := range page.Events {
			if e.Type == "interrupt.voted" {
				voted = append(voted, e.Payload.Principal)
			}
		}
		return voted
	}

	stranger, err := botframework.New("not-published")
	if err != nil {
		t.Fatal(err)
	}
	unpublished, err := stranger.Sign(botframework.Token{AppID: appID, ServiceURL: service, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	expired := call{method: "POST", path: botframework.Path + "/token",
		body: fmt.Sprintf(`{"appId":%q,"serviceUrl":%q,"issuedAt":%q}`, appID, service, time.Now().Add(-2*time.Hour).UTC().Format(time.RFC3339))}.must(t)
	var exp struct {
		Token string `json:"token"`
	}
	if expired.json(t, &exp); exp.Token == "" {
		t.Fatalf("an expired token: %d %s", expired.Status, expired.Body)
	}
	for name, tok := range map[string]string{
		"a key never published": unpublished,
		"another app id":        botFrameworkToken(t, teamsAppID(), service),
		"another serviceUrl":    botFrameworkToken(t, appID, "https://smba.trafficmanager.net/emea/"),
		"expired":               exp.Token,
	} {
		if a := invoke(tok, teamsUser("alice")); a.Status != 401 || !strings.HasPrefix(a.Header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s: %d %s, want a 401 problem", name, a.Status, a.Body)
		}
	}
	tok := botFrameworkToken(t, appID, service)
	told(invoke(tok, teamsUser("mallory")), "No contact names your Teams account")
	if v := votes(); len(v) != 0 {
		t.Fatalf("refused invokes voted: %v", v)
	}

	if got := answered(invoke(tok, teamsUser("alice"))); !strings.Contains(got.status(), "1 of 2") {
		t.Errorf("alice's click answers a card saying %q", got.status())
	}
	conversationCards(t, conversation, func(cs []teamsCard) bool { return len(cs) == 1 && strings.Contains(cs[0].status(), "1 of 2") })
	// Her second click, as a person would try it: with the local tool, on the conversation's card.
	bin := filepath.Join(t.TempDir(), "teamsclick")
	build := exec.Command("go", "build", "-o", bin, "./infra/local/cmd/teamsclick")
	build.Dir = root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build teamsclick: %v: %s", err, out)
	}
	out, err := exec.Command(bin, "-url", gatewayURL(), "-app", appID, "-tenant", teamsEntraTenant, "-user", teamsUser("alice"),
		"-conversation", conversation).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "200 ") || !strings.Contains(string(out), "a vote counts once") {
		t.Errorf("alice's second click: %v: %s", err, out)
	}
	if v := votes(); strings.Join(v, ",") != "alice" {
		t.Fatalf("votes %v, want alice's alone", v)
	}

	// Another tenant's bot, registered and clicking as Teams would for it, names this tenant's
	// card: nothing of this tenant's.
	otherApp := teamsAppID()
	if _, err := newClient(t, admin(operator(t))).PutTeamsBot(ctx, client.TeamsBotRequest{AppID: otherApp, AppPassword: "another-client-secret-of-forty-characters", TenantID: teamsEntraTenant}); err != nil {
		t.Fatal(err)
	}
	told(invoke(botFrameworkToken(t, otherApp, service), teamsUser("bob")), "not of your organisation's bot")
	if v := votes(); strings.Join(v, ",") != "alice" {
		t.Fatalf("another tenant's bot voted: %v", v)
	}

	if got := answered(invoke(tok, teamsUser("bob"))); got.status() != "Accepted by bob" {
		t.Errorf("bob's click answers a card saying %q", got.status())
	}
	cards := conversationCards(t, conversation, func(cs []teamsCard) bool { return len(cs) == 1 && cs[0].status() == "Accepted by bob" })
	for _, a := range cards[0].Actions {
		if a.Type == "Action.Execute" {
			t.Errorf("the decided card still offers %s", a.Verb)
		}
	}
	if o, err := c.Await(ctx, run, "approve", nil); err != nil || o.DecidedBy() != "bob" {
		t.Errorf("the engine's outcome: decided by %q, %v", o.DecidedBy(), err)
	}
}
