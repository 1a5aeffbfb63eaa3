package outbound

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/words"
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

// Bounds of a tenant's mail, which every tenant sends from the deployment's one SES identity:
// one event (a request, its outcome, a run's end) mails at most MaxMailsPerEvent addresses,
// and a tenant at most MaxMailsPerTenantHour messages in an hour (MailHour: the clock's, UTC).
// What a bound refuses is not sent, never retried, and named in the attempt (Attempt.Refused).
const (
	MaxMailsPerEvent      = 50
	MaxMailsPerTenantHour = 1000
	MailHour              = "2006-01-02T15"
)

// mailTo is one message to write: an address, whom it is for, and the link it holds.
type mailTo struct {
	address string
	name    string
	link    Link
	// standIn, when set, is the delegation in whose place the address is reached.
	standIn *StandIn
}

// sendMail mails an event of an email subscription: for an interrupt a person decides, one
// message to each address the audience's contacts name, each holding that person's own link
// where the subscription's rules give one, else the page's plain link. Never two messages to one
// address (two refs of one list), and none again to an address an earlier delivery of the event
// reached. A ref without a contact, or whose contact names no address, is not mailed. A request
// no longer pending when it is sent (stillPending: an operator's resend, a late retry) mails no
// one. Any other event sends nothing.
func (d *Deliverer) sendMail(ctx context.Context, s Subscription, c runlog.Commit, e runlog.Envelope, n Notice, mode sendMode) (sent, error) {
	switch e.Type {
	case interrupt.EventResolved, interrupt.EventExpired:
		return d.mailOutcome(ctx, s, c, e, mode.resend)
	case interrupt.EventRunCancelled, interrupt.EventRunCompleted:
		return d.mailRunEnded(ctx, s, e, mode.resend)
	}
	nudge := e.Type == interrupt.EventReminded || e.Type == interrupt.EventEscalated
	p, ok := carriesLinks(e)
	if (!ok && !nudge) || len(n.Audience) == 0 {
		return sent{status: 204}, nil
	}
	if d.Mailer == nil {
		return sent{}, errors.New("this deployment sends no mail: it names no sender (SenderAddress)")
	}
	if !nudge {
		switch open, err := d.stillPending(ctx, s.Tenant, e); {
		case err != nil:
			return sent{}, fmt.Errorf("%w: %w", ErrStore, err)
		case !open:
			return sent{status: 204}, nil
		}
	}
	to, refs, names, unreached, err := d.addresses(ctx, s.Tenant, n.Audience)
	if err != nil {
		return sent{}, err
	}
	if nudge {
		for i := range to {
			to[i].name = names[mailbox(to[i].address)]
		}
		out, err := d.mailFollowUp(ctx, s, e, n, to, mode.resend)
		out.unreached = unreached
		return out, err
	}
	for i, m := range to {
		// A person's own link only to an address that reaches that person alone: never a token
		// to a list, nor to an address two refs share.
		if rs := refs[mailbox(m.address)]; len(rs) == 1 && rs[0].Kind == interrupt.RefPrincipal {
			to[i].link, to[i].name = linkFor(n.Links, rs[0]), names[mailbox(m.address)]
		} else {
			to[i].link = linkFor(n.Links, Recipient{})
		}
		to[i].standIn = standInFor(n, refs[mailbox(m.address)])
		if to[i].link.URL == "" { // every ref had its own: the page's plain link for the rest
			to[i].link = Link{URL: strings.TrimSuffix(mode.links.BaseURL, "/") + "/approve/" + url.PathEscape(e.RunID) + "/" + url.PathEscape(e.InterruptID)}
		}
	}
	if len(to) == 0 {
		return sent{status: 204, unreached: unreached}, nil
	}
	asked := Asked{RunID: e.RunID, InterruptID: e.InterruptID, Title: titleOf(e, displayOf(c, e)), Deadline: n.Deadline}
	for _, m := range to {
		a := Addressee{Address: m.address}
		if rs := refs[mailbox(m.address)]; len(rs) == 1 && rs[0].Kind == interrupt.RefPrincipal {
			a.Name, a.Principal = m.name, rs[0].Ref
		}
		asked.To = append(asked.To, a)
	}
	// Whom the outcome goes to, recorded before anyone is mailed: a request mailed to some and
	// retried is still told. An operator's resend records no one: those the delivery asked are
	// recorded already, and the request resent may be closed (its outcome told, or to be told
	// to them alone).
	if !mode.resend {
		if err := d.Store.RecordAsked(ctx, s.Tenant, s.ID, asked, d.now().Add(AskedRetention)); err != nil {
			return sent{}, fmt.Errorf("%w: %w", ErrStore, err)
		}
	}
	out, err := d.mailEach(ctx, s, EventID(e), to, mode.resend, func(m mailTo) Mail { return compose(p, c, e, n, m) })
	out.unreached = unreached
	return out, err
}

