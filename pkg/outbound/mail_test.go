package outbound_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/outboundtest"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// postbox keeps what the deliverer mails, failing the addresses fail names: got as a reader
// sees it, the isolates around its values (which show nothing) left out, and sent as sent.
type postbox struct {
	mu   sync.Mutex
	got  []outbound.Mail
	sent []outbound.Mail
	fail map[string]bool
}

// unmarked is s without the isolates around the values it inserts (words.Sentence.Plain).
var unmarked = strings.NewReplacer("\u2068", "", "\u2069", "").Replace

func (p *postbox) Send(_ context.Context, m outbound.Mail) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail[m.To[0]] {
		return fmt.Errorf("the mail service: %w", interrupt.ErrUnavailable)
	}
	p.sent = append(p.sent, m)
	m.Subject, m.Text, m.HTML = unmarked(m.Subject), unmarked(m.Text), unmarked(m.HTML)
	p.got = append(p.got, m)
	return nil
}

func (p *postbox) to() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, m := range p.got {
		out = append(out, m.To...)
	}
	return out
}

// mailWorld is a world whose deliverer mails through a postbox, with contacts for alice, bob and
// the finance group (whose list is alice's own address), and an email subscription.
func mailWorld(t *testing.T, links string) (*outboundtest.World, *postbox, string) {
	t.Helper()
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	box := &postbox{fail: map[string]bool{}}
	w.D.Mailer, w.Subs.Mail = box, true
	for _, c := range []contacts.Contact{
		{Kind: "principal", Ref: "alice", Email: "alice@example.com", Name: "Alice", UpdatedAt: w.Clock.Now()},
		{Kind: "principal", Ref: "bob", Email: "bob@example.com", UpdatedAt: w.Clock.Now()},
		{Kind: "group", Ref: "finance", Email: "alice@example.com", UpdatedAt: w.Clock.Now()},
		{Kind: "principal", Ref: "dave", Email: "team@example.com", UpdatedAt: w.Clock.Now()},
		{Kind: "principal", Ref: "erin", Email: "Team@Example.com", UpdatedAt: w.Clock.Now()}, // the same mailbox, spelled otherwise
	} {
		if _, err := w.Log.PutContact(context.Background(), "acme", c); err != nil {
			t.Fatal(err)
		}
	}
	created, err := w.Subs.Create(context.Background(), interrupt.Principal{Tenant: "acme", Scopes: []string{interrupt.ScopeTokensDelegate}},
		outbound.Request{Events: []string{"*"}, Format: outbound.FormatEmail, ApprovalLinks: links})
	if err != nil {
		t.Fatal(err)
	}
	if created.Secret != "" {
		t.Errorf("an email subscription was given a signing secret, which nothing uses")
	}
	return w, box, created.ID
}

// TestMailReachesEachPersonOnce: an approval to alice, bob, carol (no contact) and the finance
// group (whose list is alice's address) mails alice and bob once each, each with their own
// signed link; its attempt names carol as unreached; the same event delivered again mails no one
// again.
func TestMailReachesEachPersonOnce(t *testing.T) {
	w, box, sub := mailWorld(t, outbound.LinksSigned)
	payload := `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay <b>inv-1</b>","description":"Net 30.","actions":["accept","reject"],"approversList":["alice","bob","carol"],"requiredApprovals":2}}`
	c := w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", payload))
	w.Deliver(c)
	if got := strings.Join(box.to(), " "); got != "alice@example.com bob@example.com" {
		t.Fatalf("mailed %q", got)
	}
	for _, m := range box.got {
		who := strings.TrimSuffix(m.To[0], "@example.com")
		if !strings.Contains(m.Subject, "Pay <b>inv-1</b>") || !strings.Contains(m.Text, "https://host.example/approve/ow2.") || !strings.Contains(m.Text, "This link is yours") {
			t.Errorf("%s's mail: %q\n%s", who, m.Subject, m.Text)
		}
		if strings.Contains(m.HTML, "<b>inv-1</b>") || !strings.Contains(m.HTML, "&lt;b&gt;inv-1&lt;/b&gt;") {
			t.Errorf("%s's HTML does not escape the title: %s", who, m.HTML)
		}
	}
	if !strings.Contains(box.got[0].Text, "Hello Alice,") || !strings.Contains(box.got[0].Text, "Please decide by ") {
		t.Errorf("alice's text:\n%s", box.got[0].Text)
	}
	attempts, err := w.Store.Attempts(context.Background(), "acme", sub, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range attempts { // the request, and its approval.requested alias, which mails nothing
		if want := map[string]int{"interrupt.requested": 202, "approval.requested": 204}[a.EventType]; a.StatusCode != want ||
			(a.EventType == "interrupt.requested") != (strings.Join(a.Unreached, ",") == "principal carol") {
			t.Errorf("the attempt %+v, want %d, and carol unreached by the request", a, want)
		}
	}
	w.Deliver(c) // the stream delivers a batch again
	if n := len(box.to()); n != 2 {
		t.Errorf("%d mails after the event again, want 2", n)
	}
}

// TestMailTellsTheOutcome: once an approval is decided, those it asked are told what became of
// it (not the one who decided it), with the decider's comment, once. Who decided is the host's
// record (the commit's author, bob), not the decidedBy the decider sent (alice): so alice is told.
func TestMailTellsTheOutcome(t *testing.T) {
	w, box, _ := mailWorld(t, outbound.LinksPlain)
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval)))
	resolved := outboundtest.Resolved("approve", "i1")
	resolved.Payload = []byte(`{"nodeId":"approve","interruptId":"i1","kind":"approval","resumeValue":{"action":"reject","decidedBy":"alice","feedback":"Wrong <b>amount</b>."}}`)
	c := w.CommitAs("bob", "acme", "run-1", resolved)
	w.Deliver(c)
	w.Deliver(c)
	if got := strings.Join(box.to(), " "); got != "alice@example.com bob@example.com alice@example.com" {
		t.Fatalf("mailed %q", got)
	}
	told := box.got[2]
	if told.Subject != "Rejected: Pay <inv-1> & more" || !strings.Contains(told.Text, "It was rejected by bob") || !strings.Contains(told.Text, "Their comment: Wrong <b>amount</b>.") {
		t.Errorf("alice is told %q:\n%s", told.Subject, told.Text)
	}
	if strings.Contains(told.HTML, "<b>amount</b>") || strings.Contains(told.Text, "/approve/") {
		t.Errorf("the outcome's HTML escapes the comment and holds no link: %s", told.HTML)
	}
}

