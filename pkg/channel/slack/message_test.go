package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/interrupthost/interrupthost/internal/outboundtest"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// unmarked is s without the isolates around the values it inserts (words.Sentence.Plain).
var unmarked = strings.NewReplacer("\u2068", "", "\u2069", "").Replace

// TestSlackMessage: the slack format posts a Block Kit message, read here with Slack's Go
// library: the approval's title escaped for mrkdwn, and one "Review" button that opens the
// approval page (a link holding no credential, never an action that decides): everyone in the
// channel sees it, and each decides as whoever signs in.
func TestSlackMessage(t *testing.T) {
	msg, raw := slackDelivery(t, outboundtest.Approval)
	if msg.Blocks == nil || len(msg.Blocks.BlockSet) != 5 || msg.Text == "" {
		t.Fatalf("blocks %s", raw)
	}
	section, ok := msg.Blocks.BlockSet[1].(*slackgo.SectionBlock)
	if !ok || section.Text.Type != slackgo.PlainTextType || section.Text.Text != "Pay <inv-1> & more\ninvoice inv-1" {
		t.Errorf("section %+v", msg.Blocks.BlockSet[1])
	}
	// The message says whom it is for: the approval's approvers, as no audience is named.
	audience, ok := msg.Blocks.BlockSet[2].(*slackgo.ContextBlock)
	if !ok || len(audience.ContextElements.Elements) != 1 || audience.ContextElements.Elements[0].(*slackgo.TextBlockObject).Text != "For alice, bob" {
		t.Errorf("audience %+v", msg.Blocks.BlockSet[2])
	}
	actions, ok := msg.Blocks.BlockSet[4].(*slackgo.ActionBlock)
	if !ok || len(actions.Elements.ElementSet) != 1 {
		t.Fatalf("actions %+v", msg.Blocks.BlockSet[4])
	}
	b, ok := actions.Elements.ElementSet[0].(*slackgo.ButtonBlockElement)
	if !ok || b.Text.Text != "Review" || b.URL != "https://host.example/approve/run-1/i1" || b.Value != "" {
		t.Errorf("button: %+v", actions.Elements.ElementSet[0])
	}
	if strings.Contains(string(raw), "ow2.") {
		t.Errorf("a Slack message holds a token: %s", raw)
	}
}

// TestSlackTextIsInert: a payload's strings reach Slack as plain text within its limits: a title
// of a thousand "&" is a thousand characters (escaped first and cut after, it grew past Slack's
// 3000 and every later event of the run waited behind a day of retries), and *bold* or a
// mrkdwn link stays text.
func TestSlackTextIsInert(t *testing.T) {
	for _, title := range []string{strings.Repeat("&", 1000), strings.Repeat("<", 5000), "*urgent* <https://evil.example|sign here> @channel"} {
		payload, _ := json.Marshal(map[string]any{"kind": "approval", "key": "k", "data": map[string]any{"artifactId": "a", "artifactType": "t", "title": title, "actions": []string{"accept"}}})
		msg, _ := slackDelivery(t, string(payload))
		for _, b := range msg.Blocks.BlockSet {
			section, ok := b.(*slackgo.SectionBlock)
			if !ok {
				continue
			}
			if section.Text.Type != slackgo.PlainTextType || len([]rune(section.Text.Text)) > 3000 {
				t.Errorf("title %.20q: a section of %s, %d characters", title, section.Text.Type, len([]rune(section.Text.Text)))
			}
		}
		if about := msg.Blocks.BlockSet[1].(*slackgo.SectionBlock).Text.Text; !strings.HasPrefix(about, title[:min(len(title), 100)]) {
			t.Errorf("the title is not shown as written: %.60q", about)
		}
	}
}