// stillPending reports whether the interrupt e requested is pending as its run stands now (its
// newest checkpoint and the commits after it): a request mail asks people to decide, and an
// operator's resend, or a delivery retried late, of a request decided, expired or cancelled
// since (or of a run gone) must ask no one. An interrupt the state does not hold is not
// pending: a checkpoint keeps every pending one, and archives only the closed.
func (d *Deliverer) stillPending(ctx context.Context, tenant string, e runlog.Envelope) (bool, error) {
	st, err := d.standing(ctx, tenant, e.RunID)
	if err != nil || st == nil {
		return false, err
	}
	in := st.ByID(e.InterruptID)
	return in != nil && st.Ended == "" && in.StatusAt(d.now()) == interrupt.StatusPending, nil
}

// standing is the run as it stands now: its newest checkpoint and the commits after it,
// folded; nil for a run past its retention, whose commits are being deleted.
func (d *Deliverer) standing(ctx context.Context, tenant, runID string) (*runlog.State, error) {
	cp, commits, err := d.Log.Tail(ctx, runlog.Key{Tenant: tenant, RunID: runID})
	if err != nil {
		return nil, err
	}
	if cp == nil && len(commits) > 0 && commits[0].Seq != 1 {
		return nil, nil
	}
	return runlog.Resume(cp, commits)
}

// addresses are the addresses the contacts of audience name, each mailbox once (two spellings
// of one address in another letter case are one mailbox: one reader, so never two people's
// links), with the refs each mailbox reaches and the name its contact gives, keyed by mailbox; a ref without a contact, or whose contact names no
// address, is unreached ("principal carol").
func (d *Deliverer) addresses(ctx context.Context, tenant string, audience []Recipient) (to []mailTo, refs map[string][]Recipient, names map[string]string, unreached []string, err error) {
	refs, names = map[string][]Recipient{}, map[string]string{}
	for _, r := range audience {
		if !(contacts.Key{Kind: r.Kind, Ref: r.Ref}).Valid() || d.Contacts == nil {
			unreached = append(unreached, r.Kind+" "+r.Ref)
			continue
		}
		ct, err := d.Contacts.Contact(ctx, tenant, r.Kind, r.Ref)
		switch {
		case errors.Is(err, contacts.ErrNotFound) || (err == nil && ct.Email == ""):
			unreached = append(unreached, r.Kind+" "+r.Ref)
			continue
		case err != nil:
			return nil, nil, nil, nil, fmt.Errorf("%w: the contact of %s %q: %w", ErrStore, r.Kind, r.Ref, err)
		}
		box := mailbox(ct.Email)
		if refs[box] == nil {
			to = append(to, mailTo{address: ct.Email})
			names[box] = ct.Name
		}
		refs[box] = append(refs[box], r)
	}
	return to, refs, names, unreached, nil
}

