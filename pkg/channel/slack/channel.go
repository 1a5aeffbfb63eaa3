package slack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// Format is the subscription format Slack's channel posts: a Block Kit message for a Slack
// incoming webhook.
const Format = "slack"

// AppReader reads a tenant's Slack app (Store).
type AppReader interface {
	SlackApp(ctx context.Context, tenant string) (App, error)
}

// Channel posts a tenant's notices to Slack as Block Kit messages (outbound.Channel): the
// audience mentioned where their contacts name Slack ids, and an approval's Approve and Reject
// where the tenant registered an app whose clicks come back (Interactions) and a click may
// decide the interrupt. Build once per process; safe for concurrent use.
type Channel struct {
	// Contacts say which Slack user or user group each ref of an audience is; nil mentions no
	// one.
	Contacts ContactReader
	// Apps say whether a tenant has a Slack app; nil: none has, and no message offers a
	// decision.
	Apps AppReader
	// Keys seal the buttons' values; nil (a deployment without a keyring) offers no decision.
	Keys token.Keys
}

// Format is Format.
func (*Channel) Format() string { return Format }

// Render is e as a Block Kit message.
func (ch *Channel) Render(ctx context.Context, tenant string, c runlog.Commit, e runlog.Envelope, n outbound.Notice, now time.Time) ([]byte, error) {
	mentions, err := ch.mentions(ctx, tenant, n.Audience)
	if err != nil {
		return nil, err
	}
	decisions, err := ch.decisions(ctx, tenant, c, e, now)
	if err != nil {
		return nil, err
	}
	return message(e, n, decisions, mentions)
}

// decisions are the Approve and Reject buttons of e's message: for the request of an approval
// still open, offering them, that a chat click may decide (interrupt.Deciders.Accepts), of a
// tenant with a Slack app. None otherwise.
func (ch *Channel) decisions(ctx context.Context, tenant string, c runlog.Commit, e runlog.Envelope, now time.Time) ([]slackgo.BlockElement, error) {
	if ch.Apps == nil || ch.Keys == nil || e.Type != interrupt.EventRequested {
		return nil, nil
	}
	in := runlog.RequestedIn(c, e.InterruptID)
	if in == nil || !in.Deciders.Accepts(interrupt.ViaChat) ||
		(!in.Deadline.IsZero() && !in.Deadline.After(now)) {
		return nil, nil
	}
	switch _, err := ch.Apps.SlackApp(ctx, tenant); {
	case errors.Is(err, ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("the tenant's Slack app: %w", err)
	}
	all, err := DecisionButtons(ctx, ch.Keys, Button{Tenant: tenant, RunID: e.RunID, InterruptID: e.InterruptID})
	if err != nil {
		return nil, err
	}
	var offered []slackgo.BlockElement
	for _, b := range all {
		if btn, ok := b.(*slackgo.ButtonBlockElement); ok && slices.ContainsFunc(in.Payload.Data.Actions, func(a interrupt.Action) bool { return ActionID(a) == btn.ActionID }) {
			offered = append(offered, b)
		}
	}
	return offered, nil
}

// mentions are the Slack ids of the audience's refs whose contacts name one: a member id for a
// principal, a user group for a group or a role. A ref no contact can have (one named only in
// audience, whose kind is not known) is named, not mentioned.
func (ch *Channel) mentions(ctx context.Context, tenant string, audience []outbound.Recipient) (map[outbound.Recipient]string, error) {
	if ch.Contacts == nil {
		return nil, nil
	}
	var out map[outbound.Recipient]string
	for _, r := range audience {
		if !(contacts.Key{Kind: r.Kind, Ref: r.Ref}).Valid() {
			continue
		}
		c, err := ch.Contacts.Contact(ctx, tenant, r.Kind, r.Ref)
		switch {
		case errors.Is(err, contacts.ErrNotFound):
			continue
		case err != nil:
			return nil, fmt.Errorf("the contact of %s %q: %w", r.Kind, r.Ref, err)
		case c.Slack != "":
			if out == nil {
				out = map[outbound.Recipient]string{}
			}
			out[r] = c.Slack
		}
	}
	return out, nil
}
