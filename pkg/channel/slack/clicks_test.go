package slack_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/slackclick"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

const (
	secret      = "8f742231b10e8888abcd99e5a6b7c885"
	otherSecret = "0123456789abcdef0123456789abcdef"
)

// receiver stands in for Slack's response_url and its Web API: what the app posted.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []slackgo.WebhookMessage
	opened []json.RawMessage // views.open's views
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if strings.HasSuffix(req.URL.Path, "/views.open") {
			var v struct {
				View json.RawMessage `json:"view"`
			}
			_ = json.Unmarshal(b, &v)
			r.opened = append(r.opened, v.View)
			_, _ = w.Write([]byte(`{"ok":true,"view":{"id":"V1"}}`))
			return
		}
		var m slackgo.WebhookMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("not a message: %s", b)
		}
		r.got = append(r.got, m)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) last(t *testing.T) slackgo.WebhookMessage {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		t.Fatal("nothing posted to the response_url")
	}
	return r.got[len(r.got)-1]
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// world is a host over memory with acme's Slack app (A0001 in T0001) and evilcorp's (A0002 in
// T0002), contacts naming alice's and bob's Slack ids, and a 2-of-2 approval by alice and bob.
type world struct {
	h     *host.Host
	log   *inmem.Store
	reads *hosttest.Reading // counts the reads of a run's log
	x     *slack.Interactions
	r     *receiver
	value map[string]string // the buttons' values by action id
}

func newWorld(t *testing.T, botToken string) *world {
	t.Helper()
	ctx := context.Background()
	reads := &hosttest.Reading{}
	h, log := hosttest.MemHostOn(t, func(s host.Store) host.Store { reads.Store = s; return reads }, func(s *hosttest.Setup) { s.Env.Now = time.Now })
	secrets := inmem.NewSecrets()
	apps := &slack.Integrations{Store: log, Secrets: webhook.NewCache(secrets, nil)}
	if _, _, err := apps.Put(ctx, hosttest.Who("admin"), slack.Request{AppID: "A0001", TeamID: "T0001", SigningSecret: secret, BotToken: botToken}); err != nil {
		t.Fatal(err)
	}
	evil := interrupt.Principal{Subject: "admin", Tenant: "evilcorp"}
	if _, _, err := apps.Put(ctx, evil, slack.Request{AppID: "A0002", TeamID: "T0002", SigningSecret: otherSecret}); err != nil {
		t.Fatal(err)
	}
	dir := &contacts.Directory{Store: log}
	for ref, id := range map[string]string{"alice": "U0ALICE", "bob": "U0BOB", "carol": "U0CAROL"} {
		if _, _, err := dir.Put(ctx, hosttest.Who("admin"), contacts.KindPrincipal, ref, contacts.Request{Slack: id}); err != nil {
			t.Fatal(err)
		}
	}
	payload := `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`
	view, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "run-1", host.Request{NodeID: "approve", Payload: json.RawMessage(payload)})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{h: h, log: log, reads: reads, r: newReceiver(t), value: map[string]string{}}
	buttons, err := slack.DecisionButtons(ctx, hosttest.Keys, slack.Button{Tenant: "acme", RunID: "run-1", InterruptID: view.InterruptID})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range buttons {
		btn := b.(*slackgo.ButtonBlockElement)
		w.value[btn.ActionID] = btn.Value
	}
	w.x = &slack.Interactions{
		Host: h, Apps: log, Secrets: webhook.NewCache(secrets, nil), Keys: hosttest.Keys, Contacts: log,
		Poster: outbound.NewHTTPClient(true), AllowPrivate: true, SlackAPI: w.r.srv.URL + "/api",
	}
	return w
}