// mailFollowUp mails a reminder or an escalation to the addresses of its recipients, each
// once, with the page's link (which signs the reader in): the request's title as the
// subscription recorded it when it asked (else the run's), and what is asked of the reader.
func (d *Deliverer) mailFollowUp(ctx context.Context, s Subscription, e runlog.Envelope, n Notice, to []mailTo, resend bool) (sent, error) {
	asked, _, err := d.Store.Asked(ctx, AskedKey{Tenant: s.Tenant, Subscription: s.ID, RunID: e.RunID, InterruptID: e.InterruptID})
	if err != nil {
		return sent{}, fmt.Errorf("%w: %w", ErrStore, err)
	}
	title := words.Isolated(asked.Title)
	if asked.Title == "" {
		title = "A request of run " + e.RunID
	}
	link := linkFor(n.Links, Recipient{})
	by := ""
	if !asked.Deadline.IsZero() {
		by = " It must be decided by " + inWords(asked.Deadline.Format(runlog.TimeFormat)) + "."
	}
	var waitsOn []string
	if e.Type == interrupt.EventEscalated {
		if waitsOn, err = d.waitsOn(ctx, s.Tenant, e); err != nil {
			return sent{}, fmt.Errorf("%w: %w", ErrStore, err)
		}
	}
	return d.mailEach(ctx, s, EventID(e), to, resend, func(m mailTo) Mail {
		subject, lines := "Reminder: "+title, []string{greeting(m.name), "", title + ":", "It still waits for your decision." + by}
		if e.Type == interrupt.EventEscalated {
			subject = "Escalated: " + title
			waits := "It has waited without a decision."
			if len(waitsOn) > 0 {
				waits = "It has waited without a decision from " + inList(waitsOn) + "."
			}
			lines = []string{greeting(m.name), "", title + ":", waits + by,
				"Its escalation names you to see that it is decided: unless the request names you among those who decide it, you cannot decide it yourself. Ask them, or whoever asked for it."}
		}
		lines = append(lines, "", "You will be asked to sign in.")
		return render(m.address, subject, lines, link)
	})
}

// mailEach sends write(m) to each of to that the event has not reached yet, marking each it
// reaches; 202 when it sent any, 204 when there was no one left. The marks are what keep the
// deliverer's own retries from mailing anyone twice; an operator's resend (again) mails every
// one of to, as it was asked to. Past MaxMailsPerEvent addresses, or the tenant's
// MaxMailsPerTenantHour, an address is refused: not mailed, and named in sent.refused.
func (d *Deliverer) mailEach(ctx context.Context, s Subscription, eventID string, to []mailTo, again bool, write func(mailTo) Mail) (sent, error) {
	count := 0
	var refused []string
	for i, m := range to {
		if i >= MaxMailsPerEvent {
			refused = append(refused, m.address+": past the "+strconv.Itoa(MaxMailsPerEvent)+" addresses one event mails")
			continue
		}
		mark := MailedKey{Tenant: s.Tenant, Subscription: s.ID, EventID: eventID, Address: mailbox(m.address)}
		done, err := d.Store.Mailed(ctx, mark)
		if err != nil {
			return sent{}, fmt.Errorf("%w: %w", ErrStore, err)
		}
		if done && !again {
			continue
		}
		took, err := d.Store.TakeMail(ctx, s.Tenant, d.now(), MaxMailsPerTenantHour)
		if err != nil {
			return sent{}, fmt.Errorf("%w: %w", ErrStore, err)
		}
		if !took {
			refused = append(refused, m.address+": past the tenant's "+strconv.Itoa(MaxMailsPerTenantHour)+" messages this hour")
			continue
		}
		if err := d.Mailer.Send(ctx, write(m)); err != nil {
			return sent{}, err
		}
		count++
		if err := d.Store.MarkMailed(ctx, mark, d.now().Add(MailedRetention)); err != nil {
			return sent{}, fmt.Errorf("%w: %w", ErrStore, err)
		}
	}
	if count == 0 {
		return sent{status: 204, refused: refused}, nil
	}
	return sent{status: 202, refused: refused}, nil
}

// AskedRetention is how long whom an interrupt's request was mailed to is kept, for its outcome:
// past the longest an interrupt may wait (a ttlMs of 30 days).
const AskedRetention = 31 * 24 * time.Hour

