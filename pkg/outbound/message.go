package outbound

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
	"github.com/interrupthost/interrupthost/pkg/words"
)

// EventID is a delivery's webhook-id: the event's place in its run's log, the same on every
// attempt, so a receiver dedupes on it.
func EventID(e runlog.Envelope) string {
	return fmt.Sprintf("%s:%d:%d", e.RunID, e.Seq, e.Index)
}

// Link is an approval-page link in a delivery (docs/engines.md, "Outbound events": approval links).
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
// resolves to people and notifies, typed by the interrupt's deciders (interrupt.Deciders).
type Recipient = interrupt.Ref

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
	// Title is what a channel's sentence names the interrupt by (its title, else its artifact),
	// filled for a channel's delivery only (Deliverer.about); "" when unknown.
	Title string
	// Call is, for an approval that allows a call, the call in words (words.WillCall): each
	// medium renders it, its values isolated (words.Sentence.Plain).
	Call words.Sentence
	// StandIns are the delegates the audience gained in their delegators' place (Deliverer:
	// a delegation in force), each also in Audience.
	StandIns []StandIn
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
	return p, decidedOnPage(p.Kind)
}

// decidedOnPage reports whether interrupts of kind k are decided on the approval page, and so
// notified with its links.
func decidedOnPage(k interrupt.Kind) bool {
	return k == interrupt.KindApproval || k == interrupt.KindClarification
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
	return refs, true
}

// For is what e's delivery to s, requested by commit c, notifies: whom the interrupt's deciders
// tell (interrupt.Deciders.Audience), and the links to the page. A plain link holds no
// credential: it is for everyone the delivery is for, who sign in on the page. A subscription
// with signed links gets one link per recipient the deciders let hold one
// (interrupt.Deciders.Signable: a principal the rules admit by name alone, never the requester),
// holding a token that decides as that principal; the other recipients (groups, roles, and
// everyone of an approval whose rules bind by membership: people behind a ref are known only to
// the identity provider) get the plain link, never a bearer token handed to a channel; so do
// all of them once LinkTTL has passed, and every recipient of the requester's own subscription.
// A signed link is a function of the interrupt, its principal and the active key, so every
// attempt to deliver the event carries the same link. Other events get nothing.
func (l Links) For(ctx context.Context, s Subscription, c runlog.Commit, e runlog.Envelope, now time.Time) (Notice, error) {
	at := c.At
	base := strings.TrimSuffix(l.BaseURL, "/") + "/approve/"
	page := base + url.PathEscape(e.RunID) + "/" + url.PathEscape(e.InterruptID)
	if to, ok := followedUp(e); ok {
		// A reminder or an escalation: for its recipients, with the page's plain link.
		return Notice{Audience: to, Links: []Link{{URL: page, For: to}}}, nil
	}
	if e.Type != interrupt.EventRequested {
		return Notice{}, nil
	}
	in := runlog.RequestedIn(c, e.InterruptID) // the payload parsed once, with its deciders
	if in == nil || !decidedOnPage(in.Payload.Kind) {
		return Notice{}, nil
	}
	if !in.Deadline.IsZero() && !in.Deadline.After(now) {
		return Notice{}, nil // past its deadline: nothing to decide any more
	}
	n := Notice{Deadline: in.Deadline, Audience: in.Deciders.Audience}
	if tc := in.ToolCall; tc != nil {
		who := ""
		if in.Display != nil {
			who = in.Display.RequesterName
		}
		n.Call = words.WillCall(who, tc.Name, tc.Arguments)
		if tc.Policy != nil {
			// Whom it asks was the tenant's rule, not the caller's choice: every channel says so.
			n.Call = append(n.Call, words.Said(", asked under "+tc.Policy.Said()))
		}
	}
	plain := Link{URL: page, For: n.Audience}
	if !in.Deadline.IsZero() {
		plain.ExpiresAt = in.Deadline.UTC().Format(runlog.TimeFormat)
	}
	exp := at.Add(LinkTTL)
	if !in.Deadline.IsZero() && in.Deadline.Before(exp) {
		exp = in.Deadline
	}
	// Nobody decides what they requested: the requester's own subscription gets the plain link.
	if s.ApprovalLinks != LinksSigned || l.Keys == nil || (c.By != "" && c.By == s.CreatedBy) || !exp.After(now) {
		n.Links = []Link{plain}
		return n, nil
	}
	plain.For = nil
	for _, r := range n.Audience {
		if r.Kind == interrupt.RefPrincipal && r.Ref == in.Deciders.Requester {
			continue // nothing to decide: no link
		}
		if !in.Deciders.Signable(r) {
			plain.For = append(plain.For, r)
			continue
		}
		claims := token.Claims{
			Tenant: s.Tenant, RunID: e.RunID, NodeID: e.NodeID, InterruptID: e.InterruptID,
			Intent: token.IntentResolve, Sub: r.Ref, IssuedAt: at.UnixMilli(), ExpiresAt: exp.UnixMilli(),
		}
		claims.JTI = linkID(claims)
		tok, claims, err := token.Sign(ctx, l.Keys, claims)
		if err != nil {
			return Notice{}, err
		}
		n.Links = append(n.Links, Link{Principal: r.Ref, URL: base + tok, ExpiresAt: time.UnixMilli(claims.ExpiresAt).UTC().Format(runlog.TimeFormat), For: []Recipient{r}})
	}
	if len(plain.For) > 0 || len(n.Links) == 0 {
		n.Links = append(n.Links, plain) // no link of one person decides it: its approvers sign in
	}
	return n, nil
}

// linkID is the token id of a signed link of claims: one per interrupt (its tenant, run and id)
// and principal (the subject), so that the votes of one link, however often delivered, count
// once.
func linkID(c token.Claims) string {
	sum := sha256.Sum256([]byte(c.Tenant + "\x00" + c.RunID + "\x00" + c.InterruptID + "\x00" + c.Sub))
	return "lnk" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}