// TestMailReachesAnOpenApprovalsAudience: an approval with no eligibility field, whose audience
// names alice and bob, mails both: an audience ref is looked up as a principal (it was a "ref"
// no contact matched, and nothing was sent).
func TestMailReachesAnOpenApprovalsAudience(t *testing.T) {
	w, box, sub := mailWorld(t, outbound.LinksPlain)
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept"],"audience":["alice","bob"]}}`
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", payload)))
	if got := strings.Join(box.to(), " "); got != "alice@example.com bob@example.com" {
		t.Fatalf("mailed %q", got)
	}
	attempts, err := w.Store.Attempts(context.Background(), "acme", sub, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range attempts {
		if len(a.Unreached) > 0 {
			t.Errorf("the attempt %+v names someone unreached", a)
		}
	}
}

// TestMailRetriesOnlyWhomItMissed: a mail the service could not take is sent again by the
// retrier, to that address only; the delivery's attempt says what failed. The finance group's
// list is alice's address: she is mailed once.
func TestMailRetriesOnlyWhomItMissed(t *testing.T) {
	w, box, sub := mailWorld(t, outbound.LinksPlain)
	box.fail["bob@example.com"] = true
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept"],"approversList":["alice","bob"],"approverGroupRefs":["finance"]}}`
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", payload)))
	if got := strings.Join(box.to(), " "); got != "alice@example.com" {
		t.Fatalf("mailed %q", got)
	}
	attempts, err := w.Store.Attempts(context.Background(), "acme", sub, 10)
	if err != nil || len(attempts) != 1 || attempts[0].Status != outbound.StatusRetrying || !strings.Contains(attempts[0].LastError, "the mail service") {
		t.Fatalf("attempts %+v %v", attempts, err)
	}
	box.fail["bob@example.com"] = false
	w.Clock.Advance(outbound.Backoff[0])
	w.Retries()
	if got := strings.Join(box.to(), " "); got != "alice@example.com bob@example.com" {
		t.Errorf("mailed %q after the retry", got)
	}
	if !strings.Contains(box.got[1].Text, "You will be asked to sign in.") || !strings.Contains(box.got[1].Text, "https://host.example/approve/run-1/i1") {
		t.Errorf("bob's plain link:\n%s", box.got[1].Text)
	}
}

// TestEmailSubscriptionsRefused: an email subscription takes no URL, and a deployment that names
// no sender takes none.
func TestEmailSubscriptionsRefused(t *testing.T) {
	w := outboundtest.NewWorld(t, inmem.NewOutbound())
	p := interrupt.Principal{Tenant: "acme"}
	_, err := w.Subs.Create(context.Background(), p, outbound.Request{Events: []string{"*"}, Format: outbound.FormatEmail})
	var e *interrupt.Error
	if !errors.As(err, &e) || e.Code != interrupt.CodeValidation || e.Fields[0].Path != "/format" {
		t.Errorf("no sender: %v", err)
	}
	w.Subs.Mail = true
	_, err = w.Subs.Create(context.Background(), p, outbound.Request{URL: "https://hooks.example.com/in", Events: []string{"*"}, Format: outbound.FormatEmail})
	if !errors.As(err, &e) || e.Code != interrupt.CodeValidation || e.Fields[0].Path != "/url" {
		t.Errorf("a URL: %v", err)
	}
}

// TestASharedAddressGetsNoToken: two people whose contacts name one address (a team's box, its
// letters in another case in one of them) get one message there, holding the page's plain link,
// not either one's token: one reader could otherwise cast both votes of a 2-of-2.
func TestASharedAddressGetsNoToken(t *testing.T) {
	w, box, _ := mailWorld(t, outbound.LinksSigned)
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept"],"approversList":["dave","erin","bob"],"requiredApprovals":2}}`
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", payload)))
	if got := strings.Join(box.to(), " "); got != "team@example.com bob@example.com" {
		t.Fatalf("mailed %q", got)
	}
	if team := box.got[0].Text; strings.Contains(team, "ow2.") || !strings.Contains(team, "https://host.example/approve/run-1/i1") {
		t.Errorf("the team's mail:\n%s", team)
	}
	if bob := box.got[1].Text; !strings.Contains(bob, "https://host.example/approve/ow2.") {
		t.Errorf("bob's mail:\n%s", bob)
	}
}

// TestMailAsksTheClarificationsAudience: a clarification mails each principal its request's
// audience names (display.audience: its payload has none), with their own link, its questions
// and "answer"; a ref without a contact is unreached.
func TestMailAsksTheClarificationsAudience(t *testing.T) {
	w, box, _ := mailWorld(t, outbound.LinksSigned)
	payload := `{"kind":"clarification","key":"c","timeoutMs":3600000,"data":{"questions":[{"id":"address","question":"Which <address>?","schema":{"type":"string"}}]}}`
	requested := outboundtest.Requested("ask", "i1", payload)
	requested.Display = &interrupt.Display{RequesterName: "Shipping", Audience: []string{"alice", "bob", "carol"}}
	w.Deliver(w.Commit("acme", "run-1", requested))
	if got := strings.Join(box.to(), " "); got != "alice@example.com bob@example.com" {
		t.Fatalf("mailed %q", got)
	}
	m := box.got[0]
	for _, want := range []string{"Hello Alice,", "asks you to answer.", "- Which <address>?", "Please answer by ", "https://host.example/approve/ow2.", "This link is yours"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("alice's mail lacks %q:\n%s", want, m.Text)
		}
	}
	if m.Subject != "A question for you" {
		t.Errorf("subject %q", m.Subject)
	}
	if strings.Contains(m.HTML, "<address>") {
		t.Errorf("the HTML does not escape the question: %s", m.HTML)
	}
}

