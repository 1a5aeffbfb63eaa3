package e2e

import (
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
)

// TestMailThroughTheStack: with contacts for alice and bob and an email subscription of signed
// links, an approval to both puts exactly one message per person in moto's SES (copies of it
// aside: mail goes out at least once), from the stack's sender; each holds that person's own
// link, which opens their page, and deciding with alice's records her one vote.
func TestMailThroughTheStack(t *testing.T) {
	localaws.NeedsStack(t)
	tenant := newRun("mail")
	ops := jwt(t, devjwt.Token{Subject: "ops", Tenant: tenant, Scopes: []string{"contacts:manage", "subscriptions:manage", "tokens:delegate"}})
	eng := jwt(t, devjwt.Token{Subject: "engine", Tenant: tenant, Scopes: []string{"interrupts:write", "runs:read"}})
	address := func(who string) string { return who + "@" + tenant + ".example.com" }
	for _, who := range []string{"alice", "bob"} {
		if a := do(t, "PUT", "/contacts/principal/"+who, ops, `{"email":"`+address(who)+`","name":"`+strings.ToUpper(who[:1])+who[1:]+`"}`); a.Status != 201 {
			t.Fatalf("contact %s: %d %s", who, a.Status, a.Body)
		}
	}
	if a := do(t, "POST", "/subscriptions", ops, `{"format":"email","events":["interrupt.requested"],"approvalLinks":"signed"}`); a.Status != 201 {
		t.Fatalf("subscription: %d %s", a.Status, a.Body)
	}
	run := newRun("mailed")
	payload := strings.Replace(example(t, "approval"), `"requiredApprovals":1`, `"requiredApprovals":2,"approversList":["alice","bob"]`, 1)
	if a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"approve","payload":`+payload+`}`); a.Status != 201 {
		t.Fatalf("request: %d %s", a.Status, a.Body)
	}
	// Mail goes out at least once: a send whose mark was lost is sent again, the same message
	// but for its Date and Message-ID (a signed link is the same on every attempt). SES's copy
	// names no event, so a message is known by its subject and text, and a copy of one already
	// kept is not counted again; two messages that differ in anything they say still count two.
	type message struct {
		header mail.Header
		text   string
	}
	got := map[string][]message{}
	deadline := time.Now().Add(30 * time.Second)
	for len(got[address("alice")]) == 0 || len(got[address("bob")]) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, mail to %v", got)
		}
		<-time.After(100 * time.Millisecond) // moto signals nothing: poll what it accepted
		got = map[string][]message{}
		kept := map[string]bool{}
		for _, s := range localaws.Sent(t) {
			msg, err := mail.ReadMessage(strings.NewReader(s.Raw))
			if err != nil || !strings.Contains(msg.Header.Get("To"), tenant) {
				continue
			}
			to, err := mail.ParseAddress(msg.Header.Get("To"))
			if err != nil {
				t.Fatalf("to %q: %v", msg.Header.Get("To"), err)
			}
			text := textPart(t, msg)
			if key := to.Address + "\n" + msg.Header.Get("Subject") + "\n" + text; !kept[key] {
				kept[key] = true
				got[to.Address] = append(got[to.Address], message{msg.Header, text})
			}
		}
	}
	if len(got) != 2 || len(got[address("alice")]) != 1 || len(got[address("bob")]) != 1 {
		t.Fatalf("distinct mail to %d addresses (%v), want one message each to alice and bob", len(got), got)
	}
	msg := got[address("alice")][0]
	if from, _ := mail.ParseAddress(msg.header.Get("From")); from == nil || from.Address != localaws.Sender {
		t.Errorf("from %q", msg.header.Get("From"))
	}
	text := msg.text
	link := regexp.MustCompile(`https?://\S+/approve/(ow2\.[^\s?]+)`).FindStringSubmatch(text)
	if link == nil || !strings.Contains(text, "Hello \u2068Alice\u2069,") {
		t.Fatalf("alice's mail:\n%s", text)
	}
	// The stack's mailbox shows the mail decoded, its signed link whole and clickable.
	if box := (call{method: "GET", path: "/local-mail"}).must(t); box.Status != 200 || !strings.Contains(string(box.Body), address("alice")) {
		t.Errorf("/local-mail: %d %.300s", box.Status, box.Body)
	} else if n := regexp.MustCompile(`<td>[^<]*` + regexp.QuoteMeta(address("alice")) + `[^<]*</td><td><a href="(/local-mail/\d+)">`).FindStringSubmatch(string(box.Body)); n == nil {
		t.Errorf("/local-mail lists no message to alice: %.500s", box.Body)
	} else if one := (call{method: "GET", path: n[1]}).must(t); !strings.Contains(string(one.Body), `<a href="`+link[0]) {
		t.Errorf("alice's message at %s does not link %s whole: %.500s", n[1], link[0], one.Body)
	}
	page := call{method: "GET", path: strings.TrimPrefix(link[0], gatewayURL())}.must(t)
	if page.Status != 200 || !strings.Contains(string(page.Body), "alice") {
		t.Fatalf("alice's page: %d %.300s", page.Status, page.Body)
	}
	vote := call{method: "POST", path: "/interrupts/" + url.PathEscape(link[1]), body: `{"resumeValue":{"action":"accept","decidedAt":"2026-12-02T09:00:00Z"}}`}.must(t)
	if vote.Status != 202 {
		t.Fatalf("alice's vote: %d %s", vote.Status, vote.Body)
	}
	events := do(t, "GET", "/runs/"+run+"/events", eng, "")
	if n := strings.Count(string(events.Body), `"type":"interrupt.voted"`); n != 1 || !strings.Contains(string(events.Body), `"decidedBy":"alice"`) {
		t.Errorf("after alice's vote, %d votes: %s", n, events.Body)
	}
}

// textPart is msg's text/plain part, decoded.
func textPart(t *testing.T, msg *mail.Message) string {
	t.Helper()
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := r.NextPart()
		if err != nil {
			t.Fatalf("no text part: %v", err)
		}
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain") {
			b, _ := io.ReadAll(p)
			return string(b)
		}
	}
}
