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
	// Principal is who a signed link's token resolves as; "" for a plain link, and for a signed
	// one of an approval that names no approvers (the page then asks who decides).
	Principal string `json:"principal,omitempty"`
	URL       string `json:"url"`
	// ExpiresAt is a signed link's expiry, or a plain link's interrupt's deadline; "" for a
	// plain link of an interrupt without one.
	ExpiresAt string `json:"expiresAt,omitempty"`
}

// Message is a Standard Webhooks delivery's body: the event as list-events returns it, under
// the convention's type and timestamp.
type Message struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      runlog.Envelope `json:"data"`
	Links     []Link          `json:"links,omitempty"`
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

// For makes the links of e's delivery to s, requested by commit c: a plain link to the page, or, for a
// subscription with signed links, an approval's links holding tokens, one per principal of
// approversList (one without principal when any one vote of anyone releases it; the plain link
// when no one person's link could vote, or once LinkTTL has passed). A signed link is a function of the interrupt, its principal and the active key,
// so every attempt to deliver the event carries the same link. Other events get none.
func (l Links) For(ctx context.Context, s Subscription, c runlog.Commit, e runlog.Envelope, now time.Time) ([]Link, error) {
	at := c.At
	p, ok := carriesLinks(e)
	if !ok {
		return nil, nil
	}
	var deadline time.Time
	if p.TimeoutMs > 0 {
		deadline = at.Add(time.Duration(p.TimeoutMs) * time.Millisecond)
		if !deadline.After(now) {
			return nil, nil // past its deadline: nothing to decide any more
		}
	}
	base := strings.TrimSuffix(l.BaseURL, "/") + "/approve/"
	plain := Link{URL: base + url.PathEscape(e.RunID) + "/" + url.PathEscape(e.InterruptID)}
	if !deadline.IsZero() {
		plain.ExpiresAt = deadline.UTC().Format(runlog.TimeFormat)
	}
	// Nobody decides what they requested: the requester's own subscription gets the plain link.
	if s.ApprovalLinks != LinksSigned || l.Keys == nil || p.Kind != interrupt.KindApproval || (c.By != "" && c.By == s.CreatedBy) {
		return []Link{plain}, nil
	}
	exp := at.Add(LinkTTL)
	if !deadline.IsZero() && deadline.Before(exp) {
		exp = deadline
	}
	principals := p.Data.ApproversList
	if len(principals) == 0 && p.Data.RequiredApprovals <= 1 && len(p.Data.ApproverGroupRefs) == 0 && len(p.Data.ApproverRoleRefs) == 0 {
		principals = []string{""} // any one vote of anyone releases it
	}
	if len(principals) == 0 || !exp.After(now) {
		return []Link{plain}, nil // no link of one person decides it: its approvers sign in
	}
	links := make([]Link, 0, len(principals))
	for _, who := range principals {
		tok, c, err := token.Sign(ctx, l.Keys, token.Claims{
			Tenant: s.Tenant, RunID: e.RunID, NodeID: e.NodeID, InterruptID: e.InterruptID,
			Intent: token.IntentResolve, Sub: who, IssuedAt: at.UnixMilli(), ExpiresAt: exp.UnixMilli(),
			JTI: linkID(s.Tenant, e.RunID, e.InterruptID, who),
		})
		if err != nil {
			return nil, err
		}
		links = append(links, Link{Principal: who, URL: base + tok, ExpiresAt: time.UnixMilli(c.ExpiresAt).UTC().Format(runlog.TimeFormat)})
	}
	return links, nil
}

// linkID is a signed link's token id: one per interrupt and principal, so that the votes of one
// link, however often delivered, count once.
func linkID(tenant, runID, interruptID, principal string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + runID + "\x00" + interruptID + "\x00" + principal))
	return "lnk" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

// body renders a delivery in the subscription's format.
func body(format string, e runlog.Envelope, links []Link) ([]byte, error) {
	if format == FormatSlack {
		return slackMessage(e, links)
	}
	return runlog.Marshal(Message{Type: e.Type, Timestamp: e.At, Data: e, Links: links})
}
