package outbound_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
)

// TestSlackMessage: the slack format posts a Block Kit message, read here with Slack's Go
// library: the approval's title escaped for mrkdwn, and one "Review" button that opens the
// approval page (a link holding no credential, never an action that decides): everyone in the
// channel sees it, and each decides as whoever signs in.
func TestSlackMessage(t *testing.T) {
	w := newWorld(t)
	r := w.receiver()
	created, err := w.subs.Create(context.Background(), interrupt.Principal{Tenant: "acme"}, outbound.Request{URL: r.url, Events: []string{"interrupt.requested"}, Format: outbound.FormatSlack})
	if err != nil {
		t.Fatal(err)
	}
	r.secret = created.Secret
	w.deliver(w.commit("acme", "run-1", requested("approve", "i1", approval)))
	if len(r.got) != 1 {
		t.Fatalf("got %d deliveries", len(r.got))
	}
	var msg slack.WebhookMessage
	if err := json.Unmarshal(r.got[0].Raw, &msg); err != nil {
		t.Fatalf("not a Slack message: %v: %s", err, r.got[0].Raw)
	}
	if msg.Blocks == nil || len(msg.Blocks.BlockSet) != 3 || msg.Text == "" {
		t.Fatalf("blocks %s", r.got[0].Raw)
	}
	section, ok := msg.Blocks.BlockSet[0].(*slack.SectionBlock)
	if !ok || section.Text.Type != slack.MarkdownType || !strings.Contains(section.Text.Text, "Pay &lt;inv-1&gt; &amp; more") || !strings.Contains(section.Text.Text, "invoice inv-1") {
		t.Errorf("section %+v", msg.Blocks.BlockSet[0])
	}
	actions, ok := msg.Blocks.BlockSet[2].(*slack.ActionBlock)
	if !ok || len(actions.Elements.ElementSet) != 1 {
		t.Fatalf("actions %+v", msg.Blocks.BlockSet[2])
	}
	b, ok := actions.Elements.ElementSet[0].(*slack.ButtonBlockElement)
	if !ok || b.Text.Text != "Review" || b.URL != "https://host.example/approve/run-1/i1" || b.Value != "" {
		t.Errorf("button: %+v", actions.Elements.ElementSet[0])
	}
	if strings.Contains(string(r.got[0].Raw), "ow2.") {
		t.Errorf("a Slack message holds a token: %s", r.got[0].Raw)
	}
}