// click signs a click of action by user as app's, with secret, at at.
func (w *world) click(t *testing.T, app, team, user, action, value, sec string, at time.Time) (slack.Answer, error) {
	t.Helper()
	blocks := `[{"type":"section","text":{"type":"plain_text","text":"approval requested in run run-1"}},` +
		`{"type":"actions","elements":[` +
		`{"type":"button","action_id":"interrupt.accept","value":"` + w.value[slack.ActionAccept] + `","text":{"type":"plain_text","text":"Approve"}},` +
		`{"type":"button","action_id":"interrupt.reject","value":"` + w.value[slack.ActionReject] + `","text":{"type":"plain_text","text":"Reject"}},` +
		`{"type":"button","action_id":"review-0","url":"https://host.example/approve/run-1/i","text":{"type":"plain_text","text":"Review"}}]}]`
	payload, err := slackclick.Click{AppID: app, TeamID: team, UserID: user, ActionID: action, Value: value, ResponseURL: w.r.srv.URL + "/hooks", TriggerID: "trig-1", Blocks: json.RawMessage(blocks)}.Payload()
	if err != nil {
		t.Fatal(err)
	}
	return w.send(t, payload, sec, at)
}

func (w *world) send(t *testing.T, payload []byte, sec string, at time.Time) (slack.Answer, error) {
	t.Helper()
	body := slackclick.Body(payload)
	headers := map[string]string{}
	for k, v := range slackclick.Sign(sec, at, body) {
		headers[strings.ToLower(k)] = v
	}
	return w.x.Handle(context.Background(), headers, body)
}

func (w *world) commits(t *testing.T) int {
	t.Helper()
	cs, err := w.log.Read(context.Background(), runKey, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(cs)
}

var runKey = runlog.Key{Tenant: "acme", RunID: "run-1"}

// TestAClickIsSlacksOrNothing: a click signed with another secret, one signed six minutes ago,
// one naming an app no tenant registered, and one whose signature covers another body are 401
// and read no run, write nothing, answer nothing in Slack.
func TestAClickIsSlacksOrNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	now := time.Now()
	for name, f := range map[string]func() (slack.Answer, error){
		"another secret": func() (slack.Answer, error) {
			return w.click(t, "A0001", "T0001", "U0ALICE", slack.ActionAccept, w.value[slack.ActionAccept], otherSecret, now)
		},
		"six minutes ago": func() (slack.Answer, error) {
			return w.click(t, "A0001", "T0001", "U0ALICE", slack.ActionAccept, w.value[slack.ActionAccept], secret, now.Add(-6*time.Minute))
		},
		"an unknown app": func() (slack.Answer, error) {
			return w.click(t, "A0009", "T0001", "U0ALICE", slack.ActionAccept, w.value[slack.ActionAccept], secret, now)
		},
		"another body": func() (slack.Answer, error) {
			payload, _ := slackclick.Click{AppID: "A0001", TeamID: "T0001", UserID: "U0ALICE", ActionID: slack.ActionAccept, Value: w.value[slack.ActionAccept]}.Payload()
			headers := map[string]string{}
			for k, v := range slackclick.Sign(secret, now, slackclick.Body([]byte(`{}`))) {
				headers[strings.ToLower(k)] = v
			}
			return w.x.Handle(context.Background(), headers, slackclick.Body(payload))
		},
	} {
		if _, err := f(); interrupt.ErrorCode(err) != interrupt.CodeUnauthorized {
			t.Errorf("%s: %v, want 401", name, err)
		}
	}
	if n := w.commits(t); n != 1 {
		t.Errorf("%d commits, want the request alone", n)
	}
	if n := w.r.count(); n != 0 {
		t.Errorf("%d messages posted", n)
	}
}