// TestMailTellsTheEndOfARun: a run cancelled with two requests outstanding and one decided
// tells each person once, naming the outstanding ones only (the decided one's outcome was
// told); its delivery again tells no one again.
func TestMailTellsTheEndOfARun(t *testing.T) {
	w, box, _ := mailWorld(t, outbound.LinksPlain)
	second := strings.Replace(strings.Replace(outboundtest.Approval, `"key":"k"`, `"key":"k2"`, 1), "Pay <inv-1> & more", "Ship <inv-2>", 1)
	third := strings.Replace(strings.Replace(outboundtest.Approval, `"key":"k"`, `"key":"k3"`, 1), "Pay <inv-1> & more", "Refund inv-3", 1)
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval)))
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("ship", "i2", second)))
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("refund", "i3", third)))
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Resolved("refund", "i3")))
	before := len(box.to())
	ended := w.Commit("acme", "run-1", runlog.Event{Type: interrupt.EventRunCancelled, Payload: json.RawMessage(`{"by":"ops","reason":"The order was <withdrawn>."}`)})
	w.Deliver(ended)
	w.Deliver(ended)
	told := box.got[before:]
	if len(told) != 2 || told[0].To[0] != "alice@example.com" || told[1].To[0] != "bob@example.com" {
		t.Fatalf("told %d messages after the cancel: %+v", len(told), told)
	}
	m := told[0]
	for _, want := range []string{"Hello Alice,", "- Pay <inv-1> & more", "- Ship <inv-2>", "Its run was cancelled by ops before a decision", "The reason given: The order was <withdrawn>.", "Nothing more is needed from you."} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("alice's message lacks %q:\n%s", want, m.Text)
		}
	}
	if strings.Contains(m.Text, "Refund inv-3") || m.Subject != "Cancelled: 2 requests you were asked about" || strings.Contains(m.HTML, "<withdrawn>") {
		t.Errorf("alice is told %q:\n%s\n%s", m.Subject, m.Text, m.HTML)
	}
}

