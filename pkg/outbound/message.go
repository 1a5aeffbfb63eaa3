package outbound

import (
	"context"
	"encoding/json"
	"fmt"
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

// Link is an approval-page link for one approver: opening it shows the approval, deciding there
// resolves as Principal (README, "Outbound events": approval links).
type Link struct {
	// Principal is who the link's token resolves as; "" when the approval names no approvers
	// (the page then asks who decides).
	Principal string `json:"principal,omitempty"`
	URL       string `json:"url"`
	ExpiresAt string `json:"expiresAt"`
}

// Message is a Standard Webhooks delivery's body: the event as list-events returns it, under
// the convention's type and timestamp.
type Message struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      runlog.Envelope `json:"data"`
	Links     []Link          `json:"links,omitempty"`
}

// LinkTTL is how long an approval link works, at most: a mail may be read days later. It never
// outlives the approval's deadline.
const LinkTTL = 7 * 24 * time.Hour

// Links mints approval links. Keys nil mints none (a deployment without a keyring).
type Links struct {
	Keys token.Keys
	// BaseURL is the public base of the host's API, where /approve/{token} is served.
	BaseURL string
}

// carriesLinks reports whether a delivery of e carries approval links: the requested event of
// an approval (interrupt.requested, and its alias approval.requested).
func carriesLinks(e runlog.Envelope) bool {
	return e.Type == interrupt.EventRequested || e.Type == "approval.requested"
}

// For mints the links of an approval's requested event: one per principal of approversList,
// or one without principal when the approval has no list. Other events get none.
func (l Links) For(ctx context.Context, tenant string, at time.Time, e runlog.Envelope, now time.Time) ([]Link, error) {
	if l.Keys == nil || !carriesLinks(e) {
		return nil, nil
	}
	var p interrupt.Payload
	if err := json.Unmarshal(e.Payload, &p); err != nil || p.Kind != interrupt.KindApproval {
		return nil, nil
	}
	exp := now.Add(LinkTTL)
	if p.TimeoutMs > 0 {
		if deadline := at.Add(time.Duration(p.TimeoutMs) * time.Millisecond); deadline.Before(exp) {
			exp = deadline
		}
	}
	if !exp.After(now) {
		return nil, nil // past its deadline: nothing to decide any more
	}
	principals := p.Data.ApproversList
	if len(principals) == 0 {
		principals = []string{""}
	}
	links := make([]Link, 0, len(principals))
	for _, who := range principals {
		s, c, err := token.Mint(ctx, l.Keys, token.Claims{
			Tenant: tenant, RunID: e.RunID, NodeID: e.NodeID, InterruptID: e.InterruptID,
			Intent: token.IntentResolve, Sub: who, ExpiresAt: exp.UnixMilli(),
		}, now)
		if err != nil {
			return nil, err
		}
		links = append(links, Link{
			Principal: who, URL: strings.TrimSuffix(l.BaseURL, "/") + "/approve/" + s,
			ExpiresAt: time.UnixMilli(c.ExpiresAt).UTC().Format(runlog.TimeFormat),
		})
	}
	return links, nil
}

// body renders a delivery in the subscription's format.
func body(format string, e runlog.Envelope, links []Link) ([]byte, error) {
	if format == FormatSlack {
		return slackMessage(e, links)
	}
	return runlog.Marshal(Message{Type: e.Type, Timestamp: e.At, Data: e, Links: links})
}