// TestClicksDecideAsTheContact walks the 2-of-2 approval: a member no contact names is
// told why, alone, and nothing is recorded; alice's click records her vote and shows the tally
// with the buttons kept; her second click records nothing; evilcorp's app cannot decide acme's
// interrupt, nor a value forged; bob's click releases the approval with bob as the decider, and
// the message says so without its decision buttons.
func TestClicksDecideAsTheContact(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	now := time.Now()
	accept := w.value[slack.ActionAccept]

	ans, err := w.click(t, "A0001", "T0001", "U0NOBODY", slack.ActionAccept, accept, secret, now)
	if err != nil || ans.Outcome != slack.OutcomeRefused {
		t.Fatalf("a stranger's click: %+v %v", ans, err)
	}
	if m := w.r.last(t); m.ResponseType != slackgo.ResponseTypeEphemeral || m.ReplaceOriginal || !strings.Contains(m.Text, "No contact") {
		t.Errorf("the stranger is told %+v", m)
	}
	// carol has a contact, but the approval does not name her.
	if ans, err := w.click(t, "A0001", "T0001", "U0CAROL", slack.ActionAccept, accept, secret, now); err != nil || ans.Outcome != slack.OutcomeRefused {
		t.Errorf("carol's click: %+v %v", ans, err)
	}
	if n := w.commits(t); n != 1 {
		t.Fatalf("a refused click wrote: %d commits", n)
	}

	if ans, err := w.click(t, "A0001", "T0001", "U0ALICE", slack.ActionAccept, accept, secret, now); err != nil || ans.Outcome != slack.OutcomeRecorded {
		t.Fatalf("alice's click: %+v %v", ans, err)
	}
	m := w.r.last(t)
	if !m.ReplaceOriginal || m.ResponseType == slackgo.ResponseTypeEphemeral || !strings.Contains(m.Text, "alice accepted · 1 of 2 approvals") {
		t.Errorf("after alice's vote: %+v", m)
	}
	if ids := buttonIDs(m); strings.Join(ids, ",") != "interrupt.accept,interrupt.reject,review-0" {
		t.Errorf("after alice's vote the buttons are %v", ids)
	}
	if ans, _ := w.click(t, "A0001", "T0001", "U0ALICE", slack.ActionAccept, accept, secret, now); ans.Outcome != slack.OutcomeRefused || !strings.Contains(w.r.last(t).Text, "already voted") {
		t.Errorf("alice's second click: %+v, told %q", ans, w.r.last(t).Text)
	}
	if n := w.commits(t); n != 2 {
		t.Fatalf("%d commits after alice's clicks, want 2", n)
	}

	// evilcorp's app, signed with its own secret, names acme's interrupt: nothing of acme's.
	if ans, err := w.click(t, "A0002", "T0002", "U0BOB", slack.ActionAccept, accept, otherSecret, now); err != nil || ans.Outcome != slack.OutcomeRefused {
		t.Errorf("evilcorp's click: %+v %v", ans, err)
	}
	forged := strings.Replace(accept, accept[len(accept)-6:], "AAAAAA", 1)
	if ans, _ := w.click(t, "A0001", "T0001", "U0BOB", slack.ActionAccept, forged, secret, now); ans.Outcome != slack.OutcomeRefused {
		t.Errorf("a forged value: %+v", ans)
	}
	// Reject's value under Approve's action id is not Reject's button.
	if ans, _ := w.click(t, "A0001", "T0001", "U0BOB", slack.ActionAccept, w.value[slack.ActionReject], secret, now); ans.Outcome != slack.OutcomeRefused {
		t.Errorf("a value moved to another button: %+v", ans)
	}
	if n := w.commits(t); n != 2 {
		t.Fatalf("%d commits after refused clicks, want 2", n)
	}

	if ans, err := w.click(t, "A0001", "T0001", "U0BOB", slack.ActionAccept, accept, secret, now); err != nil || ans.Outcome != slack.OutcomeRecorded {
		t.Fatalf("bob's click: %+v %v", ans, err)
	}
	m = w.r.last(t)
	if !m.ReplaceOriginal || m.Text != "Accepted by bob" {
		t.Errorf("after bob's vote: %+v", m)
	}
	if ids := buttonIDs(m); strings.Join(ids, ",") != "review-0" {
		t.Errorf("after the outcome the buttons are %v", ids)
	}
	o, err := w.h.OpenAs(context.Background(), hosttest.Who("x"), "run-1", mustInterrupt(t, w))
	if o.Status != interrupt.StatusResolved || o.DecidedBy != "bob" {
		t.Errorf("the interrupt: %s by %q (%v)", o.Status, o.DecidedBy, err)
	}
	if ans, _ := w.click(t, "A0001", "T0001", "U0ALICE", slack.ActionReject, w.value[slack.ActionReject], secret, now); ans.Outcome != slack.OutcomeRefused || !strings.Contains(w.r.last(t).Text, "closed (Accepted by bob)") {
		t.Errorf("a click after the outcome: %+v, told %q", ans, w.r.last(t).Text)
	}
}

