package outbound

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// EventID is a delivery's webhook-id: the event's place in its run's log, the same on every
// attempt, so a receiver dedupes on it.
func EventID(e runlog.Envelope) string {
	return fmt.Sprintf("%s:%d:%d", e.RunID, e.Seq, e.Index)
}

// Link is an approval-page link in a delivery (README, "Outbound events": approval links).
// Most links hold no credential: they name the interrupt, and the page signs the approver in
// with the deployment's identity provider and decides as whoever signed in. Only a subscription
// that opted in to signed links (LinksSigned) receives links holding a token, one per principal.
type Link struct {
	// Principal is who a signed link's token resolves as; "" for a plain link only.
	Principal string `json:"principal,omitempty"`
	URL       string `json:"url"`
	// ExpiresAt is a signed link's expiry, or a plain link's interrupt's deadline; "" for a
	// plain link of an interrupt without one.
	ExpiresAt string `json:"expiresAt,omitempty"`
	// For are the recipients the link is meant for: a signed link's principal, or those who
	// reach the page by signing in through the plain link.
	For []Recipient `json:"for,omitempty"`
}

// Recipient is one ref a delivery is for: an approver the receiver (a mailer, a chat bot)
// resolves to people and notifies.
type Recipient struct {
	// Kind is principal, group or role for a ref of the approval's approversList,
	// approverGroupRefs or approverRoleRefs; RecipientRef for an audience entry that is none of
	// them, which the host cannot type (refs are opaque to it).
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
}

// RecipientRef is the kind of an audience entry the approval's eligibility fields do not name.
const RecipientRef = "ref"

// Message is a Standard Webhooks delivery's body: the event as list-events returns it, under
// the convention's type and timestamp, and for an interrupt.requested whom it notifies.
type Message struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      runlog.Envelope `json:"data"`
	// Audience is every ref the delivery is for; each link names those it is for.
	Audience []Recipient `json:"audience,omitempty"`
	Links    []Link      `json:"links,omitempty"`
}

// Notice is what a delivery of an event adds to it: whom it notifies and the links they follow.
type Notice struct {
	Audience []Recipient
	Links    []Link
	// Deadline is when the interrupt expires; zero when it has none.
	Deadline time.Time
	// Mentions are the Slack ids of the audience's refs whose contacts name one: a member id for
	// a principal, a user group for a group or a role (Deliverer.Contacts).
	Mentions map[Recipient]string
}

// LinkTTL is how long a signed link works after its interrupt was requested, at most: a mail
// may be read days later. It never outlives the approval's deadline.
const LinkTTL = 7 * 24 * time.Hour

// Links makes approval links. Keys nil makes no signed links (a deployment without a keyring).
type Links struct {
	Keys token.Keys
	// BaseURL is the public base of the host's API, where /approve/... is served.
	BaseURL string
}

// carriesLinks reports whether a delivery of e carries links: the interrupt.requested of an
// interrupt the page decides (its legacy alias repeats the event, not the links).
func carriesLinks(e runlog.Envelope) (interrupt.Payload, bool) {
	var p interrupt.Payload
	if e.Type != interrupt.EventRequested || json.Unmarshal(e.Payload, &p) != nil {
		return p, false
	}
	return p, p.Kind == interrupt.KindApproval || p.Kind == interrupt.KindClarification
}

// audience is whom an approval's notifications are for: its audience when it names one, else
// the union of its eligibility refs (the spec: audience is the notification hint, and omitted
// the host notifies the union), each typed by the field that names it.
func audience(d interrupt.Data) []Recipient {
	kinds := []struct {
		kind string
		refs []string
	}{{interrupt.RefPrincipal, d.ApproversList}, {interrupt.RefGroup, d.ApproverGroupRefs}, {interrupt.RefRole, d.ApproverRoleRefs}}
	kindOf := func(ref string) string {
		for _, k := range kinds {
			if slices.Contains(k.refs, ref) {
				return k.kind
			}
		}
		return RecipientRef
	}
	var out []Recipient
	if len(d.Audience) > 0 {
		for _, ref := range d.Audience {
			out = append(out, Recipient{Kind: kindOf(ref), Ref: ref})
		}
		return out
	}
	for _, k := range kinds {
		for _, ref := range k.refs {
			if !slices.ContainsFunc(out, func(r Recipient) bool { return r.Ref == ref }) {
				out = append(out, Recipient{Kind: k.kind, Ref: ref})
			}
		}
	}
	return out
}

// asked is whom a clarification's notifications are for: the principals its request's audience
// names (its payload names none, so the request gives it beside: interrupt.Display; a
// clarification has no eligibility fields, and whoever holds a link answers it).
func asked(d *interrupt.Display) []Recipient {
	if d == nil {
		return nil
	}
	var out []Recipient
	for _, ref := range d.Audience {
		if !slices.ContainsFunc(out, func(r Recipient) bool { return r.Ref == ref }) {
			out = append(out, Recipient{Kind: interrupt.RefPrincipal, Ref: ref})
		}
	}
	return out
}

// followedUp are the recipients of a reminder, or the refs an escalation names, when e is one.
func followedUp(e runlog.Envelope) ([]Recipient, bool) {
	var refs []interrupt.Ref
	switch e.Type {
	case interrupt.EventReminded:
		var r interrupt.Reminded
		if json.Unmarshal(e.Payload, &r) != nil {
			return nil, false
		}
		refs = r.Recipients
	case interrupt.EventEscalated:
		var x interrupt.Escalated
		if json.Unmarshal(e.Payload, &x) != nil {
			return nil, false
		}
		refs = x.To
	default:
		return nil, false
	}
	out := make([]Recipient, len(refs))
	for i, r := range refs {
		out[i] = Recipient{Kind: r.Kind, Ref: r.Ref}
	}
	return out, true
}

