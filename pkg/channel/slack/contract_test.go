package slack_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	slackgo "github.com/slack-go/slack"

	"github.com/interrupthost/interrupthost/internal/channeltest"
	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/slackclick"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// TestTheChannelContract: Slack's messages and clicks under the decider model's table
// (channeltest.Exercise), each click signed as Slack signs it and served by Interactions.
func TestTheChannelContract(t *testing.T) {
	t.Parallel()
	channeltest.Exercise(t, func(t *testing.T, w channeltest.World) channeltest.Harness {
		secrets := webhook.NewCache(inmem.NewSecrets(), nil)
		return &harness{w: w, r: newReceiver(t), apps: &slack.Integrations{Store: w.Store, Secrets: secrets},
			x: &slack.Interactions{Host: w.Host, Apps: w.Store, Secrets: secrets, Keys: hosttest.Keys, Contacts: w.Store, Delegations: w.Store,
				Poster: outbound.NewHTTPClient(true), AllowPrivate: true}}
	})
}

// harness is Slack as channeltest drives it: acme's app A0001 in T0001, each person's member id
// U0 and their name in capitals.
type harness struct {
	w    channeltest.World
	r    *receiver
	apps *slack.Integrations
	x    *slack.Interactions
}

func memberOf(person string) string { return "U0" + strings.ToUpper(person) }

func (h *harness) Enrol(t *testing.T, people ...string) {
	t.Helper()
	ctx := context.Background()
	admin := interrupt.Principal{Subject: "admin", Tenant: h.w.Tenant}
	if _, _, err := h.apps.Put(ctx, admin, slack.Request{AppID: "A0001", TeamID: "T0001", SigningSecret: secret}); err != nil {
		t.Fatal(err)
	}
	dir := &contacts.Directory{Store: h.w.Store}
	for _, p := range people {
		if _, _, err := dir.Put(ctx, admin, contacts.KindPrincipal, p, contacts.Request{Slack: memberOf(p)}); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *harness) Offers(t *testing.T, c runlog.Commit, e runlog.Envelope) bool {
	t.Helper()
	ch := &slack.Channel{Contacts: h.w.Store, Apps: h.w.Store, Keys: hosttest.Keys}
	b, err := ch.Render(context.Background(), h.w.Tenant, c, e, outbound.Notice{}, h.w.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	var msg slackgo.WebhookMessage
	if err := json.Unmarshal(b, &msg); err != nil {
		t.Fatalf("not a Slack message: %v: %s", err, b)
	}
	for _, block := range msg.Blocks.BlockSet {
		if a, ok := block.(*slackgo.ActionBlock); ok && slices.ContainsFunc(a.Elements.ElementSet, func(e slackgo.BlockElement) bool {
			btn, ok := e.(*slackgo.ButtonBlockElement)
			return ok && (btn.ActionID == slack.ActionAccept || btn.ActionID == slack.ActionReject)
		}) {
			return true
		}
	}
	return false
}

func (h *harness) Click(t *testing.T, person, runID, interruptID string, action interrupt.Action) bool {
	t.Helper()
	ctx := context.Background()
	buttons, err := slack.DecisionButtons(ctx, hosttest.Keys, slack.Button{Tenant: h.w.Tenant, RunID: runID, InterruptID: interruptID})
	if err != nil {
		t.Fatal(err)
	}
	var value string
	for _, b := range buttons {
		if btn := b.(*slackgo.ButtonBlockElement); btn.ActionID == slack.ActionID(action) {
			value = btn.Value
		}
	}
	payload, err := slackclick.Click{AppID: "A0001", TeamID: "T0001", UserID: memberOf(person), ActionID: slack.ActionID(action), Value: value,
		ResponseURL: h.r.srv.URL + "/hooks", TriggerID: "trig-1"}.Payload()
	if err != nil {
		t.Fatal(err)
	}
	body := slackclick.Body(payload)
	headers := map[string]string{}
	for k, v := range slackclick.Sign(secret, h.w.Clock.Now(), body) {
		headers[strings.ToLower(k)] = v
	}
	ans, err := h.x.Handle(ctx, headers, body)
	if err != nil {
		t.Fatalf("%s's click: %v", person, err)
	}
	return ans.Outcome == slack.OutcomeRecorded
}