// TestRejectAsksAReason: with a bot token, Reject opens a modal (views.open) and records
// nothing; its submission without a reason is refused in the modal, with one it records the
// rejection with that reason as the vote's feedback and updates the message.
func TestRejectAsksAReason(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "xoxb-1234567890-abcdefghij")
	now := time.Now()
	ans, err := w.click(t, "A0001", "T0001", "U0ALICE", slack.ActionReject, w.value[slack.ActionReject], secret, now)
	if err != nil || ans.Outcome != slack.OutcomeAsked {
		t.Fatalf("reject: %+v %v", ans, err)
	}
	if w.commits(t) != 1 || len(w.r.opened) != 1 {
		t.Fatalf("reject wrote %d commits, opened %d modals", w.commits(t)-1, len(w.r.opened))
	}
	var view struct {
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
	}
	if err := json.Unmarshal(w.r.opened[0], &view); err != nil {
		t.Fatal(err)
	}
	submit := func(reason string) slack.Answer {
		payload, err := slackclick.Submission{AppID: "A0001", TeamID: "T0001", UserID: "U0ALICE", CallbackID: view.CallbackID, PrivateMetadata: view.PrivateMetadata,
			Values: map[string]map[string]string{"reason": {"reason": reason}}}.Payload()
		if err != nil {
			t.Fatal(err)
		}
		ans, err := w.send(t, payload, secret, now)
		if err != nil {
			t.Fatal(err)
		}
		return ans
	}
	if ans := submit("  "); ans.Outcome != slack.OutcomeAsked || !strings.Contains(string(ans.Body), `"response_action":"errors"`) {
		t.Errorf("no reason: %+v %s", ans, ans.Body)
	}
	if ans := submit("the PO is missing"); ans.Outcome != slack.OutcomeRecorded || len(ans.Body) != 0 {
		t.Fatalf("with a reason: %+v %s", ans, ans.Body)
	}
	if m := w.r.last(t); !m.ReplaceOriginal || m.Text != "Rejected by alice: the PO is missing" {
		t.Errorf("the message: %+v", m)
	}
	if ans := submit("again"); ans.Outcome != slack.OutcomeRefused {
		t.Errorf("a second submission: %+v", ans)
	}
}

func buttonIDs(m slackgo.WebhookMessage) []string {
	var ids []string
	if m.Blocks == nil {
		return nil
	}
	for _, b := range m.Blocks.BlockSet {
		if a, ok := b.(*slackgo.ActionBlock); ok {
			for _, e := range a.Elements.ElementSet {
				ids = append(ids, e.(*slackgo.ButtonBlockElement).ActionID)
			}
		}
	}
	return ids
}

func mustInterrupt(t *testing.T, w *world) string {
	t.Helper()
	b, err := slack.Open(context.Background(), hosttest.Keys, w.value[slack.ActionAccept])
	if err != nil {
		t.Fatal(err)
	}
	return b.InterruptID
}

