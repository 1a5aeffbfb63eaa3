package slack

import (
	"context"
	"errors"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
	slackgo "github.com/slack-go/slack"
)

// Button is what a decision button's value names: one interrupt of one tenant, and the action
// it records.
type Button struct {
	Tenant      string           `json:"t"`
	RunID       string           `json:"r"`
	InterruptID string           `json:"i"`
	Action      interrupt.Action `json:"a"`
}

// Action ids of the decision buttons, which the app's clicks name.
const (
	ActionAccept = "interrupt.accept"
	ActionReject = "interrupt.reject"
)

// buttonSeal makes and opens the buttons' values; its context keeps any token of the keyring's,
// and any other sealed value, from being a button's.
var buttonSeal = token.Seal{Prefix: "isb1", Purpose: "interrupt-host slack button", Max: maxValue}

// maxValue is Slack's bound of a button's value.
const maxValue = 2000

// ErrButton refuses a value the host did not make: malformed, under an unknown key, or whose
// MAC does not verify.
var ErrButton = errors.New("slackapp: the button's value is not the host's")

// Seal makes b's button value, isb1.<kid>.<payload>.<mac> (token.Seal). Whoever holds the
// channel's incoming webhook can post a message whose buttons reach the app too; a value only
// the host can make keeps such a message from deciding anything, or one interrupt's button from
// deciding another.
func Seal(ctx context.Context, keys token.Keys, b Button) (string, error) {
	return buttonSeal.Make(ctx, keys, b)
}

// Open verifies a button's value and answers what it names.
func Open(ctx context.Context, keys token.Keys, v string) (Button, error) {
	var b Button
	err := buttonSeal.Open(ctx, keys, v, &b)
	switch {
	case errors.Is(err, token.ErrNotSealed):
		return Button{}, ErrButton
	case err != nil:
		return Button{}, err
	case !runlog.ValidID(b.Tenant) || !runlog.ValidID(b.RunID) || !runlog.ValidID(b.InterruptID):
		return Button{}, ErrButton
	}
	return b, nil
}

// ActionID is the action id of the button that records a; "" for an action no button records.
func ActionID(a interrupt.Action) string {
	switch a {
	case interrupt.ActionAccept:
		return ActionAccept
	case interrupt.ActionReject:
		return ActionReject
	}
	return ""
}

// DecisionButtons are an approval's Approve and Reject buttons, for the interrupt b names (its
// Action is set per button), each with a value Seal makes; the outbound Slack message puts them
// beside Review.
func DecisionButtons(ctx context.Context, keys token.Keys, b Button) ([]slackgo.BlockElement, error) {
	var out []slackgo.BlockElement
	for _, d := range []struct {
		action interrupt.Action
		label  string
		style  slackgo.Style
	}{{interrupt.ActionAccept, "Approve", slackgo.StylePrimary}, {interrupt.ActionReject, "Reject", slackgo.StyleDanger}} {
		b.Action = d.action
		v, err := Seal(ctx, keys, b)
		if err != nil {
			return nil, err
		}
		btn := slackgo.NewButtonBlockElement(ActionID(d.action), v, slackgo.NewTextBlockObject(slackgo.PlainTextType, d.label, false, false))
		btn.Style = d.style
		out = append(out, btn)
	}
	return out, nil
}
