package outbound

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Slack's limits on what a message carries (Block Kit reference): longer text is cut. A
// section's text (at most 3000 characters) is built of parts cut shorter than that.
const (
	slackButtonText = 75
	slackButtons    = 25
)

// slackText escapes the three characters Slack's mrkdwn reserves and cuts s to n characters.
func slackText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

type slackBlock struct {
	Type string        `json:"type"`
	Text *slackTextObj `json:"text,omitempty"`
	// Elements are text objects in a context block, buttons in an actions block.
	Elements []any `json:"elements,omitempty"`
}

type slackTextObj struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type slackElement struct {
	Type     string        `json:"type"`
	Text     *slackTextObj `json:"text,omitempty"`
	URL      string        `json:"url,omitempty"`
	ActionID string        `json:"action_id,omitempty"`
	Style    string        `json:"style,omitempty"`
}

// slackMessage renders an event as a Slack incoming-webhook message: what happened, to which
// artifact, where in which run, and for an approval one "Review" button per link. A button only
// opens the approval page; nothing decides on a click that a link unfurler could make.
func slackMessage(e runlog.Envelope, links []Link) ([]byte, error) {
	var p struct {
		Kind interrupt.Kind `json:"kind"`
		Data struct {
			Title        string `json:"title"`
			ArtifactType string `json:"artifactType"`
			ArtifactID   string `json:"artifactId"`
		} `json:"data"`
	}
	if e.Type == interrupt.EventRequested || strings.HasSuffix(e.Type, ".requested") {
		_ = json.Unmarshal(e.Payload, &p) // a payload without these fields renders without them
	}
	headline := fmt.Sprintf("%s in run %s", e.Type, e.RunID)
	if p.Kind != "" {
		headline = fmt.Sprintf("%s requested in run %s", p.Kind, e.RunID)
	}
	text := "*" + slackText(headline, 200) + "*"
	if p.Data.Title != "" {
		text += "\n" + slackText(p.Data.Title, 1000)
	}
	if p.Data.ArtifactType != "" || p.Data.ArtifactID != "" {
		text += "\n" + slackText(strings.TrimSpace(p.Data.ArtifactType+" "+p.Data.ArtifactID), 500)
	}
	context := fmt.Sprintf("node %s · seq %d · %s", e.NodeID, e.Seq, e.At)
	blocks := []slackBlock{
		{Type: "section", Text: &slackTextObj{Type: "mrkdwn", Text: text}},
		{Type: "context", Elements: []any{slackTextObj{Type: "mrkdwn", Text: slackText(context, 500)}}},
	}
	if len(links) > 0 {
		actions := slackBlock{Type: "actions"}
		for i, l := range links[:min(len(links), slackButtons)] {
			label := "Review"
			if l.Principal != "" {
				label = "Review as " + l.Principal
			}
			actions.Elements = append(actions.Elements, slackElement{
				Type: "button", Text: &slackTextObj{Type: "plain_text", Text: truncate(label, slackButtonText)},
				URL: l.URL, ActionID: fmt.Sprintf("review-%d", i),
			})
		}
		blocks = append(blocks, actions)
	}
	return runlog.Marshal(struct {
		Text   string       `json:"text"`
		Blocks []slackBlock `json:"blocks"`
	}{Text: slackText(headline, 200), Blocks: blocks})
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