// TestSlackMentions: a ref whose contact names a Slack id is mentioned (a person by member id, a
// group by user group), one without is named only; the deadline is shown in each reader's time,
// with the UTC time for clients that cannot; the engine's node and seq are not shown.
func TestSlackMentions(t *testing.T) {
	payload := `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept"],"approversList":["alice","bob"],"approverGroupRefs":["finance"]}}`
	var deadline time.Time
	msg, raw := slackDelivery(t, payload, func(w *outboundtest.World) {
		for _, c := range []contacts.Contact{
			{Kind: "principal", Ref: "alice", Slack: "U024BE7LH", UpdatedAt: w.Clock.Now()},
			{Kind: "group", Ref: "finance", Email: "finance@example.com", Slack: "SAZ94GDB8", UpdatedAt: w.Clock.Now()},
			{Kind: "principal", Ref: "bob", Email: "bob@example.com", UpdatedAt: w.Clock.Now()},
		} {
			if _, err := w.Log.PutContact(context.Background(), "acme", c); err != nil {
				t.Fatal(err)
			}
		}
		deadline = w.Clock.Now().Add(time.Hour)
	})
	audience, ok := msg.Blocks.BlockSet[2].(*slackgo.ContextBlock)
	if !ok || len(audience.ContextElements.Elements) != 2 {
		t.Fatalf("audience %s", raw)
	}
	if names := audience.ContextElements.Elements[0].(*slackgo.TextBlockObject); names.Type != slackgo.PlainTextType || names.Text != "For alice, bob, group finance" {
		t.Errorf("names %+v", names)
	}
	if m := audience.ContextElements.Elements[1].(*slackgo.TextBlockObject); m.Type != slackgo.MarkdownType || m.Text != "<@U024BE7LH> <!subteam^SAZ94GDB8>" {
		t.Errorf("mentions %+v", m)
	}
	when, ok := msg.Blocks.BlockSet[3].(*slackgo.ContextBlock)
	if !ok || len(when.ContextElements.Elements) != 2 {
		t.Fatalf("when %s", raw)
	}
	want := fmt.Sprintf("Decide by <!date^%d^{date_short_pretty} at {time}|%s>", deadline.Unix(), deadline.UTC().Format("2006-01-02 15:04 UTC"))
	if d := when.ContextElements.Elements[1].(*slackgo.TextBlockObject); d.Type != slackgo.MarkdownType || d.Text != want {
		t.Errorf("deadline %+v, want %q", d, want)
	}
	if strings.Contains(string(raw), "seq") || strings.Contains(string(raw), "node") {
		t.Errorf("the message speaks the engine's language: %s", raw)
	}
}

// slackDelivery delivers payload's interrupt.requested to a Slack subscription and reads the
// one message posted with Slack's library; setUp prepares the world first.
func slackDelivery(t *testing.T, payload string, setUp ...func(*outboundtest.World)) (slackgo.WebhookMessage, []byte) {
	t.Helper()
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	for _, f := range setUp {
		f(w)
	}
	r := w.Receiver()
	created, err := w.Subs.Create(context.Background(), interrupt.Principal{Tenant: "acme"}, outbound.Request{URL: r.URL, Events: []string{"interrupt.requested"}, Format: slack.Format})
	if err != nil {
		t.Fatal(err)
	}
	r.Secret = created.Secret
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", payload)))
	if len(r.Got) != 1 {
		t.Fatalf("got %d deliveries", len(r.Got))
	}
	var msg slackgo.WebhookMessage
	if err := json.Unmarshal(r.Got[0].Raw, &msg); err != nil {
		t.Fatalf("not a Slack message: %v: %s", err, r.Got[0].Raw)
	}
	return msg, r.Got[0].Raw
}

// unreadable is a contacts store that cannot be read.
type unreadable struct{}

func (unreadable) Contact(context.Context, string, string, string) (contacts.Contact, error) {
	return contacts.Contact{}, errors.New("the table is unavailable")
}

// TestAnUnreadableContactFailsThePass: a contact the deliverer cannot read fails the commit (its
// batch is delivered again) before anything is sent, and is no attempt of the receiver's: none
// is recorded, and the receiver got nothing.
func TestAnUnreadableContactFailsThePass(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	w.D.Channels = []outbound.Channel{&slack.Channel{Contacts: unreadable{}}}
	r := w.Receiver()
	created, err := w.Subs.Create(context.Background(), interrupt.Principal{Tenant: "acme"}, outbound.Request{URL: r.URL, Events: []string{"interrupt.requested"}, Format: slack.Format})
	if err != nil {
		t.Fatal(err)
	}
	_, errs := w.D.Commits(context.Background(), []runlog.StreamRecord{w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval))})
	if len(errs) != 1 || errs[0] == nil || !strings.Contains(errs[0].Error(), "the table is unavailable") {
		t.Fatalf("errs %v, want the contact's error", errs)
	}
	if len(r.Got) != 0 {
		t.Errorf("the receiver got %d messages", len(r.Got))
	}
	if attempts, err := w.Store.Attempts(context.Background(), "acme", created.ID, 10); err != nil || len(attempts) != 0 {
		t.Errorf("attempts %+v %v, want none", attempts, err)
	}
}

