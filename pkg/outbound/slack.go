package outbound

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Slack's limits on what a message carries (Block Kit reference): a text object holds at most
// 3000 characters, a button's text 75; an actions block at most 25 elements.
const (
	slackTextMax    = 3000
	slackButtonText = 75
	slackButtons    = 25
)

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

// plain is text Slack shows as it is: a plain_text object is neither formatted (a title's
// *bold* stays asterisks) nor parsed for mrkdwn's entities, so it needs no escaping, and is cut
// to Slack's limit as the characters it shows.
func plain(s string) *slackTextObj {
	return &slackTextObj{Type: "plain_text", Text: truncate(s, slackTextMax)}
}

// slackMessage renders an event as a Slack incoming-webhook message: what happened, to which
// artifact, where in which run, and for an approval a "Review" button per link. Every text is
// plain: run ids and payload strings are whoever requested the interrupt's words, and must
// neither format nor turn into mrkdwn links. A button only opens the approval page; nothing
// decides on a click that a link unfurler could make.
func slackMessage(e runlog.Envelope, n Notice) ([]byte, error) {
	links := n.Links
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
	blocks := []slackBlock{{Type: "section", Text: plain(headline)}}
	var about []string
	if p.Data.Title != "" {
		about = append(about, p.Data.Title)
	}
	if a := strings.TrimSpace(p.Data.ArtifactType + " " + p.Data.ArtifactID); a != "" {
		about = append(about, a)
	}
	if len(about) > 0 {
		blocks = append(blocks, slackBlock{Type: "section", Text: plain(strings.Join(about, "\n"))})
	}
	if len(n.Audience) > 0 {
		refs := make([]string, len(n.Audience))
		for i, r := range n.Audience {
			refs[i] = r.Ref
			if r.Kind == interrupt.RefGroup || r.Kind == interrupt.RefRole {
				refs[i] = r.Kind + " " + r.Ref
			}
		}
		blocks = append(blocks, slackBlock{Type: "context", Elements: []any{plain("For " + strings.Join(refs, ", "))}})
	}
	blocks = append(blocks, slackBlock{Type: "context", Elements: []any{plain(fmt.Sprintf("node %s · seq %d · %s", e.NodeID, e.Seq, e.At))}})
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
	}{Text: truncate(headline, slackTextMax), Blocks: blocks})
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
