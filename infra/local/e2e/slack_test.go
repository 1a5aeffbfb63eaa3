package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/slackclick"
)

// slackIDs are a fresh app and workspace pair: the local stack keeps what earlier runs made.
func slackIDs() (app, team string) {
	s := strings.ToUpper(rand.Text()[:10])
	return "A" + s, "T" + s
}

// TestSlackDecisions walks issue 45's journey on the stack: a tenant's Slack app (registered by
// an administrator, integrations:manage, after another tenant registered the same pair), contacts with
// alice's and bob's Slack ids, a Slack subscription to a local receiver (Slack's stand-in: the
// incoming webhook and the clicks' response_url), a 2-of-2 approval. Clicks are signed as Slack
// signs them (internal/slackclick, which infra/local/cmd/slackclick runs): one signed with
// another secret and one six minutes old are 401; a member no contact names is told why and
// nothing is recorded; alice's click is her vote and her second click nothing; the other
// tenant's app, registered on the same pair with its own secret, cannot decide it; bob's click releases it with bob as the decider, and the message is
// replaced with the outcome.
func TestSlackDecisions(t *testing.T) {
	ctx := context.Background()
	op := operator(t)
	const secret = "8f742231b10e8888abcd99e5a6b7c885"
	appID, teamID := slackIDs()
	// Registering the app's secret is as strong as a vote: subscriptions:manage alone may not.
	if _, err := newClient(t, op).PutSlackApp(ctx, client.SlackAppRequest{AppID: appID, TeamID: teamID, SigningSecret: secret}); !client.IsCode(err, "forbidden") {
		t.Fatalf("subscriptions:manage registering a Slack app: %v, want 403", err)
	}
	// Another tenant registers the pair first (its ids are not secret), with a secret of its own.
	other := newClient(t, admin(operator(t)))
	const otherSecret = "0123456789abcdef0123456789abcdef"
	if _, err := other.PutSlackApp(ctx, client.SlackAppRequest{AppID: appID, TeamID: teamID, SigningSecret: otherSecret}); err != nil {
		t.Fatal(err)
	}
	op = admin(op)
	op.Scopes = append(op.Scopes, "contacts:manage")
	c := newClient(t, op)
	app, err := c.PutSlackApp(ctx, client.SlackAppRequest{AppID: appID, TeamID: teamID, SigningSecret: secret})
	if err != nil || app.InteractionsURL != gatewayURL()+"/slack/interactions" || app.BotToken {
		t.Fatalf("put the app: %+v %v", app, err)
	}
	if got, err := c.SlackApp(ctx); err != nil || got.AppID != appID || strings.Contains(mustJSON(t, got), secret) {
		t.Fatalf("read the app: %+v %v", got, err)
	}
	for ref, id := range map[string]string{"alice": "U0ALICE", "bob": "U0BOB"} {
		if _, err := c.PutContact(ctx, "principal", ref, "", "", id); err != nil {
			t.Fatal(err)
		}
	}

	// Slack's two ends, each its own receiver: the incoming webhook gets the subscription's
	// message at least once (a copy may come at any time, after a slow answer), while a click's
	// response_url gets one message per click, posted before the click is answered; so the
	// clicks' messages are counted apart from any copy of the request's.
	hooks, responses := rawReceiver(t), rawReceiver(t)
	if _, err := c.Subscribe(ctx, hooks.url+"/incoming", []string{"interrupt.requested"}, "slack"); err != nil {
		t.Fatal(err)
	}
	run := newRun("slack")
	payload := `{"kind":"approval","key":"pay","timeoutMs":3600000,"data":{"artifactId":"inv-4471","artifactType":"invoice","title":"Pay invoice 4471","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`
	if a := do(t, "POST", "/runs/"+run+"/interrupts", jwt(t, op), `{"nodeId":"approve","payload":`+payload+`}`); a.Status != 201 {
		t.Fatalf("request: %d %s", a.Status, a.Body)
	}
	var msg struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(hooks.await(t, 1)[0]), &msg); err != nil {
		t.Fatal(err)
	}
	var posted slack.WebhookMessage
	_ = json.Unmarshal([]byte(hooks.await(t, 1)[0]), &posted)
	value := map[string]string{}
	for _, b := range posted.Blocks.BlockSet {
		if a, ok := b.(*slack.ActionBlock); ok {
			for _, e := range a.Elements.ElementSet {
				if btn := e.(*slack.ButtonBlockElement); btn.Value != "" {
					value[btn.ActionID] = btn.Value
				}
			}
		}
	}
	if value["interrupt.accept"] == "" || value["interrupt.reject"] == "" {
		t.Fatalf("the message has no decision buttons: %s", msg.Blocks)
	}

	click := func(app, team, user, secret string, at time.Time) answer {
		t.Helper()
		p, err := slackclick.Click{AppID: app, TeamID: team, UserID: user, ActionID: "interrupt.accept", Value: value["interrupt.accept"],
			ResponseURL: responses.url + "/respond", TriggerID: "trig", Blocks: msg.Blocks}.Payload()
		if err != nil {
			t.Fatal(err)
		}
		body := slackclick.Body(p)
		return call{method: "POST", path: "/slack/interactions", body: string(body), headers: slackclick.Sign(secret, at, body)}.must(t)
	}
	votes := func() (voted []string, resolved int) {
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
			switch e.Type {
			case "interrupt.voted":
				voted = append(voted, e.Payload.Principal)
			case "interrupt.resolved":
				resolved++
			}
		}
		return voted, resolved
	}
	// told is the nth message the clicks posted to their response_url.
	told := func(n int) slack.WebhookMessage {
		t.Helper()
		var m slack.WebhookMessage
		if err := json.Unmarshal([]byte(responses.await(t, n)[n-1]), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	if a := click(appID, teamID, "U0ALICE", "fedcba9876543210fedcba9876543210", time.Now()); a.Status != 401 || !strings.HasPrefix(a.Header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("signed with another secret: %d %s", a.Status, a.Body)
	}
	// Six minutes ago, as a person would try it: with the local tool.
	bin := filepath.Join(t.TempDir(), "slackclick")
	build := exec.Command("go", "build", "-o", bin, "./infra/local/cmd/slackclick")
	build.Dir = root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build slackclick: %v: %s", err, out)
	}
	out, err := exec.Command(bin, "-url", gatewayURL()+"/slack/interactions", "-secret", secret, "-app", appID, "-team", teamID,
		"-user", "U0ALICE", "-value", value["interrupt.accept"], "-response-url", responses.url+"/respond", "-skew", "6m").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "401 ") {
		t.Errorf("signed six minutes ago: %v: %s", err, out)
	}
	if a := click(appID, teamID, "U0NOBODY", secret, time.Now()); a.Status != 200 {
		t.Fatalf("a stranger's click: %d %s", a.Status, a.Body)
	}
	if m := told(1); m.ResponseType != "ephemeral" || !strings.Contains(m.Text, "No contact") {
		t.Errorf("the stranger is told %+v", m)
	}
	// The other tenant's click on the pair it registered too, signed with its own secret, names
	// acme's button: nothing of acme's.
	if a := click(appID, teamID, "U0BOB", otherSecret, time.Now()); a.Status != 200 {
		t.Fatalf("another tenant's app: %d %s", a.Status, a.Body)
	}
	if m := told(2); m.ResponseType != "ephemeral" || !strings.Contains(m.Text, "not made by this host for your workspace") {
		t.Errorf("another tenant's clicker is told %+v", m)
	}
	if v, _ := votes(); len(v) != 0 {
		t.Fatalf("refused clicks voted: %v", v)
	}

	if a := click(appID, teamID, "U0ALICE", secret, time.Now()); a.Status != 200 {
		t.Fatalf("alice's click: %d %s", a.Status, a.Body)
	}
	if m := told(3); !m.ReplaceOriginal || !strings.Contains(m.Text, "alice accepted · 1 of 2 approvals") {
		t.Errorf("after alice's vote: %+v", m)
	}
	if a := click(appID, teamID, "U0ALICE", secret, time.Now()); a.Status != 200 {
		t.Fatalf("alice's second click: %d %s", a.Status, a.Body)
	}
	if m := told(4); m.ResponseType != "ephemeral" || !strings.Contains(m.Text, "already voted") {
		t.Errorf("alice's second click is told %+v", m)
	}
	if v, r := votes(); strings.Join(v, ",") != "alice" || r != 0 {
		t.Fatalf("votes %v, resolved %d, want alice's alone", v, r)
	}

	if a := click(appID, teamID, "U0BOB", secret, time.Now()); a.Status != 200 {
		t.Fatalf("bob's click: %d %s", a.Status, a.Body)
	}
	m := told(5)
	if !m.ReplaceOriginal || m.Text != "Accepted by bob" {
		t.Errorf("after bob's vote: %+v", m)
	}
	for _, b := range m.Blocks.BlockSet {
		if a, ok := b.(*slack.ActionBlock); ok {
			for _, e := range a.Elements.ElementSet {
				if id := e.(*slack.ButtonBlockElement).ActionID; strings.HasPrefix(id, "interrupt.") {
					t.Errorf("the outcome's message still has %s", id)
				}
			}
		}
	}
	if v, r := votes(); strings.Join(v, ",") != "alice,bob" || r != 1 {
		t.Errorf("votes %v, resolved %d, want alice's and bob's and one resolution", v, r)
	}
	if o, err := c.Await(ctx, run, "approve", nil); err != nil || o.DecidedBy() != "bob" {
		t.Errorf("the engine's outcome: decided by %q, %v", o.DecidedBy(), err)
	}
	if err := c.DeleteSlackApp(ctx); err != nil {
		t.Fatal(err)
	}
	if a := click(appID, teamID, "U0BOB", secret, time.Now()); a.Status != 401 {
		t.Errorf("a click of a deleted app: %d %s", a.Status, a.Body)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// admin is who may register a tenant's Slack app: tok with integrations:manage.
func admin(tok devjwt.Token) devjwt.Token {
	tok.Scopes = append(slices.Clone(tok.Scopes), "integrations:manage")
	return tok
}