// TestSlackDecisionButtons: where the tenant has a Slack app, an approval whose approvers are
// named principals carries Approve and Reject beside Review, each with a value only the host
// can make that names this interrupt of this tenant and its action; an approval bound by a group
// (a Slack id proves no membership), one that offers neither action, or a tenant without an app
// gets Review alone.
func TestSlackDecisionButtons(t *testing.T) {
	t.Parallel()
	withApp := func(w *outboundtest.World) {
		if _, err := w.Log.PutSlackApp(context.Background(), slack.App{Tenant: "acme", AppID: "A0001", TeamID: "T0001"}); err != nil {
			t.Fatal(err)
		}
	}
	approval := func(data string) string {
		return `{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay",` + data + `}}`
	}
	for _, tc := range []struct {
		name    string
		payload string
		app     bool
		want    []string
	}{
		{"named approvers", approval(`"approversList":["alice","bob"],"requiredApprovals":2,"actions":["accept","reject"]`), true, []string{slack.ActionAccept, slack.ActionReject, "review-0"}},
		{"accept alone offered", approval(`"approversList":["alice"],"actions":["accept","refine"]`), true, []string{slack.ActionAccept, "review-0"}},
		{"bound by a group too", approval(`"approversList":["alice"],"approverGroupRefs":["finance"],"actions":["accept","reject"]`), true, []string{"review-0"}},
		{"no approvers named", approval(`"actions":["accept","reject"]`), true, []string{"review-0"}},
		{"no Slack app", approval(`"approversList":["alice","bob"],"actions":["accept","reject"]`), false, []string{"review-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var setUp []func(*outboundtest.World)
			var keys token.Keys
			setUp = append(setUp, func(w *outboundtest.World) { keys = w.Keys })
			if tc.app {
				setUp = append(setUp, withApp)
			}
			msg, raw := slackDelivery(t, tc.payload, setUp...)
			actions, ok := msg.Blocks.BlockSet[len(msg.Blocks.BlockSet)-1].(*slackgo.ActionBlock)
			if !ok {
				t.Fatalf("no actions: %s", raw)
			}
			var ids []string
			for _, e := range actions.Elements.ElementSet {
				b := e.(*slackgo.ButtonBlockElement)
				ids = append(ids, b.ActionID)
				if b.ActionID != slack.ActionAccept && b.ActionID != slack.ActionReject {
					continue
				}
				v, err := slack.Open(context.Background(), keys, b.Value)
				if err != nil || v.Tenant != "acme" || v.RunID != "run-1" || v.InterruptID != "i1" || slack.ActionID(v.Action) != b.ActionID || b.URL != "" {
					t.Errorf("button %s: %+v %v (url %q)", b.ActionID, v, err, b.URL)
				}
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("buttons %v, want %v", ids, tc.want)
			}
		})
	}
}

// TestTheCallIsToldInWords: an approval that allows a call says it, in words, in its Slack
// message, in a block of its own beside the decision buttons; a call too long for one Slack
// text is cut and its message offers no decision, only the page (its mail: package outbound's
// TestTheCallIsToldInWords).
func TestTheCallIsToldInWords(t *testing.T) {
	const want = "Refunds desk will call issue_refund with order 4471, amount 1,240.00 EUR"
	requested := func(args string) runlog.Event {
		e := outboundtest.Requested("approve", "i1", outboundtest.Approval)
		e.Display = &interrupt.Display{RequesterName: "Refunds desk"}
		e.ToolCall = &interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(args)}
		return e
	}
	long := `{"order":"4471","note":"` + strings.Repeat("x", 4000) + `"}`
	for _, tc := range []struct {
		name, args, call string
		buttons          bool
	}{
		{"whole", `{"order":"4471","amountCents":124000,"currency":"EUR"}`, want, true},
		{"too long", long, "", false},
	} {
		t.Run("slack, "+tc.name, func(t *testing.T) {
			w := outboundtest.NewWorld(t, inmem.NewOutbound())
			if _, err := w.Log.PutSlackApp(context.Background(), slack.App{Tenant: "acme", AppID: "A0001", TeamID: "T0001"}); err != nil {
				t.Fatal(err)
			}
			r := w.Receiver()
			created, err := w.Subs.Create(context.Background(), interrupt.Principal{Tenant: "acme"}, outbound.Request{URL: r.URL, Events: []string{"interrupt.requested"}, Format: slack.Format})
			if err != nil {
				t.Fatal(err)
			}
			r.Secret = created.Secret
			w.Deliver(w.Commit("acme", "run-1", requested(tc.args)))
			var msg slackgo.WebhookMessage
			if len(r.Got) != 1 || json.Unmarshal(r.Got[0].Raw, &msg) != nil {
				t.Fatalf("deliveries %+v", r.Got)
			}
			call, ok := msg.Blocks.BlockSet[2].(*slackgo.SectionBlock)
			switch {
			case !ok:
				t.Fatalf("no call block: %s", r.Got[0].Raw)
			case tc.call != "" && unmarked(call.Text.Text) != tc.call:
				t.Errorf("call %q, want %q", call.Text.Text, tc.call)
			case tc.call == "" && (!strings.HasSuffix(call.Text.Text, "read it whole, and decide, on its page)") || len([]rune(call.Text.Text)) > 3000):
				t.Errorf("a long call: %d runes, ending %q", len([]rune(call.Text.Text)), call.Text.Text[len(call.Text.Text)-60:])
			}
			buttons := msg.Blocks.BlockSet[len(msg.Blocks.BlockSet)-1].(*slackgo.ActionBlock)
			approve := slices.ContainsFunc(buttons.Elements.ElementSet, func(e slackgo.BlockElement) bool {
				return e.(*slackgo.ButtonBlockElement).ActionID == slack.ActionAccept
			})
			if approve != tc.buttons {
				t.Errorf("an Approve button: %v, want %v", approve, tc.buttons)
			}
		})
	}
}