// TestMailFollowsUp: a reminder mails its recipients, an escalation the refs it names, each
// address once, with the request's title as the subscription asked it and the page's link; an
// escalation says whom the request still waits on and that its reader may not decide it
// unless named; the same event again mails no one again.
func TestMailFollowsUp(t *testing.T) {
	w, box, _ := mailWorld(t, outbound.LinksSigned)
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval)))
	asked := len(box.to())
	reminded := runlog.Event{Type: interrupt.EventReminded, NodeID: "approve", InterruptID: "i1",
		Payload: json.RawMessage(`{"nodeId":"approve","interruptId":"i1","reminder":1,"recipients":[{"kind":"principal","ref":"bob"},{"kind":"principal","ref":"carol"}]}`)}
	escalated := runlog.Event{Type: interrupt.EventEscalated, NodeID: "approve", InterruptID: "i1",
		Payload: json.RawMessage(`{"nodeId":"approve","interruptId":"i1","to":[{"kind":"group","ref":"finance"}]}`)}
	for _, ev := range []runlog.Event{reminded, escalated} {
		c := w.Commit("acme", "run-1", ev)
		w.Deliver(c)
		w.Deliver(c)
	}
	got := box.got[asked:]
	if len(got) != 2 || got[0].To[0] != "bob@example.com" || got[1].To[0] != "alice@example.com" {
		t.Fatalf("follow-ups mailed: %+v", got)
	}
	if got[0].Subject != "Reminder: Pay <inv-1> & more" || !strings.Contains(got[0].Text, "It still waits for your decision.") || !strings.Contains(got[0].Text, "https://host.example/approve/run-1/i1") {
		t.Errorf("bob's reminder %q:\n%s", got[0].Subject, got[0].Text)
	}
	esc := unmarked(got[1].Text)
	if got[1].Subject != "Escalated: Pay <inv-1> & more" || !strings.Contains(esc, "It has waited without a decision from alice and bob.") ||
		!strings.Contains(esc, "Its escalation names you to see that it is decided") || !strings.Contains(esc, "you cannot decide it yourself") || strings.Contains(got[1].HTML, "<inv-1>") {
		t.Errorf("finance's escalation %q:\n%s\n%s", got[1].Subject, got[1].Text, got[1].HTML)
	}
}

// TestAResendMailsAgain: an operator's resend of an email subscription's request mails every
// address again (the marks keep the deliverer's own retries from doing so, not an operator);
// resent once the request was decided, it records no one as asked again, so the run's end tells
// no one that it ended before a decision.
func TestAResendMailsAgain(t *testing.T) {
	ctx := context.Background()
	w, box, id := mailWorld(t, outbound.LinksPlain)
	sub, err := w.Store.Subscription(ctx, "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval)))
	w.Clock.Advance(time.Second)
	if a, err := w.D.Resend(ctx, sub, "run-1:1:0", w.D.Links.BaseURL); err != nil || a.StatusCode != 202 {
		t.Fatalf("resend: %+v %v", a, err)
	}
	if got := strings.Join(box.to(), " "); got != "alice@example.com bob@example.com alice@example.com bob@example.com" {
		t.Fatalf("mailed %q, want each twice", got)
	}
	w.Deliver(w.CommitAs("bob", "acme", "run-1", outboundtest.Resolved("approve", "i1")))
	w.Clock.Advance(time.Second)
	if _, err := w.D.Resend(ctx, sub, "run-1:1:0", w.D.Links.BaseURL); err != nil {
		t.Fatal(err)
	}
	before := len(box.to())
	w.Deliver(w.Commit("acme", "run-1", runlog.Event{Type: interrupt.EventRunCancelled, Payload: json.RawMessage(`{"by":"ops"}`)}))
	if told := box.to()[before:]; len(told) != 0 {
		t.Errorf("the run's end told %v, who were told the outcome", told)
	}
}

// TestNoOneIsAskedToDecideWhatIsClosed: a request mail asks people to decide only while the
// run's state, read when it is sent, holds the interrupt pending: an operator's resend of the
// request once it was decided, expired or its run cancelled mails no one (the attempt answers
// 204), and so does a delivery of the request that comes after its close; one still pending is
// mailed again.
func TestNoOneIsAskedToDecideWhatIsClosed(t *testing.T) {
	t.Parallel()
	expired := runlog.Event{Type: interrupt.EventExpired, NodeID: "approve", InterruptID: "i1", Payload: json.RawMessage(`{"nodeId":"approve","interruptId":"i1"}`)}
	cancelled := runlog.Event{Type: interrupt.EventRunCancelled, Payload: json.RawMessage(`{"by":"ops"}`)}
	for _, tt := range []struct {
		name   string
		closed *runlog.Event
		late   bool // the request first delivered after its close
		mailed int
	}{
		{"still pending", nil, false, 2},
		{"decided", new(outboundtest.Resolved("approve", "i1")), false, 0},
		{"expired", &expired, false, 0},
		{"its run cancelled", &cancelled, false, 0},
		{"decided before the request's first delivery", new(outboundtest.Resolved("approve", "i1")), true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w, box, id := mailWorld(t, outbound.LinksPlain)
			sub, err := w.Store.Subscription(ctx, "acme", id)
			if err != nil {
				t.Fatal(err)
			}
			request := w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", outboundtest.Approval))
			if !tt.late {
				w.Deliver(request)
			}
			if tt.closed != nil {
				closing := w.CommitAs("bob", "acme", "run-1", *tt.closed)
				if !tt.late {
					w.Deliver(closing)
				}
			}
			asked := func() int {
				n := 0
				for _, m := range box.got {
					if strings.Contains(m.Text, "asks you to decide") {
						n++
					}
				}
				return n
			}
			before := asked()
			if tt.late {
				w.Deliver(request)
			} else {
				w.Clock.Advance(time.Second)
				a, err := w.D.Resend(ctx, sub, "run-1:1:0", w.D.Links.BaseURL)
				if want := map[bool]int{true: 202, false: 204}[tt.mailed > 0]; err != nil || a.StatusCode != want {
					t.Fatalf("resend: %+v %v, want %d", a, err, want)
				}
			}
			if got := asked() - before; got != tt.mailed {
				t.Errorf("%d more mails ask to decide, want %d", got, tt.mailed)
			}
		})
	}
}

