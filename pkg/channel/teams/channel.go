package teams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// Format is the subscription format Teams' channel posts: an Adaptive Card in a message
// activity, to a conversation the tenant's bot is in.
const Format = "teams"

// BotReader reads a tenant's Teams bot (Store).
type BotReader interface {
	TeamsBot(ctx context.Context, tenant string) (Bot, error)
}

// Channel posts a tenant's notices to Teams as Adaptive Cards (outbound.Channel): an
// approval's Approve and Reject (Action.Execute) where the tenant registered a bot, whose
// invokes come back to Messages, and a click may decide the interrupt
// (interrupt.Deciders.Accepts(ViaChat)); else Review, the approval page. Build once per
// process; safe for concurrent use.
type Channel struct {
	// Bots say whether a tenant has a bot; nil: none has, and no card offers a decision.
	Bots BotReader
	// Keys seal the cards' data; nil (a deployment without a keyring) offers no decision.
	Keys token.Keys
	// Connector posts the cards as the tenant's bot (Send); nil: this deployment posts none.
	Connector *Connector
	// Conversations decide which conversations a subscription may post to; checked again at
	// each send.
	Conversations Conversations
	// Activities keep the activity posted of each interrupt, which later events update; nil
	// posts each event as a card of its own.
	Activities Activities
	// Runs read a run as it now stands, for the card put in place of the one posted.
	Runs RunReader
}

// Format is Format.
func (*Channel) Format() string { return Format }

// Render is e as a message activity carrying one Adaptive Card.
func (ch *Channel) Render(ctx context.Context, tenant string, c runlog.Commit, e runlog.Envelope, n outbound.Notice, now time.Time) ([]byte, error) {
	v := view{Headline: headline(e, n.Title), RunID: e.RunID, Deadline: n.Deadline}
	for _, r := range n.Audience {
		v.For = append(v.For, r.Ref)
	}
	for _, l := range n.Links {
		if l.Principal == "" {
			v.Review = l.URL
			break
		}
	}
	if e.Type == interrupt.EventRequested {
		if in := runlog.RequestedIn(c, e.InterruptID); in != nil {
			v.About = about(in.Raw)
			v.Status = pending(nil, interrupt.Tally{Required: in.Deciders.Quorum})
			if n.Call.Plain() != "" {
				v.Call = n.Call.Plain()
			}
			open := in.Deadline.IsZero() || in.Deadline.After(now)
			if open {
				var err error
				if v.Decide, v.Refresh, err = ch.decisions(ctx, tenant, e.RunID, e.InterruptID, in.Deciders, in.Payload.Data.Actions); err != nil {
					return nil, err
				}
			}
		}
	}
	return activity(v)
}

// decisions are the Action.Execute buttons of an approval a chat click may decide, of a tenant
// with a bot, and the refresh's data; none otherwise.
func (ch *Channel) decisions(ctx context.Context, tenant, runID, interruptID string, d interrupt.Deciders, actions []interrupt.Action) ([]decision, string, error) {
	if ch.Bots == nil || ch.Keys == nil || !d.Accepts(interrupt.ViaChat) {
		return nil, "", nil
	}
	switch _, err := ch.Bots.TeamsBot(ctx, tenant); {
	case errors.Is(err, ErrNotFound):
		return nil, "", nil
	case err != nil:
		return nil, "", fmt.Errorf("the tenant's Teams bot: %w", err)
	}
	return sealed(ctx, ch.Keys, Aim{Tenant: tenant, RunID: runID, InterruptID: interruptID}, actions)
}

// sealed are aim's buttons for the actions offered (accept and reject, in that order) and its
// refresh's data.
func sealed(ctx context.Context, keys token.Keys, aim Aim, actions []interrupt.Action) ([]decision, string, error) {
	var out []decision
	for _, a := range []interrupt.Action{interrupt.ActionAccept, interrupt.ActionReject} {
		if !slices.Contains(actions, a) {
			continue
		}
		aim.Action = a
		data, err := Seal(ctx, keys, aim)
		if err != nil {
			return nil, "", err
		}
		out = append(out, decision{Action: a, Data: data})
	}
	aim.Action = ""
	refresh, err := Seal(ctx, keys, aim)
	if err != nil {
		return nil, "", err
	}
	return out, refresh, nil
}

// headline says what happened, naming the interrupt by its title where the deliverer found one.
func headline(e runlog.Envelope, title string) string {
	named := "a request in run " + e.RunID
	if title != "" {
		named = "“" + title + "”"
	}
	switch e.Type {
	case interrupt.EventDelegationSet, interrupt.EventDelegationEnded:
		var d interrupt.DelegationChanged
		_ = json.Unmarshal(e.Payload, &d)
		if e.Type == interrupt.EventDelegationEnded {
			return d.Principal + " is back: " + d.Delegate + " no longer decides in their place"
		}
		return d.Principal + " is away from " + d.From.UTC().Format("2 January") + " until " + d.Until.UTC().Format("2 January") + ": " + d.Delegate + " decides in their place"
	case interrupt.EventRequested:
		return "Decision needed: " + named
	case interrupt.EventVoted:
		return "A vote on " + named
	case interrupt.EventResolved:
		return "Decided: " + named
	case interrupt.EventExpired:
		return "Expired without a decision: " + named
	}
	return e.Type + ": " + named
}

// activity is the message activity that carries v's card.
func activity(v view) ([]byte, error) {
	return json.Marshal(map[string]any{
		"type":        "message",
		"summary":     cut(v.Headline),
		"attachments": []any{map[string]any{"contentType": ContentType, "content": card(v)}},
	})
}

// Channel sends its cards itself, through the Bot Connector, as the tenant's bot.
var _ outbound.Sender = (*Channel)(nil)