// mailOutcome tells those an email subscription asked about an interrupt what became of it:
// each address it mailed the request to, but the one principal who decided it (the host's
// record, c's author: never the decidedBy a decider sent), once. The record
// of whom it asked is dropped once all are told, so the end of the run tells no one again.
func (d *Deliverer) mailOutcome(ctx context.Context, s Subscription, c runlog.Commit, e runlog.Envelope, resend bool) (sent, error) {
	asked, ok, err := d.Store.Asked(ctx, AskedKey{Tenant: s.Tenant, Subscription: s.ID, RunID: e.RunID, InterruptID: e.InterruptID})
	if err != nil {
		return sent{}, fmt.Errorf("%w: %w", ErrStore, err)
	}
	if !ok {
		return sent{status: 204}, nil
	}
	var outcome struct {
		Kind        interrupt.Kind `json:"kind"`
		ResumeValue struct {
			Action    string `json:"action"`
			DecidedBy string `json:"decidedBy"`
			Feedback  string `json:"feedback"`
		} `json:"resumeValue"`
		// Deadline is an expiry's: when it expired, not when the sweep recorded it.
		Deadline string `json:"deadline"`
	}
	_ = json.Unmarshal(e.Payload, &outcome) // an outcome without these fields is told without them
	rv := outcome.ResumeValue
	decider := c.Decider()
	if e.Type == interrupt.EventExpired {
		decider = ""
	}
	var to []mailTo
	inPlace := map[string]string{} // by address: what a delegate decided in its principal's place
	votes, err := d.delegatedVotes(ctx, s.Tenant, e)
	if err != nil {
		return sent{}, err
	}
	for _, a := range asked.To {
		if a.Principal != "" && a.Principal == decider {
			continue // they know: they decided it
		}
		to = append(to, mailTo{address: a.Address, name: a.Name})
		for _, v := range votes {
			if a.Principal != "" && v.OnBehalfOf == a.Principal {
				inPlace[a.Address] = words.Isolated(v.Principal) + " voted " + string(v.Action) + " in your place, as your delegate."
			}
		}
	}
	what, headline := "Decided", "It was decided"
	switch {
	case e.Type == interrupt.EventExpired:
		what, headline = "Expired", "Its deadline passed without a decision"
	case outcome.Kind == interrupt.KindClarification:
		what, headline = "Answered", "It was answered"
	default:
		if verb, ok := map[string]string{"accept": "accepted", "reject": "rejected", "edit-accept": "accepted with edits", "refine": "sent back for changes"}[rv.Action]; ok {
			what, headline = cases(verb), "It was "+verb
		}
	}
	if by := cmp.Or(decider, rv.DecidedBy); by != "" && e.Type != interrupt.EventExpired {
		headline += " by " + words.Isolated(by)
	}
	out, err := d.mailEach(ctx, s, EventID(e), to, resend, func(m mailTo) Mail {
		lines := []string{greeting(m.name), "", cmp.Or(isolated(asked.Title), "The request you were asked about") + ":", headline + ", " + inWords(cmp.Or(outcome.Deadline, e.At)) + "."}
		if rv.Feedback != "" {
			lines = append(lines, "", "Their comment: "+words.Isolated(rv.Feedback))
		}
		if said := inPlace[m.address]; said != "" {
			lines = append(lines, "", said)
		}
		lines = append(lines, "", "Nothing more is needed from you.")
		return render(m.address, what+": "+cmp.Or(isolated(asked.Title), "a request you were asked about"), lines, Link{})
	})
	if err != nil {
		return out, err
	}
	return out, d.told(ctx, s, asked)
}

// told drops the record of a request whose outcome every address was told.
func (d *Deliverer) told(ctx context.Context, s Subscription, a Asked) error {
	if err := d.Store.DropAsked(ctx, AskedKey{Tenant: s.Tenant, Subscription: s.ID, RunID: a.RunID, InterruptID: a.InterruptID}); err != nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	return nil
}