// TestASquattedPairLocksNoOneOut: evilcorp registers acme's app and workspace (their ids are
// not secret) with a secret of its own before acme does, and again after. acme's correctly
// signed clicks decide acme's interrupt all the same; evilcorp's, signed with its secret and
// naming acme's buttons, decide nothing of acme's. Before pairs were shared, the first tenant
// to register a pair owned it: acme's registration answered 409 and its clicks 401.
func TestASquattedPairLocksNoOneOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reads := &hosttest.Reading{}
	h, log := hosttest.MemHostOn(t, func(s host.Store) host.Store { reads.Store = s; return reads }, func(s *hosttest.Setup) { s.Env.Now = time.Now })
	secrets := inmem.NewSecrets()
	apps := &slack.Integrations{Store: log, Secrets: webhook.NewCache(secrets, nil)}
	evil := interrupt.Principal{Subject: "admin", Tenant: "evilcorp"}
	squat := slack.Request{AppID: "A0001", TeamID: "T0001", SigningSecret: otherSecret}
	if _, _, err := apps.Put(ctx, evil, squat); err != nil {
		t.Fatal(err)
	}
	if _, _, err := apps.Put(ctx, hosttest.Who("admin"), slack.Request{AppID: "A0001", TeamID: "T0001", SigningSecret: secret}); err != nil {
		t.Fatalf("the owner registering a pair another tenant registered first: %v", err)
	}
	if _, _, err := apps.Put(ctx, evil, squat); err != nil {
		t.Fatal(err)
	}
	dir := &contacts.Directory{Store: log}
	for _, p := range []interrupt.Principal{hosttest.Who("admin"), evil} {
		if _, _, err := dir.Put(ctx, p, contacts.KindPrincipal, "alice", contacts.Request{Slack: "U0ALICE"}); err != nil {
			t.Fatal(err)
		}
	}
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept","reject"],"approversList":["alice"]}}`
	view, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "run-1", host.Request{NodeID: "approve", Payload: json.RawMessage(payload)})
	if err != nil {
		t.Fatal(err)
	}
	buttons, err := slack.DecisionButtons(ctx, hosttest.Keys, slack.Button{Tenant: "acme", RunID: "run-1", InterruptID: view.InterruptID})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{h: h, log: log, reads: reads, r: newReceiver(t), value: map[string]string{}}
	for _, b := range buttons {
		btn := b.(*slackgo.ButtonBlockElement)
		w.value[btn.ActionID] = btn.Value
	}
	w.x = &slack.Interactions{
		Host: h, Apps: log, Secrets: webhook.NewCache(secrets, nil), Keys: hosttest.Keys, Contacts: log,
		Poster: outbound.NewHTTPClient(true), AllowPrivate: true, SlackAPI: w.r.srv.URL + "/api",
	}
	now := time.Now()
	accept := w.value[slack.ActionAccept]
	if ans, err := w.click(t, "A0001", "T0001", "U0ALICE", slack.ActionAccept, accept, otherSecret, now); err != nil || ans.Outcome != slack.OutcomeRefused {
		t.Errorf("evilcorp's click on acme's button: %+v %v", ans, err)
	}
	if n := w.commits(t); n != 1 {
		t.Fatalf("evilcorp's click wrote: %d commits", n)
	}
	if ans, err := w.click(t, "A0001", "T0001", "U0ALICE", slack.ActionAccept, accept, secret, now); err != nil || ans.Outcome != slack.OutcomeRecorded {
		t.Fatalf("acme's click: %+v %v", ans, err)
	}
	o, err := h.InterruptOutcome(ctx, hosttest.Who("engine"), "run-1", view.InterruptID)
	if err != nil || o.Status != interrupt.StatusResolved || o.ResolvedBy != "alice" {
		t.Errorf("after acme's click: %+v %v", o, err)
	}
}

