package outbound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Mail is one message the host sends, to each of its addresses.
type Mail struct {
	To      []string
	Subject string
	// Text and HTML are the same message, plain and as HTML.
	Text, HTML string
}

// Mailer sends mail (ses.Mailer). An error that wraps interrupt.ErrUnavailable is worth trying
// again; any other, the mail service refused the message.
type Mailer interface {
	Send(ctx context.Context, m Mail) error
}

// MailedRetention is how long the mark that an event reached an address is kept: as long as the
// event may be delivered again.
const MailedRetention = MaxRetryAge + 24*time.Hour

// mailTo is one message to write: an address, whom it is for, and the link it holds.
type mailTo struct {
	address string
	name    string
	link    Link
}

// sendMail mails an event of an email subscription: for an interrupt a person decides, one
// message to each address the audience's contacts name, each holding that person's own link
// where the subscription's rules give one, else the page's plain link. Never two messages to one
// address (two refs of one list), and none again to an address an earlier delivery of the event
// reached. A ref without a contact, or whose contact names no address, is not mailed. Any other
// event sends nothing.
func (d *Deliverer) sendMail(ctx context.Context, links Links, s Subscription, c runlog.Commit, e runlog.Envelope, n Notice) (int, error) {
	p, ok := carriesLinks(e)
	if !ok || len(n.Audience) == 0 {
		return 204, nil
	}
	if d.Mailer == nil {
		return 0, errors.New("this deployment sends no mail: it names no sender (SenderAddress)")
	}
	var (
		to    []mailTo
		refs  = map[string][]Recipient{} // by address: whom it reaches
		names = map[string]string{}
	)
	for _, r := range n.Audience {
		if !(contacts.Key{Kind: r.Kind, Ref: r.Ref}).Valid() || d.Contacts == nil {
			continue
		}
		ct, err := d.Contacts.Contact(ctx, s.Tenant, r.Kind, r.Ref)
		switch {
		case errors.Is(err, contacts.ErrNotFound):
			continue
		case err != nil:
			return 0, fmt.Errorf("%w: the contact of %s %q: %w", errStore, r.Kind, r.Ref, err)
		case ct.Email == "":
			continue
		}
		if refs[ct.Email] == nil {
			to = append(to, mailTo{address: ct.Email})
			names[ct.Email] = ct.Name
		}
		refs[ct.Email] = append(refs[ct.Email], r)
	}
	for i, m := range to {
		// A person's own link only to an address that reaches that person alone: never a token
		// to a list, nor to an address two refs share.
		if rs := refs[m.address]; len(rs) == 1 && rs[0].Kind == interrupt.RefPrincipal {
			to[i].link, to[i].name = linkFor(n.Links, rs[0]), names[m.address]
		} else {
			to[i].link = linkFor(n.Links, Recipient{})
		}
		if to[i].link.URL == "" { // every ref had its own: the page's plain link for the rest
			to[i].link = Link{URL: strings.TrimSuffix(links.BaseURL, "/") + "/approve/" + url.PathEscape(e.RunID) + "/" + url.PathEscape(e.InterruptID)}
		}
	}
	eventID := EventID(e)
	sent := 0
	for _, m := range to {
		done, err := d.Store.Mailed(ctx, s.Tenant, s.ID, eventID, m.address)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", errStore, err)
		}
		if done {
			continue
		}
		if err := d.Mailer.Send(ctx, compose(p, c, e, n, m)); err != nil {
			return 0, err
		}
		sent++
		if err := d.Store.MarkMailed(ctx, s.Tenant, s.ID, eventID, m.address, d.now().Add(MailedRetention)); err != nil {
			return 0, fmt.Errorf("%w: %w", errStore, err)
		}
	}
	if sent == 0 {
		return 204, nil
	}
	return 202, nil
}

// linkFor is r's link: its own signed link, else the one for everyone (which names r among
// others, or no one).
func linkFor(links []Link, r Recipient) Link {
	for _, l := range links {
		if l.Principal != "" && l.Principal == r.Ref && r.Kind == interrupt.RefPrincipal {
			return l
		}
	}
	for _, l := range links {
		if l.Principal == "" {
			return l
		}
	}
	return Link{}
}

// compose writes the message to m: who asks, what, by when, and the link, in plain words.
// Every string from the payload is escaped in the HTML part.
func compose(p interrupt.Payload, c runlog.Commit, e runlog.Envelope, n Notice, m mailTo) Mail {
	var data struct {
		Title        string `json:"title"`
		Description  string `json:"description"`
		ArtifactType string `json:"artifactType"`
		ArtifactID   string `json:"artifactId"`
		Questions    []struct {
			Question string `json:"question"`
		} `json:"questions"`
	}
	var raw struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(e.Payload, &raw) == nil {
		_ = json.Unmarshal(raw.Data, &data) // a payload without these fields is mailed without them
	}
	what, ask := "An approval", "decide"
	if p.Kind == interrupt.KindClarification {
		what, ask = "A question", "answer"
	}
	title := strings.TrimSpace(data.Title)
	if title == "" {
		title = strings.TrimSpace(data.ArtifactType + " " + data.ArtifactID)
	}
	who := "The run " + e.RunID
	if c.By != "" {
		who = c.By
	}
	subject := what + " for you"
	if title != "" {
		subject += ": " + title
	}
	greeting := "Hello,"
	if m.name != "" {
		greeting = "Hello " + m.name + ","
	}
	lines := []string{greeting, "", fmt.Sprintf("%s asks you to %s.", who, ask)}
	if title != "" {
		lines = append(lines, "", title)
	}
	if data.Description != "" {
		lines = append(lines, "", data.Description)
	}
	for _, q := range data.Questions {
		lines = append(lines, "- "+q.Question)
	}
	if !n.Deadline.IsZero() {
		lines = append(lines, "", "Please "+ask+" by "+n.Deadline.UTC().Format("Monday 2 January 2006, 15:04 UTC")+".")
	}
	if m.link.URL != "" {
		lines = append(lines, "", "Open it here: "+m.link.URL)
		if m.link.Principal == "" {
			lines = append(lines, "You will be asked to sign in.")
		} else {
			lines = append(lines, "This link is yours: do not forward it.")
		}
	}
	text := strings.Join(lines, "\n") + "\n"
	var b strings.Builder
	b.WriteString("<!doctype html><html><body style=\"font-family:sans-serif;line-height:1.5\">")
	for _, l := range lines {
		switch {
		case l == "":
		case m.link.URL != "" && strings.HasPrefix(l, "Open it here: "):
			fmt.Fprintf(&b, "<p><a href=\"%s\">Open it</a></p>", html.EscapeString(m.link.URL))
		default:
			fmt.Fprintf(&b, "<p>%s</p>", html.EscapeString(l))
		}
	}
	b.WriteString("</body></html>")
	return Mail{To: []string{m.address}, Subject: subject, Text: text, HTML: b.String()}
}