// mailRunEnded tells those an email subscription asked about a run's requests that are still
// outstanding (their records not dropped: no outcome told) that the run ended before they were
// decided: one message per address, naming every such request it was asked about.
func (d *Deliverer) mailRunEnded(ctx context.Context, s Subscription, e runlog.Envelope, resend bool) (sent, error) {
	records, err := d.Store.AskedInRun(ctx, s.Tenant, s.ID, e.RunID)
	if err != nil {
		return sent{}, fmt.Errorf("%w: %w", ErrStore, err)
	}
	if len(records) == 0 {
		return sent{status: 204}, nil
	}
	var ended interrupt.Ended
	_ = json.Unmarshal(e.Payload, &ended) // an end without these fields is told without them
	var to []mailTo
	titles := map[string][]string{}
	for _, a := range records {
		for _, ad := range a.To {
			if titles[mailbox(ad.Address)] == nil {
				to = append(to, mailTo{address: ad.Address, name: ad.Name})
			}
			titles[mailbox(ad.Address)] = append(titles[mailbox(ad.Address)], cmp.Or(isolated(a.Title), "a request of run "+e.RunID))
		}
	}
	what, headline := "Cancelled", "Its run was cancelled"
	if e.Type == interrupt.EventRunCompleted {
		what, headline = "Closed", "Its run completed"
	}
	if ended.By != "" {
		headline += " by " + words.Isolated(ended.By)
	}
	out, err := d.mailEach(ctx, s, EventID(e), to, resend, func(m mailTo) Mail {
		ts := titles[mailbox(m.address)]
		lines := []string{greeting(m.name), ""}
		subject := what + ": " + ts[0]
		if len(ts) == 1 {
			lines = append(lines, ts[0]+":")
		} else {
			subject = fmt.Sprintf("%s: %d requests you were asked about", what, len(ts))
			lines = append(lines, "The requests you were asked about:")
			for _, t := range ts {
				lines = append(lines, "- "+t)
			}
		}
		lines = append(lines, headline+" before a decision, "+inWords(e.At)+".")
		if ended.Reason != "" {
			lines = append(lines, "", "The reason given: "+ended.Reason)
		}
		lines = append(lines, "", "Nothing more is needed from you.")
		return render(m.address, subject, lines, Link{})
	})
	if err != nil {
		return out, err
	}
	for _, a := range records {
		if err := d.told(ctx, s, a); err != nil {
			return out, err
		}
	}
	return out, nil
}