// TestMailSaysEnough: the request mail names who asks as people know them, the artifact's top
// fields as a person reads them (numbers grouped) and the deadline in words; a reminder greets
// its reader by name, with the title and the deadline; the expiry mail gives the deadline that
// passed, in words, not when the sweep recorded it.
func TestMailSaysEnough(t *testing.T) {
	w, box, _ := mailWorld(t, outbound.LinksPlain)
	payload := `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay invoice 4471","actions":["accept"],"approversList":["alice","bob"],
		"artifactData":{"vendor":"Acme GmbH","invoiceTotal":12400,"paidLate":false,"lines":[{"sku":"a"}]}}}`
	requested := outboundtest.Requested("approve", "i1", payload)
	requested.Display = &interrupt.Display{RequesterName: "Accounts payable"}
	c := w.CommitAs("engine", "acme", "run-1", requested)
	w.Deliver(c)
	deadline := c.Commit.At.Add(time.Hour)
	in := func(t0 time.Time) string { return t0.UTC().Format("Monday 2 January 2006, 15:04 UTC") }
	first := box.got[0].Text
	for _, want := range []string{"Accounts payable (engine) asks you to decide.", "Vendor: Acme GmbH", "Invoice total: 12,400", "Paid late: no", "Please decide by " + in(deadline) + "."} {
		if !strings.Contains(first, want) {
			t.Errorf("the request mail lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "Lines") {
		t.Errorf("the request mail lists a nested member:\n%s", first)
	}
	w.Deliver(w.Commit("acme", "run-1", runlog.Event{Type: interrupt.EventReminded, NodeID: "approve", InterruptID: "i1",
		Payload: json.RawMessage(`{"nodeId":"approve","interruptId":"i1","reminder":1,"recipients":[{"kind":"principal","ref":"alice"}]}`)}))
	reminder := box.got[len(box.got)-1].Text
	for _, want := range []string{"Hello Alice,", "Pay invoice 4471:", "It must be decided by " + in(deadline) + "."} {
		if !strings.Contains(reminder, want) {
			t.Errorf("the reminder lacks %q:\n%s", want, reminder)
		}
	}
	w.Clock.Advance(time.Hour + 2*time.Minute) // the sweep records the expiry after the deadline
	w.Deliver(w.Commit("acme", "run-1", runlog.Event{Type: interrupt.EventExpired, NodeID: "approve", InterruptID: "i1",
		Payload: json.RawMessage(`{"nodeId":"approve","interruptId":"i1","kind":"approval","deadline":"` + deadline.UTC().Format(runlog.TimeFormat) + `"}`)}))
	expired := box.got[len(box.got)-1].Text
	if want := "Its deadline passed without a decision, " + in(deadline) + "."; !strings.Contains(expired, want) {
		t.Errorf("the expiry mail lacks %q:\n%s", want, expired)
	}
}

// TestMailIsBounded: one event mails at most MaxMailsPerEvent addresses, and a tenant at most
// MaxMailsPerTenantHour messages an hour (every tenant sends from the deployment's one SES
// identity); what a bound refuses is not sent, and the attempt names it.
func TestMailIsBounded(t *testing.T) {
	ctx := context.Background()
	w, box, sub := mailWorld(t, outbound.LinksPlain)
	var refs []string
	for i := range outbound.MaxMailsPerEvent + 10 {
		ref := fmt.Sprintf("p%02d", i)
		refs = append(refs, `"`+ref+`"`)
		if _, err := w.Log.PutContact(ctx, "acme", contacts.Contact{Kind: "principal", Ref: ref, Email: ref + "@example.com", UpdatedAt: w.Clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"doc","title":"Pay","actions":["accept"],"approversList":[` + strings.Join(refs, ",") + `]}}`
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", payload)))
	if n := len(box.to()); n != outbound.MaxMailsPerEvent {
		t.Fatalf("one event mailed %d addresses, want %d", n, outbound.MaxMailsPerEvent)
	}
	attempts, err := w.Store.Attempts(ctx, "acme", sub, 10)
	if err != nil || len(attempts) == 0 {
		t.Fatal(attempts, err)
	}
	var requested outbound.Attempt
	for _, a := range attempts {
		if a.EventType == interrupt.EventRequested {
			requested = a
		}
	}
	if len(requested.Refused) != 10 || !strings.Contains(requested.Refused[0], "addresses one event mails") {
		t.Errorf("the attempt refused %v, want the 10 past the bound", requested.Refused)
	}
	for range outbound.MaxMailsPerTenantHour - outbound.MaxMailsPerEvent {
		if _, err := w.Store.TakeMail(ctx, "acme", w.Clock.Now(), outbound.MaxMailsPerTenantHour); err != nil {
			t.Fatal(err)
		}
	}
	before := len(box.to())
	w.Deliver(w.Commit("acme", "run-2", outboundtest.Requested("approve", "i2", outboundtest.Approval)))
	if n := len(box.to()) - before; n != 0 {
		t.Errorf("past the tenant's hourly bound, %d mailed", n)
	}
	w.Clock.Advance(time.Hour)
	w.Deliver(w.Commit("acme", "run-3", outboundtest.Requested("approve", "i3", outboundtest.Approval)))
	if n := len(box.to()) - before; n != 2 {
		t.Errorf("the next hour, %d mailed, want alice and bob", n)
	}
}

// TestMailOffersTheChoice: an approval's mail carries Approve and Reject where it offers them,
// each the recipient's own link (or the page's, who signs in) with the choice to confirm there;
// a question's mail, and a choice the approval does not offer, carry none.
func TestMailOffersTheChoice(t *testing.T) {
	for _, tc := range []struct {
		name, links, data string
		want              []string
	}{
		{"own links", outbound.LinksSigned, `"actions":["accept","reject"],"approversList":["alice"]`, []string{"Approve", "Reject"}},
		{"sign in", outbound.LinksPlain, `"actions":["accept","reject","refine"],"approversList":["alice"]`, []string{"Approve", "Reject"}},
		{"accept alone", outbound.LinksSigned, `"actions":["accept","refine"],"approversList":["alice"]`, []string{"Approve"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, box, _ := mailWorld(t, tc.links)
			payload := `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay",` + tc.data + `}}`
			w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", payload)))
			if len(box.got) != 1 {
				t.Fatalf("%d mails", len(box.got))
			}
			m := box.got[0]
			i := strings.Index(m.Text, "Open it: ")
			if i < 0 {
				t.Fatalf("no link:\n%s", m.Text)
			}
			link := strings.Fields(m.Text[i+len("Open it: "):])[0]
			if want := "https://host.example/approve/ow2."; tc.links == outbound.LinksSigned && !strings.HasPrefix(link, want) {
				t.Errorf("alice's link %s, want her own", link)
			}
			for _, label := range []string{"Approve", "Reject"} {
				action := map[string]string{"Approve": "accept", "Reject": "reject"}[label]
				line := label + ": " + link + "?choice=" + action
				if slices.Contains(tc.want, label) != strings.Contains(m.Text, line) {
					t.Errorf("%s offered %v, want %v:\n%s", label, strings.Contains(m.Text, line), slices.Contains(tc.want, label), m.Text)
				}
				if slices.Contains(tc.want, label) && !strings.Contains(m.HTML, `href="`+html.EscapeString(link+"?choice="+action)+`"`) {
					t.Errorf("the HTML has no %s button:\n%s", label, m.HTML)
				}
			}
		})
	}
	w, box, _ := mailWorld(t, outbound.LinksSigned)
	q := `{"kind":"clarification","key":"q","timeoutMs":3600000,"data":{"questions":[{"id":"q1","question":"Which PO?","schema":{"type":"string"}}]}}`
	asked := outboundtest.Requested("ask", "i2", q)
	asked.Display = &interrupt.Display{Audience: []string{"alice"}}
	w.Deliver(w.Commit("acme", "run-1", asked))
	if len(box.got) != 1 {
		t.Fatalf("%d mails of the question", len(box.got))
	}
	for _, m := range box.got {
		if strings.Contains(m.Text, "?choice=") {
			t.Errorf("a question's mail offers a choice:\n%s", m.Text)
		}
	}
}

