package e2e

import (
	"encoding/json"
	"mime"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
)

// TestFollowUpsThroughTheStack: an approval for alice and bob with reminders every second and
// an escalation to carol, on the stack's sweep (every second under make test): alice votes at
// once, so the reminders name bob alone and only bob is mailed them; carol is mailed the
// escalation, recorded once, and nothing else; once bob's vote closes it, no reminder follows.
func TestFollowUpsThroughTheStack(t *testing.T) {
	localaws.NeedsStack(t)
	tenant := newRun("followup")
	ops := jwt(t, devjwt.Token{Subject: "ops", Tenant: tenant, Scopes: []string{"contacts:manage", "subscriptions:manage"}})
	eng := jwt(t, devjwt.Token{Subject: "engine", Tenant: tenant, Scopes: []string{"interrupts:write", "runs:read"}})
	address := func(who string) string { return who + "@" + tenant + ".example.com" }
	for _, who := range []string{"alice", "bob", "carol"} {
		if a := do(t, "PUT", "/contacts/principal/"+who, ops, `{"email":"`+address(who)+`"}`); a.Status != 201 {
			t.Fatalf("contact %s: %d %s", who, a.Status, a.Body)
		}
	}
	if a := do(t, "POST", "/subscriptions", ops, `{"format":"email","events":["interrupt.requested","interrupt.reminded","interrupt.escalated"]}`); a.Status != 201 {
		t.Fatalf("subscription: %d %s", a.Status, a.Body)
	}
	run := newRun("nudged")
	payload := `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-9","artifactType":"invoice","title":"Pay inv-9","actions":["accept"],"approversList":["alice","bob"],"requiredApprovals":2}}`
	body := `{"nodeId":"approve","payload":` + payload + `,"reminders":{"afterMs":1000,"everyMs":1500,"count":10},"escalation":{"afterMs":1000,"to":[{"kind":"principal","ref":"carol"}]}}`
	if a := do(t, "POST", "/runs/"+run+"/interrupts", eng, body); a.Status != 201 {
		t.Fatalf("request: %d %s", a.Status, a.Body)
	}
	vote := func(who string) {
		t.Helper()
		bearer := jwt(t, devjwt.Token{Subject: who, Tenant: tenant, Scopes: []string{"approvals:respond"}})
		if a := do(t, "POST", "/runs/"+run+"/interrupts/approve", bearer, `{"resumeValue":{"action":"accept","decidedAt":"2026-12-02T09:00:00Z"}}`); a.Status != 200 && a.Status != 202 {
			t.Fatalf("%s's vote: %d %s", who, a.Status, a.Body)
		}
	}
	vote("alice")
	type event struct {
		Seq     int64
		Type    string
		Payload json.RawMessage
	}
	events := func() []event {
		t.Helper()
		var page struct{ Events []event }
		do(t, "GET", "/runs/"+run+"/events", eng, "").json(t, &page)
		return page.Events
	}
	count := func(evs []event, typ string) int {
		n := 0
		for _, e := range evs {
			if e.Type == typ {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for evs := events(); count(evs, "interrupt.reminded") < 2 || count(evs, "interrupt.escalated") < 1; evs = events() {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %+v", evs)
		}
		<-time.After(200 * time.Millisecond) // the sweep runs every second; nothing signals it
	}
	vote("bob")
	<-time.After(4 * time.Second) // two more sweeps, and the reminder period twice over: none may follow the close
	evs := events()
	var closed int64
	for _, e := range evs {
		switch e.Type {
		case "interrupt.resolved":
			closed = e.Seq
		case "interrupt.reminded":
			if !strings.Contains(string(e.Payload), `"recipients":[{"kind":"principal","ref":"bob"}]`) {
				t.Errorf("a reminder not to bob alone: %s", e.Payload)
			}
			if closed > 0 {
				t.Errorf("a reminder after the approval closed at %d: seq %d", closed, e.Seq)
			}
		}
	}
	if closed == 0 || count(evs, "interrupt.escalated") != 1 {
		t.Errorf("closed at %d, %d escalations: %+v", closed, count(evs, "interrupt.escalated"), evs)
	}
	subjects := map[string][]string{}
	deadline = time.Now().Add(20 * time.Second)
	for len(subjects[address("carol")]) == 0 || len(subjects[address("bob")]) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s, mail: %v", subjects)
		}
		<-time.After(200 * time.Millisecond) // moto signals nothing: poll what it accepted
		subjects = map[string][]string{}
		for _, s := range localaws.Sent(t) {
			msg, err := mail.ReadMessage(strings.NewReader(s.Raw))
			if err != nil || !strings.Contains(msg.Header.Get("To"), tenant) {
				continue
			}
			to, err := mail.ParseAddress(msg.Header.Get("To"))
			if err != nil {
				t.Fatal(err)
			}
			subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
			subjects[to.Address] = append(subjects[to.Address], subject)
		}
	}
	for _, s := range subjects[address("alice")] {
		if strings.HasPrefix(s, "Reminder") || strings.HasPrefix(s, "Escalated") {
			t.Errorf("alice, who voted, was mailed %q", s)
		}
	}
	// Mail goes out at least once (a send whose mark was lost is sent again), and SES's copy
	// names no event: the log holds one escalation, so carol's mail is that one message, however
	// many copies of it she was sent, and no other.
	if got := subjects[address("carol")]; len(got) == 0 || slices.ContainsFunc(got, func(s string) bool { return s != "Escalated: \u2068Pay inv-9\u2069" }) {
		t.Errorf("carol's mail: %v", got)
	}
	reminders := 0
	for _, s := range subjects[address("bob")] {
		switch s {
		case "Reminder: \u2068Pay inv-9\u2069":
			reminders++
		case "An approval for you: \u2068Pay inv-9\u2069":
		default:
			t.Errorf("bob was mailed %q", s)
		}
	}
	if reminders < 2 {
		t.Errorf("bob's reminders: %v", subjects[address("bob")])
	}
}