// displayOf is how the request of interrupt id in commit c asked it to be shown, if it did.
func displayOf(c runlog.Commit, id string) *interrupt.Display {
	for _, ev := range c.Events {
		if ev.Type == interrupt.EventRequested && ev.InterruptID == id {
			return ev.Display
		}
	}
	return nil
}

// For is what e's delivery to s, requested by commit c, notifies: for an approval, its
// audience; for a clarification, the principals its audience names (asked); and the links to
// the page. A plain link holds no credential: it is for everyone the delivery is for, who sign
// in on the page. A subscription with signed links gets, for an
// approval only its approversList binds, one link per principal recipient holding a token that
// decides as that principal; for an approval any one vote of anyone releases, one such link per
// ref its audience names, that ref as the principal; and so for a clarification, which anyone
// holding a link answers. The other recipients (groups, roles,
// untyped refs of a bound approval: people behind a ref are known only to the identity
// provider) get the plain link, never a bearer token handed to a channel; so do all of them
// once LinkTTL has passed. No signed link is minted for the requester (it could not decide), and
// none without a principal: such a link decides as whoever holds it, the requester too, so an
// open approval without an audience gets the plain link, whose sign-in names the approver
// (docs/design.md, "Who may decide"). A signed link is a function of the interrupt, its
// principal and the active key, so every attempt to deliver the event carries the same link.
// Other events get nothing.
func (l Links) For(ctx context.Context, s Subscription, c runlog.Commit, e runlog.Envelope, now time.Time) (Notice, error) {
	at := c.At
	if to, ok := followedUp(e); ok {
		// A reminder or an escalation: for its recipients, with the page's plain link.
		base := strings.TrimSuffix(l.BaseURL, "/") + "/approve/"
		return Notice{Audience: to, Links: []Link{{URL: base + url.PathEscape(e.RunID) + "/" + url.PathEscape(e.InterruptID), For: to}}}, nil
	}
	p, ok := carriesLinks(e)
	if !ok {
		return Notice{}, nil
	}
	var deadline time.Time
	if p.TimeoutMs > 0 {
		deadline = at.Add(time.Duration(p.TimeoutMs) * time.Millisecond)
		if !deadline.After(now) {
			return Notice{}, nil // past its deadline: nothing to decide any more
		}
	}
	n := Notice{Deadline: deadline}
	switch p.Kind {
	case interrupt.KindApproval:
		n.Audience = audience(p.Data)
	case interrupt.KindClarification:
		n.Audience = asked(displayOf(c, e.InterruptID))
	}
	base := strings.TrimSuffix(l.BaseURL, "/") + "/approve/"
	plain := Link{URL: base + url.PathEscape(e.RunID) + "/" + url.PathEscape(e.InterruptID), For: n.Audience}
	if !deadline.IsZero() {
		plain.ExpiresAt = deadline.UTC().Format(runlog.TimeFormat)
	}
	exp := at.Add(LinkTTL)
	if !deadline.IsZero() && deadline.Before(exp) {
		exp = deadline
	}
	d := p.Data
	// Nobody decides what they requested: the requester's own subscription gets the plain link.
	// A token carries no memberships, so where a group or role field is named it decides nothing.
	if s.ApprovalLinks != LinksSigned || l.Keys == nil || (c.By != "" && c.By == s.CreatedBy) ||
		len(d.ApproverGroupRefs)+len(d.ApproverRoleRefs) > 0 || !exp.After(now) {
		n.Links = []Link{plain}
		return n, nil
	}
	var signed []Recipient
	plain.For = nil
	// Any one vote of anyone releases it: every ref of its audience may decide, as that ref.
	anyone := len(d.ApproversList) == 0 && d.RequiredApprovals <= 1
	for _, r := range n.Audience {
		switch {
		case r.Ref == c.By:
			// the requester: nothing to decide, no link
		case r.Kind == interrupt.RefPrincipal || anyone:
			signed = append(signed, r)
		default:
			plain.For = append(plain.For, r)
		}
	}
	for _, who := range signed {
		tok, c, err := token.Sign(ctx, l.Keys, token.Claims{
			Tenant: s.Tenant, RunID: e.RunID, NodeID: e.NodeID, InterruptID: e.InterruptID,
			Intent: token.IntentResolve, Sub: who.Ref, IssuedAt: at.UnixMilli(), ExpiresAt: exp.UnixMilli(),
			JTI: linkID(s.Tenant, e.RunID, e.InterruptID, who.Ref),
		})
		if err != nil {
			return Notice{}, err
		}
		link := Link{Principal: who.Ref, URL: base + tok, ExpiresAt: time.UnixMilli(c.ExpiresAt).UTC().Format(runlog.TimeFormat)}
		link.For = []Recipient{who}
		n.Links = append(n.Links, link)
	}
	if len(plain.For) > 0 || len(n.Links) == 0 {
		n.Links = append(n.Links, plain) // no link of one person decides it: its approvers sign in
	}
	return n, nil
}

// linkID is a signed link's token id: one per interrupt and principal, so that the votes of one
// link, however often delivered, count once.
func linkID(tenant, runID, interruptID, principal string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + runID + "\x00" + interruptID + "\x00" + principal))
	return "lnk" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

// body renders a delivery in the subscription's format.
func body(format string, e runlog.Envelope, n Notice) ([]byte, error) {
	if format == FormatSlack {
		return slackMessage(e, n)
	}
	return runlog.Marshal(Message{Type: e.Type, Timestamp: e.At, Data: e, Audience: n.Audience, Links: n.Links})
}