// TestTheCallIsToldInWords: an approval that allows a call says it, in words, in its mail (its
// Slack message: package slack's test of that name).
func TestTheCallIsToldInWords(t *testing.T) {
	const want = "Refunds desk will call issue_refund with order 4471, amount 1,240.00 EUR"
	requested := func(args string) runlog.Event {
		e := outboundtest.Requested("approve", "i1", outboundtest.Approval)
		e.Display = &interrupt.Display{RequesterName: "Refunds desk"}
		e.ToolCall = &interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(args)}
		return e
	}
	t.Run("mail", func(t *testing.T) {
		w, box, _ := mailWorld(t, outbound.LinksPlain)
		w.Deliver(w.CommitAs("engine", "acme", "run-1", requested(`{"order":"4471","amountCents":124000,"currency":"EUR"}`)))
		if len(box.got) == 0 || !strings.Contains(box.got[0].Text, want+".") {
			t.Errorf("the request mail does not say the call: %+v", box.got)
		}
	})
}

// TestTheValuesAreIsolated: a right-to-left override in a call's argument, the requester's name
// or the title cannot reorder the sentence a mail puts it in (a Slack message: package
// slack's test of that name): each value
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
	t.Run("mail", func(t *testing.T) {
		w, box, _ := mailWorld(t, outbound.LinksPlain)
		w.Deliver(w.CommitAs("engine", "acme", "run-1", requested()))
		if len(box.sent) == 0 {
			t.Fatal("no mail")
		}
		m := box.sent[0]
		for _, want := range []string{"\u2068Refunds\ufffd desk\u2069 (\u2068engine\u2069) asks you to decide.", call + ".", "Hello \u2068Alice\u2069,"} {
			if !strings.Contains(m.Text, want) {
				t.Errorf("the mail lacks %q:\n%q", want, m.Text)
			}
		}
		if want := "An approval for you: \u2068Pay \ufffdevil\u2069"; m.Subject != want {
			t.Errorf("subject %q, want %q", m.Subject, want)
		}
	})
}