// TestAClickNeverOverrides: an override principal's Slack click on a 2-of-2 approval that lets
// an override bypass the quorum is one vote, not a release: an override is a deliberate act
// (a JWT's call, a signed-in page), never a click in a chat (interrupt.Deciders.Overrides).
// Before the click's proof was judged, its principal carried no token and released it alone.
func TestAClickNeverOverrides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reads := &hosttest.Reading{}
	h, log := hosttest.MemHostOn(t, func(s host.Store) host.Store { reads.Store = s; return reads }, func(s *hosttest.Setup) { s.Env.Now = time.Now })
	secrets := inmem.NewSecrets()
	apps := &slack.Integrations{Store: log, Secrets: webhook.NewCache(secrets, nil)}
	if _, _, err := apps.Put(ctx, hosttest.Who("admin"), slack.Request{AppID: "A0001", TeamID: "T0001", SigningSecret: secret}); err != nil {
		t.Fatal(err)
	}
	dir := &contacts.Directory{Store: log}
	if _, _, err := dir.Put(ctx, hosttest.Who("admin"), contacts.KindPrincipal, "boss", contacts.Request{Slack: "U0BOSS"}); err != nil {
		t.Fatal(err)
	}
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept","reject"],"approversList":["boss","alice"],"requiredApprovals":2,"overrideBypassesQuorum":true}}`
	view, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "run-1", host.Request{NodeID: "approve", Payload: json.RawMessage(payload)})
	if err != nil {
		t.Fatal(err)
	}
	buttons, err := slack.DecisionButtons(ctx, hosttest.Keys, slack.Button{Tenant: "acme", RunID: "run-1", InterruptID: view.InterruptID})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{h: h, log: log, reads: reads, r: newReceiver(t), value: map[string]string{}}
	for _, b := range buttons {
		btn := b.(*slackgo.ButtonBlockElement)
		w.value[btn.ActionID] = btn.Value
	}
	w.x = &slack.Interactions{
		Host: h, Apps: log, Secrets: webhook.NewCache(secrets, nil), Keys: hosttest.Keys, Contacts: log,
		Poster: outbound.NewHTTPClient(true), AllowPrivate: true, SlackAPI: w.r.srv.URL + "/api",
	}
	if ans, err := w.click(t, "A0001", "T0001", "U0BOSS", slack.ActionAccept, w.value[slack.ActionAccept], secret, time.Now()); err != nil || ans.Outcome != slack.OutcomeRecorded {
		t.Fatalf("boss's click: %+v %v", ans, err)
	}
	o, err := h.InterruptOutcome(ctx, hosttest.Who("engine"), "run-1", view.InterruptID)
	if err != nil || o.Status != interrupt.StatusPending || len(o.Votes) != 1 || o.Votes[0].Override {
		t.Errorf("after boss's click: %+v %v, want one vote and the approval pending", o, err)
	}
	if m := w.r.last(t); !strings.Contains(m.Text, "1 of 2 approvals") {
		t.Errorf("the message after boss's click: %q", m.Text)
	}
}

// TestAClickReadsTheRunOnce: a click that records a vote, one refused as already voted, and one
// after the outcome each read the run's log once (host.Cast), and answer the message from that
// read: before, a click read it three times (to aim, to resolve, to update the message).
func TestAClickReadsTheRunOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	now := time.Now()
	accept := w.value[slack.ActionAccept]
	for _, c := range []struct {
		name, user string
		outcome    string
		told       string
	}{
		{"alice's vote", "U0ALICE", slack.OutcomeRecorded, "alice accepted · 1 of 2 approvals"},
		{"alice's second click", "U0ALICE", slack.OutcomeRefused, "You (alice) already voted accept"},
		{"bob's vote, the outcome", "U0BOB", slack.OutcomeRecorded, "Accepted by bob"},
		{"a click after the outcome", "U0BOB", slack.OutcomeRefused, "closed (Accepted by bob)"},
	} {
		w.reads.Logs = 0
		ans, err := w.click(t, "A0001", "T0001", c.user, slack.ActionAccept, accept, secret, now)
		if err != nil || ans.Outcome != c.outcome {
			t.Fatalf("%s: %+v %v", c.name, ans, err)
		}
		if got := w.r.last(t).Text; !strings.Contains(got, c.told) {
			t.Errorf("%s: told %q, want %q", c.name, got, c.told)
		}
		if w.reads.Logs != 1 {
			t.Errorf("%s read the run's log %d times, want once", c.name, w.reads.Logs)
		}
	}
}
