package teams

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
	"github.com/interrupthost/interrupthost/pkg/words"
)

// The verbs of a card's Action.Execute buttons, which the bot's invokes name.
const (
	VerbAccept = "interrupt.accept"
	VerbReject = "interrupt.reject"
	// VerbRefresh is the card's refresh: it answers the card as it now stands and records
	// nothing.
	VerbRefresh = "interrupt.refresh"
)

// ContentType is an Adaptive Card's, in an attachment and in an invoke's answer.
const ContentType = "application/vnd.microsoft.card.adaptive"

// Aim is what a card's sealed data names: one interrupt of one tenant, and the action a
// button records ("" for the refresh).
type Aim struct {
	Tenant      string           `json:"t"`
	RunID       string           `json:"r"`
	InterruptID string           `json:"i"`
	Action      interrupt.Action `json:"a,omitempty"`
}

// dataSeal makes and opens the cards' data; its purpose keeps any token of the keyring's, a
// Slack button's value and any other sealed value from being a card's.
var dataSeal = token.Seal{Prefix: "itc1", Purpose: "interrupt-host teams card", Max: 2000}

// ErrData refuses data the host did not make.
var ErrData = errors.New("teams: the card's data is not the host's")

// Seal makes a's data. Whoever can post a card to a conversation the bot is in can make one
// whose buttons invoke the bot; without the keyring they cannot make the data, so such a card
// decides nothing, and one button's data under another verb is refused.
func Seal(ctx context.Context, keys token.Keys, a Aim) (string, error) {
	return dataSeal.Make(ctx, keys, a)
}

// Open verifies a card's data and answers what it names.
func Open(ctx context.Context, keys token.Keys, v string) (Aim, error) {
	var a Aim
	err := dataSeal.Open(ctx, keys, v, &a)
	switch {
	case errors.Is(err, token.ErrNotSealed):
		return Aim{}, ErrData
	case err != nil:
		return Aim{}, err
	case !runlog.ValidID(a.Tenant) || !runlog.ValidID(a.RunID) || !runlog.ValidID(a.InterruptID):
		return Aim{}, ErrData
	}
	return a, nil
}

// Verb is the verb of the button that records a; "" for an action no button records.
func Verb(a interrupt.Action) string {
	switch a {
	case interrupt.ActionAccept:
		return VerbAccept
	case interrupt.ActionReject:
		return VerbReject
	}
	return ""
}

// view is what a card shows of an interrupt, from its request (a delivery) or as a decision
// left it (an invoke's answer).
type view struct {
	Headline string
	// About are the title, the artifact and the description: what is asked.
	About []string
	Call  string
	// For are the deciders or the audience, as refs.
	For      []string
	RunID    string
	Deadline time.Time
	// Status is the line of the votes so far or the outcome.
	Status string
	// Decide are the actions offered as Action.Execute, each with its sealed data; Refresh the
	// refresh's data ("" for none).
	Decide  []decision
	Refresh string
	// Review is the approval page.
	Review string
}

type decision struct {
	Action interrupt.Action
	Data   string
}

// about reads the words a request's payload carries for people.
func about(raw json.RawMessage) []string {
	var p struct {
		Data struct {
			Title        string `json:"title"`
			Description  string `json:"description"`
			ArtifactType string `json:"artifactType"`
			ArtifactID   string `json:"artifactId"`
		} `json:"data"`
	}
	_ = json.Unmarshal(raw, &p) // a payload without these fields shows without them
	var out []string
	if p.Data.Title != "" {
		out = append(out, p.Data.Title)
	}
	if a := strings.TrimSpace(p.Data.ArtifactType + " " + p.Data.ArtifactID); a != "" {
		out = append(out, a)
	}
	if p.Data.Description != "" {
		out = append(out, p.Data.Description)
	}
	return out
}

// pending says the votes so far of a request still waiting: "alice accepted · 1 of 2
// approvals".
func pending(votes []interrupt.Vote, t interrupt.Tally) string {
	var parts []string
	for _, v := range votes {
		verb, ok := words.Decided(string(v.Action))
		if !ok {
			verb = string(v.Action)
		}
		parts = append(parts, v.Principal+" "+strings.ToLower(verb))
	}
	if t.Required > 1 {
		parts = append(parts, fmt.Sprintf("%d of %d approvals", t.Approvals, t.Required))
	}
	return cmp.Or(strings.Join(parts, " · "), "Waiting for a decision")
}

// maxText bounds a text block: Teams refuses a message over 28 KiB whole, and a card carries a
// few.
const maxText = 2000

func cut(s string) string {
	if r := []rune(s); len(r) > maxText {
		return string(r[:maxText-1]) + "…"
	}
	return s
}

// card is v as an Adaptive Card v1.4. Every text is plain: TextBlocks render a subset of
// Markdown, so a payload's words are escaped and can neither format nor link.
func card(v view) map[string]any {
	text := func(s string, extra map[string]any) map[string]any {
		b := map[string]any{"type": "TextBlock", "text": escape(cut(s)), "wrap": true}
		for k, x := range extra {
			b[k] = x
		}
		return b
	}
	body := []any{text(v.Headline, map[string]any{"weight": "Bolder", "size": "Medium"})}
	for _, a := range v.About {
		body = append(body, text(a, nil))
	}
	if v.Call != "" {
		body = append(body, text(v.Call, map[string]any{"fontType": "Monospace"}))
	}
	var facts []any
	if len(v.For) > 0 {
		facts = append(facts, map[string]any{"title": "For", "value": escape(cut(strings.Join(v.For, ", ")))})
	}
	facts = append(facts, map[string]any{"title": "Run", "value": escape(v.RunID)})
	if !v.Deadline.IsZero() {
		facts = append(facts, map[string]any{"title": "Decide by", "value": v.Deadline.UTC().Format("2006-01-02 15:04 UTC")})
	}
	body = append(body, map[string]any{"type": "FactSet", "facts": facts},
		text(v.Status, map[string]any{"id": "interrupt.status", "weight": "Bolder", "separator": true}))
	var actions []any
	for _, d := range v.Decide {
		style, title := "positive", "Approve"
		if d.Action == interrupt.ActionReject {
			style, title = "destructive", "Reject"
		}
		actions = append(actions, map[string]any{"type": "Action.Execute", "title": title, "verb": Verb(d.Action), "style": style,
			"data": map[string]any{"v": d.Data}})
	}
	if v.Review != "" {
		actions = append(actions, map[string]any{"type": "Action.OpenUrl", "title": "Review", "url": v.Review})
	}
	c := map[string]any{"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "version": "1.4", "body": body}
	if len(actions) > 0 {
		c["actions"] = actions
	}
	if v.Refresh != "" {
		c["refresh"] = map[string]any{"action": map[string]any{"type": "Action.Execute", "title": "Refresh", "verb": VerbRefresh, "data": map[string]any{"v": v.Refresh}}}
	}
	return c
}

// escape keeps a TextBlock's subset of Markdown (bold, italics, links) from reading s: a
// backslash before each character that makes emphasis or a link, which the renderers honour.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