// TestMailSaysWhoAsksAndHowMuch: the request mail says who asks as the page does (a name, beside
// a principal that reads as a person's; an app client's id as "an automated caller") and an
// amount in minor units beside its currency as money.
func TestMailSaysWhoAsksAndHowMuch(t *testing.T) {
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay invoice 4471","actions":["accept"],"approversList":["alice"],
		"artifactData":{"totalCents":1240000,"currency":"EUR","feeCents":5}}}`
	for _, tt := range []struct{ by, name, want string }{
		{"interrupt-host-local-engine", "", "An automated caller asks you to decide."},
		{"4f1c2b7e9a0d3c5e6f7a8b9c0d", "Accounts payable", "Accounts payable asks you to decide."},
		{"carol@example.com", "Accounts payable", "Accounts payable (carol@example.com) asks you to decide."},
		{"carol", "", "carol asks you to decide."},
	} {
		w, box, _ := mailWorld(t, outbound.LinksPlain)
		requested := outboundtest.Requested("approve", "i1", payload)
		if tt.name != "" {
			requested.Display = &interrupt.Display{RequesterName: tt.name}
		}
		w.Deliver(w.CommitAs(tt.by, "acme", "run-1", requested))
		if len(box.got) == 0 {
			t.Fatalf("%s: no mail", tt.by)
		}
		text := strings.ReplaceAll(strings.ReplaceAll(box.got[0].Text, "\u2068", ""), "\u2069", "")
		for _, want := range []string{tt.want, "Total: 12,400.00 EUR", "Fee: 0.05 EUR", "Currency: EUR"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s, %q: the mail lacks %q:\n%s", tt.by, tt.name, want, text)
			}
		}
		if strings.Contains(text, "interrupt-host-local-engine") || strings.Contains(text, "cents") {
			t.Errorf("%s: the mail shows a client id or raw cents:\n%s", tt.by, text)
		}
	}
}

// TestMailSaysThePolicy: an approval asked under a tenant's tool policy says so with its call
// (Notice.Call, which every channel shows): whom it asks was the tenant's rule, not the
// caller's choice.
func TestMailSaysThePolicy(t *testing.T) {
	w, box, _ := mailWorld(t, outbound.LinksPlain)
	requested := outboundtest.Requested("approve", "i1", `{"kind":"approval","key":"k","data":{"artifactId":"o-1","artifactType":"action","title":"Refund order 4471","actions":["accept","reject"],"approversList":["alice"]}}`)
	requested.ToolCall = &interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{"order":"4471"}`), Policy: &interrupt.PolicyRef{Tool: "issue_refund", Version: 3}}
	w.Deliver(w.CommitAs("agent-7", "acme", "run-1", requested))
	if len(box.got) == 0 {
		t.Fatal("no mail")
	}
	text := strings.ReplaceAll(strings.ReplaceAll(box.got[0].Text, "\u2068", ""), "\u2069", "")
	if want := "The agent will call issue_refund with order 4471, asked under Policy issue_refund v3."; !strings.Contains(text, want) {
		t.Errorf("the mail lacks %q:\n%s", want, text)
	}
}

// TestMailSaysAQuestionsTitle: a question asked with a display title and description is mailed
// under that title, with that description.
func TestMailSaysAQuestionsTitle(t *testing.T) {
	w, box, _ := mailWorld(t, outbound.LinksPlain)
	requested := outboundtest.Requested("ask", "i1", `{"kind":"clarification","key":"k","data":{"questions":[{"id":"po","question":"Which purchase order?"}]}}`)
	requested.Display = &interrupt.Display{Audience: []string{"alice"}, Title: "Purchase order for invoice 4471", Description: "Finance needs the one to pay against."}
	w.Deliver(w.CommitAs("agent-7", "acme", "run-1", requested))
	if len(box.got) == 0 {
		t.Fatal("no mail")
	}
	m := box.got[0]
	text := strings.ReplaceAll(strings.ReplaceAll(m.Subject+"\n"+m.Text, "\u2068", ""), "\u2069", "")
	for _, want := range []string{"A question for you: Purchase order for invoice 4471", "Finance needs the one to pay against.", "- Which purchase order?"} {
		if !strings.Contains(text, want) {
			t.Errorf("the mail lacks %q:\n%s", want, text)
		}
	}
}