// cases is s with its first letter in capitals.
func cases(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// greeting opens a message to name.
func greeting(name string) string {
	if name == "" {
		return "Hello,"
	}
	return "Hello " + words.Isolated(name) + ","
}

// isolated is a title as a line of the host's words inserts it (words.Isolated); "" for none.
func isolated(title string) string {
	if title == "" {
		return ""
	}
	return words.Isolated(title)
}

// displayOf is how commit c's request of e's interrupt asked to be shown (runlog.Event.Display,
// kept beside the payload: no payload is read), nil when c did not request it or said nothing.
func displayOf(c runlog.Commit, e runlog.Envelope) *interrupt.Display {
	for _, ev := range c.Events {
		if ev.Type == interrupt.EventRequested && ev.InterruptID == e.InterruptID {
			return ev.Display
		}
	}
	return nil
}

// titleOf is an interrupt request's title: its display's (a question's, which its payload
// cannot hold), else its payload's, else its artifact.
func titleOf(e runlog.Envelope, d *interrupt.Display) string {
	if d != nil && strings.TrimSpace(d.Title) != "" {
		return strings.TrimSpace(d.Title)
	}
	var raw struct {
		Data struct {
			Title        string `json:"title"`
			ArtifactType string `json:"artifactType"`
			ArtifactID   string `json:"artifactId"`
		} `json:"data"`
	}
	_ = json.Unmarshal(e.Payload, &raw)
	return cmp.Or(strings.TrimSpace(raw.Data.Title), strings.TrimSpace(raw.Data.ArtifactType+" "+raw.Data.ArtifactID))
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

// compose writes the request to m: who asks, what, by when, and the link, in plain words.
func compose(p interrupt.Payload, c runlog.Commit, e runlog.Envelope, n Notice, m mailTo) Mail {
	var data struct {
		Description string `json:"description"`
		Questions   []struct {
			Question string `json:"question"`
		} `json:"questions"`
		ArtifactData json.RawMessage `json:"artifactData"`
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
	display := displayOf(c, e)
	title := titleOf(e, display)
	// Who asks, as the page says it (words.Personal): a name, beside a principal that reads as
	// a person's; never an app client's id.
	who := words.Sentence{words.Said("The run "), words.Value(e.RunID)}
	switch {
	case words.Personal(c.By):
		who = words.Sentence{words.Value(c.By)}
	case c.By != "":
		who = words.Sentence{words.Said("An automated caller")}
	}
	in := runlog.RequestedIn(c, e.InterruptID)
	if in != nil && in.Display != nil && strings.TrimSpace(in.Display.RequesterName) != "" {
		who = words.Sentence{words.Value(strings.TrimSpace(in.Display.RequesterName))}
		if words.Personal(c.By) {
			who = append(who, words.Said(" ("), words.Value(c.By), words.Said(")"))
		}
	}
	subject := what + " for you"
	if title != "" {
		subject += ": " + words.Isolated(title)
	}
	lines := []string{greeting(m.name), "", append(who, words.Said(" asks you to "+ask+".")).Plain()}
	if s := m.standIn; s != nil {
		lines[2] = append(who, words.Said(" asks "), words.Value(s.For), words.Said(" to "+ask+": you decide in their place while they are away (until "+s.Until.UTC().Format("2 January")+").")).Plain()
	}
	if title != "" {
		lines = append(lines, "", title)
	}
	if len(n.Call) > 0 {
		lines = append(lines, "", n.Call.Plain()+".")
	}
	if data.Description == "" && display != nil {
		data.Description = display.Description
	}
	if data.Description != "" {
		lines = append(lines, "", data.Description)
	}
	if fields := topFields(data.ArtifactData); len(fields) > 0 {
		lines = append(append(lines, ""), fields...)
	}
	for _, q := range data.Questions {
		lines = append(lines, "- "+q.Question)
	}
	if !n.Deadline.IsZero() {
		lines = append(lines, "", "Please "+ask+" by "+inWords(n.Deadline.Format(runlog.TimeFormat))+".")
	}
	if m.link.Principal == "" {
		lines = append(lines, "", "You will be asked to sign in.")
	} else {
		lines = append(lines, "", "This link is yours: do not forward it.")
	}
	return render(m.address, subject, lines, m.link, choices(p, m.link)...)
}

// choice is a decision a mail offers in one click: a button opening the page with it made.
type choice struct {
	label, url string
}

// choices are an approval's Approve and Reject, where it offers them: each opens the page at
// link with ?choice= set, which the page asks to confirm (a mail scanner that follows a link
// decides nothing). None for a message without a link, or for another kind.
func choices(p interrupt.Payload, link Link) []choice {
	u, err := url.Parse(link.URL)
	if link.URL == "" || err != nil || p.Kind != interrupt.KindApproval {
		return nil
	}
	var out []choice
	for _, a := range []struct {
		action interrupt.Action
		label  string
	}{{interrupt.ActionAccept, "Approve"}, {interrupt.ActionReject, "Reject"}} {
		if !slices.Contains(p.Data.Actions, a.action) {
			continue
		}
		q := u.Query()
		q.Set("choice", string(a.action))
		c := *u
		c.RawQuery = q.Encode()
		out = append(out, choice{label: a.label, url: c.String()})
	}
	return out
}

// render is a message to address of lines, a button per choice, and a link to open when it has
// one: plain text, and HTML with every line escaped (lines hold whatever a payload holds).
func render(address, subject string, lines []string, link Link, choices ...choice) Mail {
	text := strings.Join(lines, "\n") + "\n"
	var b strings.Builder
	b.WriteString("<!doctype html><html><body style=\"font-family:sans-serif;line-height:1.5\">")
	for _, l := range lines {
		if l != "" {
			fmt.Fprintf(&b, "<p>%s</p>", html.EscapeString(l))
		}
	}
	if len(choices) > 0 {
		text += "\n"
		b.WriteString("<p>")
		for i, c := range choices {
			text += c.label + ": " + c.url + "\n"
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "<a href=\"%s\" style=\"display:inline-block;padding:8px 16px;border-radius:4px;text-decoration:none;color:#fff;background:%s\">%s</a>",
				html.EscapeString(c.url), map[string]string{"Approve": "#1a7f37", "Reject": "#b42318"}[c.label], c.label)
		}
		b.WriteString("</p><p>You will confirm your choice on the page; nothing is decided until you do.</p>")
		text += "You will confirm your choice on the page; nothing is decided until you do.\n"
	}
	if link.URL != "" {
		text += "\nOpen it: " + link.URL + "\n"
		fmt.Fprintf(&b, "<p><a href=\"%s\">Open it</a></p>", html.EscapeString(link.URL))
	}
	b.WriteString("</body></html>")
	return Mail{To: []string{address}, Subject: subject, Text: text, HTML: b.String()}
}

// mailbox is the mailbox an address reaches, as the host compares addresses: without regard to
// letter case (the domain's is never significant, and no provider tells a local part's apart),
// so that one reader is never mailed two people's links, nor marked mailed twice.
func mailbox(address string) string { return strings.ToLower(address) }

// inWords is a timestamp as a person reads it (words.Time); as it is when it is no timestamp.
func inWords(at string) string {
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return at
	}
	return words.Time(t)
}

// maxMailFields bounds the artifact's fields a request mail lists: the page shows the rest.
const maxMailFields = 8

// topFields are the artifact data's top-level members that hold a string, a number or a
// boolean, as "Label: value" lines in the data's order, at most maxMailFields of them and the
// count of the rest: what a person needs to see what they are asked about, the page holding all
// of it.
func topFields(raw json.RawMessage) []string {
	var members map[string]json.RawMessage
	_ = json.Unmarshal(raw, &members) // for its currency: data that is no object lists nothing below
	currency := words.Currency(members)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []string
	more := 0
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return out
		}
		var rv json.RawMessage
		if err := dec.Decode(&rv); err != nil {
			return out
		}
		var v any
		vdec := json.NewDecoder(bytes.NewReader(rv))
		vdec.UseNumber()
		if err := vdec.Decode(&v); err != nil {
			return out
		}
		label := words.Label(key.(string))
		var text string
		// An amount in minor units beside its currency reads as money, as on the page
		// (words.Amount): "totalCents": 1240000 and "currency": "EUR" is Total: 12,400.00 EUR.
		if name, amount, ok := words.Amount(key.(string), rv, currency); ok {
			label, v = words.Label(name), amount
		}
		switch v := v.(type) {
		case string:
			text = v
		case json.Number:
			text = words.Number(v.String())
		case bool:
			text = map[bool]string{true: "yes", false: "no"}[v]
		default:
			continue
		}
		if len(out) == maxMailFields {
			more++
			continue
		}
		out = append(out, label+": "+text)
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("(and %d more on the page)", more))
	}
	return out
}