// TestTheValuesAreIsolated: a right-to-left override in a call's argument, the requester's name
// or the title cannot reorder the sentence a Slack message puts it in (a mail: package
// outbound's TestTheValuesAreIsolated): each value
// is between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE, its own directional controls
// (an override, a PDI that would close the isolate early) shown as U+FFFD.
func TestTheValuesAreIsolated(t *testing.T) {
	const call = "\u2068Refunds\ufffd desk\u2069 will call \u2068issue_refund\u2069 with \u2068memo\u2069 \u2068\ufffd\ufffdgnp.exe\u2069, \u2068amount\u2069 1,240.00 EUR"
	payload := `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay \u202eevil","actions":["accept","reject"],"approversList":["alice","bob"]}}`
	requested := func() runlog.Event {
		e := outboundtest.Requested("approve", "i1", payload)
		e.Display = &interrupt.Display{RequesterName: "Refunds\u202e desk"}
		e.ToolCall = &interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{"memo":"\u2069\u202egnp.exe","amountCents":124000,"currency":"EUR"}`)}
		return e
	}
	t.Run("slack", func(t *testing.T) {
		w := outboundtest.NewWorld(t, inmem.NewOutbound())
		r := w.Receiver()
		created, err := w.Subs.Create(context.Background(), interrupt.Principal{Tenant: "acme"}, outbound.Request{URL: r.URL, Events: []string{"interrupt.requested"}, Format: slack.Format})
		if err != nil {
			t.Fatal(err)
		}
		r.Secret = created.Secret
		w.Deliver(w.Commit("acme", "run-1", requested()))
		var msg slackgo.WebhookMessage
		if len(r.Got) != 1 || json.Unmarshal(r.Got[0].Raw, &msg) != nil {
			t.Fatalf("deliveries %+v", r.Got)
		}
		if got := msg.Blocks.BlockSet[2].(*slackgo.SectionBlock).Text.Text; got != call {
			t.Errorf("call %q\nwant %q", got, call)
		}
	})
}

// TestAChannelIsToldOnce: a subscription of every event ("*") posts an approval's request to
// Slack once, without its legacy alias (approval.requested, for webhook receivers); a
// standard-webhooks subscription of every event receives both, and a Slack subscription that
// names the alias itself gets it.
func TestAChannelIsToldOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		format string
		events []string
		want   int
	}{
		{"slack, every event", slack.Format, []string{"*"}, 1},
		{"slack, naming the alias", slack.Format, []string{"approval.requested"}, 1},
		{"standard-webhooks, every event", outbound.FormatStandard, []string{"*"}, 2},
	} {
		w := outboundtest.NewWorld(t, inmem.NewOutbound())
		r := w.Receiver()
		created, err := w.Subs.Create(context.Background(), interrupt.Principal{Tenant: "acme"}, outbound.Request{URL: r.URL, Events: c.events, Format: c.format})
		if err != nil {
			t.Fatal(err)
		}
		r.Secret = created.Secret
		w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval)))
		if len(r.Got) != c.want {
			t.Errorf("%s: %d deliveries, want %d", c.name, len(r.Got), c.want)
		}
	}
}

// TestAChannelSaysItInWords: after a request, what happens to it reaches Slack as a sentence
// that names it by its title (isolated against bidirectional controls), never as an event's
// name: a vote with the count so far, the outcome and who decided, a reminder, an expiry; the
// title is read from the run as it stands, and while the request waits the message says by
// when to decide.
func TestAChannelSaysItInWords(t *testing.T) {
	t.Parallel()
	const title = "\u2068Pay <inv-1> & more\u2069"
	quorum := strings.Replace(outboundtest.Approval, `"approversList":["alice","bob"]`, `"approversList":["alice","bob"],"requiredApprovals":2`, 1)
	event := func(typ, payload string) runlog.Event {
		return runlog.Event{Type: typ, NodeID: "approve", InterruptID: "i1", Payload: json.RawMessage(payload)}
	}
	for _, c := range []struct {
		name  string
		event runlog.Event
		want  string
		when  bool // the message says by when to decide
	}{
		{"a vote", event(interrupt.EventVoted, `{"nodeId":"approve","interruptId":"i1","principal":"alice","action":"accept","tally":{"approvals":1,"rejections":0,"required":2}}`),
			"\u2068alice\u2069 accepted “" + title + "” · 1 of 2 approvals", true},
		{"the outcome", event(interrupt.EventResolved, `{"nodeId":"approve","interruptId":"i1","kind":"approval","resumeValue":{"action":"reject","decidedBy":"bob"}}`),
			"Rejected by \u2068bob\u2069: “" + title + "”", false},
		{"a reminder", event(interrupt.EventReminded, `{"nodeId":"approve","interruptId":"i1","reminder":1,"recipients":[{"kind":"principal","ref":"bob"}]}`),
			"Reminder: “" + title + "” still waits for a decision", true},
		{"an expiry", event(interrupt.EventExpired, `{"nodeId":"approve","interruptId":"i1","kind":"approval"}`),
			"Expired without a decision: “" + title + "”", false},
		{"a delegate's vote", event(interrupt.EventVoted, `{"nodeId":"approve","interruptId":"i1","principal":"bob","onBehalfOf":"alice","action":"accept","tally":{"approvals":1,"rejections":0,"required":2}}`),
			"\u2068bob\u2069, for \u2068alice\u2069 accepted “" + title + "” · 1 of 2 approvals", true},
	} {
		w := outboundtest.NewWorld(t, inmem.NewOutbound())
		r := w.Receiver()
		created, err := w.Subs.Create(context.Background(), interrupt.Principal{Tenant: "acme"}, outbound.Request{URL: r.URL, Events: []string{c.event.Type}, Format: slack.Format})
		if err != nil {
			t.Fatal(err)
		}
		r.Secret = created.Secret
		w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", quorum))
		w.Deliver(w.Commit("acme", "run-1", c.event))
		if len(r.Got) != 1 {
			t.Fatalf("%s: %d deliveries", c.name, len(r.Got))
		}
		var msg slackgo.WebhookMessage
		if err := json.Unmarshal(r.Got[0].Raw, &msg); err != nil {
			t.Fatal(err)
		}
		if msg.Text != c.want {
			t.Errorf("%s: %q\nwant %q", c.name, msg.Text, c.want)
		}
		if when := strings.Contains(string(r.Got[0].Raw), "Decide by"); when != c.when {
			t.Errorf("%s: says by when to decide: %v, want %v", c.name, when, c.when)
		}
	}
}

// TestAChannelSaysTheTenantsEvents: a delegation set and ended, the tenant's own events, are
// said in words in a channel subscribed to them.
func TestAChannelSaysTheTenantsEvents(t *testing.T) {
	t.Parallel()
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	r := w.Receiver()
	created, err := w.Subs.Create(context.Background(), interrupt.Principal{Tenant: "acme"}, outbound.Request{URL: r.URL, Events: []string{interrupt.EventDelegationSet, interrupt.EventDelegationEnded}, Format: slack.Format})
	if err != nil {
		t.Fatal(err)
	}
	r.Secret = created.Secret
	changed := `{"principal":"alice","delegate":"bob","from":"2026-12-07T09:00:00Z","until":"2026-12-14T00:00:00Z","by":"alice","version":1}`
	w.Deliver(w.Commit("acme", runlog.TenantLog, runlog.Event{Type: interrupt.EventDelegationSet, Payload: json.RawMessage(changed)}),
		w.Commit("acme", runlog.TenantLog, runlog.Event{Type: interrupt.EventDelegationEnded, Payload: json.RawMessage(changed)}))
	var said []string
	for _, got := range r.Got {
		var msg slackgo.WebhookMessage
		if err := json.Unmarshal(got.Raw, &msg); err != nil {
			t.Fatal(err)
		}
		said = append(said, msg.Text)
	}
	want := []string{"\u2068alice\u2069 is away from 7 December until 14 December: \u2068bob\u2069 decides in their place", "\u2068alice\u2069 is back: \u2068bob\u2069 no longer decides in their place"}
	if !slices.Equal(said, want) {
		t.Errorf("the channel said %q, want %q", said, want)
	}
}