// TestMailReachesADelegate: alice is away, bob her delegate: a request to alice and carol mails
// bob too, saying in whose place he decides and until when; bob's own request is not mailed to
// him for alice; the outcome tells alice what bob decided in her place.
func TestMailReachesADelegate(t *testing.T) {
	w, box, _ := mailWorld(t, outbound.LinksPlain)
	w.D.Delegations = w.Log
	ctx := context.Background()
	until := w.Clock.Now().Add(72 * time.Hour)
	if err := w.Log.PutDelegation(ctx, delegation.Delegation{Tenant: "acme", Principal: "alice", Delegate: "bob", From: w.Clock.Now(), Until: until, Version: 1}, delegation.Delegation{}); err != nil {
		t.Fatal(err)
	}
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay inv-1","actions":["accept","reject"],"approversList":["alice","carol"],"requiredApprovals":2}}`
	w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", payload)))
	if got := strings.Join(box.to(), " "); got != "alice@example.com bob@example.com" {
		t.Fatalf("mailed %q, want alice and bob", got)
	}
	if want := "asks alice to decide: you decide in their place while they are away (until " + until.UTC().Format("2 January") + ")"; !strings.Contains(box.got[1].Text, want) {
		t.Errorf("bob's mail does not say %q:\n%s", want, box.got[1].Text)
	}
	if strings.Contains(box.got[0].Text, "in their place") {
		t.Errorf("alice's own mail speaks of a delegate:\n%s", box.got[0].Text)
	}
	voted, err := runlog.NewEvent(interrupt.EventVoted, "approve", "i1", interrupt.Vote{NodeID: "approve", InterruptID: "i1", Principal: "bob", OnBehalfOf: "alice",
		Action: interrupt.ActionAccept, Tally: interrupt.Tally{Approvals: 1, Required: 2}})
	if err != nil {
		t.Fatal(err)
	}
	w.Deliver(w.CommitAs("bob", "acme", "run-1", voted))
	resolved := outboundtest.Resolved("approve", "i1")
	resolved.Payload = []byte(`{"nodeId":"approve","interruptId":"i1","kind":"approval","resumeValue":{"action":"accept","decidedBy":"carol"}}`)
	w.Deliver(w.CommitAs("carol", "acme", "run-1", resolved))
	var told *outbound.Mail
	for i, m := range box.got[2:] {
		if m.To[0] == "alice@example.com" {
			told = &box.got[2+i]
		}
	}
	if told == nil || !strings.Contains(told.Text, "bob voted accept in your place, as your delegate.") {
		t.Errorf("alice is told: %+v", told)
	}

	// alice's own request: bob is not asked in her place, which decides nothing.
	n0 := len(box.got)
	w.Deliver(w.CommitAs("alice", "acme", "run-3", outboundtest.Requested("approve", "i3", strings.Replace(payload, `"requiredApprovals":2`, `"requiredApprovals":1`, 1))))
	for _, m := range box.got[n0:] {
		if m.To[0] == "bob@example.com" {
			t.Errorf("bob was mailed alice's own request in her place:\n%s", m.Text)
		}
	}

	// bob's own request: he is not mailed for alice.
	n := len(box.got)
	w.Deliver(w.CommitAs("bob", "acme", "run-2", outboundtest.Requested("approve", "i2", payload)))
	for _, m := range box.got[n:] {
		if m.To[0] == "bob@example.com" {
			t.Errorf("bob was mailed his own request for alice:\n%s", m.Text)
		}
	}
}

// TestASignedLinkForADelegate: where the subscription sends each approver a link of their own,
// alice's delegate gets one too, deciding as bob (the host judges his place when it is used),
// lasting as long as hers; without signed links bob's mail has the page's plain link.
func TestASignedLinkForADelegate(t *testing.T) {
	for _, links := range []string{outbound.LinksSigned, outbound.LinksPlain} {
		w, box, _ := mailWorld(t, links)
		w.D.Delegations = w.Log
		ctx := context.Background()
		if err := w.Log.PutDelegation(ctx, delegation.Delegation{Tenant: "acme", Principal: "alice", Delegate: "bob", From: w.Clock.Now(), Until: w.Clock.Now().Add(time.Hour), Version: 1}, delegation.Delegation{}); err != nil {
			t.Fatal(err)
		}
		payload := `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay inv-1","actions":["accept","reject"],"approversList":["alice","carol"]}}`
		w.Deliver(w.Commit("acme", "run-1", outboundtest.Requested("approve", "i1", payload)))
		if len(box.got) != 2 || box.got[1].To[0] != "bob@example.com" {
			t.Fatalf("%s: mailed %v", links, box.to())
		}
		bob := box.got[1].Text
		signed := strings.Contains(bob, "https://host.example/approve/ow2.") && strings.Contains(bob, "This link is yours")
		plain := strings.Contains(bob, "https://host.example/approve/run-1/") && strings.Contains(bob, "You will be asked to sign in.")
		if (links == outbound.LinksSigned && !signed) || (links == outbound.LinksPlain && !plain) {
			t.Errorf("%s: bob's mail:\n%s", links, bob)
		}
		if links == outbound.LinksSigned {
			tok := bob[strings.Index(bob, "/approve/ow2.")+len("/approve/"):]
			tok = tok[:strings.IndexAny(tok, " \n?")]
			claims, err := token.Verify(ctx, w.Keys, tok)
			if err != nil || claims.Sub != "bob" || claims.InterruptID != "i1" {
				t.Errorf("bob's link: %+v %v", claims, err)
			}
		}
	}
}