// waitsOn are whom an escalated request still waits on, in words ("alice", "group finance"),
// each isolated: its deciders less those who voted, as the run stands now; none when the run
// or the interrupt is no longer there.
func (d *Deliverer) waitsOn(ctx context.Context, tenant string, e runlog.Envelope) ([]string, error) {
	st, err := d.standing(ctx, tenant, e.RunID)
	if err != nil || st == nil {
		return nil, err
	}
	in := st.ByID(e.InterruptID)
	if in == nil {
		return nil, nil
	}
	var out []string
	for _, r := range in.Deciders.Undecided(func(p string) bool { return in.Voted(p) != nil }) {
		if r.Kind == interrupt.RefPrincipal {
			out = append(out, words.Isolated(r.Ref))
		} else {
			out = append(out, r.Kind+" "+words.Isolated(r.Ref))
		}
	}
	return out, nil
}

// inList is items as a sentence lists them: "a", "a and b", "a, b and c".
func inList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// delegatedVotes are the votes of e's interrupt that delegates cast in others' places, as its
// run stands now: what the outcome mail tells each of those others. A run read only for an
// approval's resolution of a deployment with delegations.
func (d *Deliverer) delegatedVotes(ctx context.Context, tenant string, e runlog.Envelope) ([]interrupt.Vote, error) {
	var r struct {
		Kind interrupt.Kind `json:"kind"`
	}
	if d.Delegations == nil || d.Log == nil || e.Type != interrupt.EventResolved || json.Unmarshal(e.Payload, &r) != nil || r.Kind != interrupt.KindApproval {
		return nil, nil
	}
	st, err := d.standing(ctx, tenant, e.RunID)
	if err != nil {
		return nil, fmt.Errorf("%w: the run: %w", ErrStore, err)
	}
	if st == nil {
		return nil, nil
	}
	in := st.ByID(e.InterruptID)
	if in == nil {
		return nil, nil
	}
	return slices.DeleteFunc(slices.Clone(in.Votes), func(v interrupt.Vote) bool { return v.OnBehalfOf == "" }), nil
}
