package slackapp

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
	"github.com/slack-go/slack"
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

// valuePrefix starts every button value; macContext starts what its MAC covers, so that no
// token of the keyring's, whose MAC covers "ow2.", is ever a button's and no button a token.
const (
	valuePrefix = "isb1"
	macContext  = "interrupt-host slack button\x00"
	// maxValue is Slack's bound of a button's value.
	maxValue = 2000
)

// ErrButton refuses a value the host did not make: malformed, under an unknown key, or whose
// MAC does not verify.
var ErrButton = errors.New("slackapp: the button's value is not the host's")

// Seal makes b's button value, isb1.<kid>.<payload>.<mac>: the payload base64url JSON, the MAC an
// HMAC-SHA256 under the keyring's active key. Whoever holds the channel's incoming webhook can
// post a message whose buttons reach the app too; a value only the host can make keeps such a
// message from deciding anything, or one interrupt's button from deciding another.
func Seal(ctx context.Context, keys token.Keys, b Button) (string, error) {
	kid, key, err := keys.Active(ctx)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(b)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	head := valuePrefix + "." + kid + "." + enc.EncodeToString(payload)
	return head + "." + enc.EncodeToString(mac(key, head)), nil
}

// Open verifies a button's value and answers what it names.
func Open(ctx context.Context, keys token.Keys, v string) (Button, error) {
	parts := strings.Split(v, ".")
	if len(v) > maxValue || len(parts) != 4 || parts[0] != valuePrefix || !token.ValidKid(parts[1]) {
		return Button{}, ErrButton
	}
	enc := base64.RawURLEncoding
	sum, err := enc.Strict().DecodeString(parts[3])
	if err != nil {
		return Button{}, ErrButton
	}
	key, err := keys.Key(ctx, parts[1])
	if errors.Is(err, token.ErrUnknownKid) {
		return Button{}, ErrButton
	}
	if err != nil {
		return Button{}, err
	}
	if !hmac.Equal(sum, mac(key, strings.Join(parts[:3], "."))) {
		return Button{}, ErrButton
	}
	payload, err := enc.Strict().DecodeString(parts[2])
	var b Button
	if err != nil || json.Unmarshal(payload, &b) != nil || !runlog.ValidID(b.Tenant) || !runlog.ValidID(b.RunID) || !runlog.ValidID(b.InterruptID) {
		return Button{}, ErrButton
	}
	return b, nil
}

func mac(key []byte, head string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(macContext))
	m.Write([]byte(head))
	return m.Sum(nil)
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
func DecisionButtons(ctx context.Context, keys token.Keys, b Button) ([]slack.BlockElement, error) {
	var out []slack.BlockElement
	for _, d := range []struct {
		action interrupt.Action
		label  string
		style  slack.Style
	}{{interrupt.ActionAccept, "Approve", slack.StylePrimary}, {interrupt.ActionReject, "Reject", slack.StyleDanger}} {
		b.Action = d.action
		v, err := Seal(ctx, keys, b)
		if err != nil {
			return nil, err
		}
		btn := slack.NewButtonBlockElement(ActionID(d.action), v, slack.NewTextBlockObject(slack.PlainTextType, d.label, false, false))
		btn.Style = d.style
		out = append(out, btn)
	}
	return out, nil
}
