package slack

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	slackgo "github.com/slack-go/slack"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/words"
)

// Slack's limits on what a message carries (Block Kit reference): a text object holds at most
// 3000 characters, a button's text 75; an actions block at most 25 elements.
const (
	slackTextMax    = 3000
	slackButtonText = 75
	slackButtons    = 25
)

// plain is text Slack shows as it is: a plain_text object is neither formatted (a title's
// *bold* stays asterisks) nor parsed for mrkdwn's entities, so it needs no escaping, and is cut
// to Slack's limit as the characters it shows.
func plain(s string) *slackgo.TextBlockObject {
	return slackgo.NewTextBlockObject(slackgo.PlainTextType, truncate(s, slackTextMax), false, false)
}

// mrkdwn is text Slack formats: only for what the host writes itself (mentions, dates), never a
// payload's words, which go as plain text.
func mrkdwn(s string) *slackgo.TextBlockObject {
	return slackgo.NewTextBlockObject(slackgo.MarkdownType, s, false, false)
}

// mention is how a message mentions a ref's Slack id, which contacts.Request checked to be a
// member id (principal) or a user group id: <@U…> notifies the person, <!subteam^S…> the group.
func mention(r outbound.Recipient, id string) string {
	if r.Kind == interrupt.RefPrincipal {
		return "<@" + id + ">"
	}
	return "<!subteam^" + id + ">"
}

// message renders an event as a Slack incoming-webhook message: what happened, to which
// artifact, for whom (mentioning those whose contacts name a Slack id), in which run and by when,
// and for an approval a "Review" button per link, after its Approve and Reject buttons where the
// channel offers them (decisions). Every text from the run is plain: run ids and payload
// strings are whoever requested the interrupt's words, and must neither format nor turn into
// mrkdwn links. A Review button only opens the approval page; Approve and Reject post to the
// tenant's Slack app, signed by Slack, never a link an unfurler could follow.
func message(e runlog.Envelope, n outbound.Notice, decisions []slackgo.BlockElement, mentions map[outbound.Recipient]string) ([]byte, error) {
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
	headline := headline(e, p.Kind, n.Title)
	section := func(t *slackgo.TextBlockObject) slackgo.Block { return slackgo.NewSectionBlock(t, nil, nil) }
	blocks := []slackgo.Block{section(plain(headline))}
	var about []string
	if p.Data.Title != "" {
		about = append(about, p.Data.Title)
	}
	if a := strings.TrimSpace(p.Data.ArtifactType + " " + p.Data.ArtifactID); a != "" {
		about = append(about, a)
	}
	if len(about) > 0 {
		blocks = append(blocks, section(plain(strings.Join(about, "\n"))))
	}
	if len(n.Call) > 0 {
		// The call is what an Approve click allows: in a block of its own, whole, or the
		// message offers no decision and sends the reader to the page, which shows all of it.
		call := n.Call.Plain()
		if utf8.RuneCountInString(call) > slackTextMax {
			call, decisions = n.Call.PlainCut(slackTextMax-utf8.RuneCountInString(callCut))+callCut, nil
		}
		blocks = append(blocks, section(plain(call)))
	}
	if len(n.Audience) > 0 {
		refs := make([]string, len(n.Audience))
		var mentioned []string
		for i, r := range n.Audience {
			refs[i] = r.Ref
			if r.Kind == interrupt.RefGroup || r.Kind == interrupt.RefRole {
				refs[i] = r.Kind + " " + r.Ref
			}
			// Within Slack's limit of a text: a message over it is refused whole.
			if id, ok := mentions[r]; ok && len(strings.Join(append(mentioned, mention(r, id)), " ")) <= slackTextMax {
				mentioned = append(mentioned, mention(r, id))
			}
		}
		elements := []slackgo.MixedElement{plain("For " + strings.Join(refs, ", "))}
		if len(mentioned) > 0 {
			elements = append(elements, mrkdwn(strings.Join(mentioned, " ")))
		}
		blocks = append(blocks, slackgo.NewContextBlock("", elements...))
	}
	when := []slackgo.MixedElement{plain(fmt.Sprintf("Run %s · %s", e.RunID, e.At))}
	if !n.Deadline.IsZero() {
		// Each reader sees the deadline in their own time zone; the text after | is what a
		// client that cannot render dates shows.
		utc := n.Deadline.UTC()
		when = append(when, mrkdwn(fmt.Sprintf("Decide by <!date^%d^{date_short_pretty} at {time}|%s>", utc.Unix(), utc.Format("2006-01-02 15:04 UTC"))))
	}
	blocks = append(blocks, slackgo.NewContextBlock("", when...))
	if len(links)+len(decisions) > 0 {
		buttons := slices.Clone(decisions)
		for i, l := range links[:min(len(links), slackButtons-len(buttons))] {
			label := "Review"
			if l.Principal != "" {
				label = "Review as " + l.Principal
			}
			b := slackgo.NewButtonBlockElement(fmt.Sprintf("review-%d", i), "", plain(truncate(label, slackButtonText)))
			b.URL = l.URL
			buttons = append(buttons, b)
		}
		blocks = append(blocks, slackgo.NewActionBlock("", buttons...))
	}
	return runlog.Marshal(struct {
		Text   string         `json:"text"`
		Blocks slackgo.Blocks `json:"blocks"`
	}{Text: truncate(headline, slackTextMax), Blocks: slackgo.Blocks{BlockSet: blocks}})
}

// callCut ends a call too long for one Slack text; its message carries no decision buttons.
const callCut = " … (the call is longer than a message holds: read it whole, and decide, on its page)"

// headline says what happened in a sentence: who did what to which request, named by its title
// (isolated, so a title's bidirectional controls cannot reorder the sentence), or by its run
// where the notice does not know the title; an event the channel has no words for is named as
// it is.
func headline(e runlog.Envelope, kind interrupt.Kind, title string) string {
	named := "a request in run " + e.RunID
	if title != "" {
		named = "“" + words.Isolated(title) + "”"
	}
	switch e.Type {
	case interrupt.EventVoted, interrupt.EventAsked:
		var v interrupt.Vote
		_ = json.Unmarshal(e.Payload, &v) // a vote without these says less
		who := cmp.Or(words.Isolated(v.Principal), "someone")
		if v.OnBehalfOf != "" {
			who += ", for " + words.Isolated(v.OnBehalfOf)
		}
		if e.Type == interrupt.EventAsked {
			return who + " asked a question about " + named
		}
		verb, ok := words.Decided(string(v.Action))
		if !ok {
			verb = "decided"
		}
		s := who + " " + strings.ToLower(verb) + " " + named
		if v.Tally.Required > 1 {
			s += fmt.Sprintf(" · %d of %d approvals", v.Tally.Approvals, v.Tally.Required)
		}
		return s
	case interrupt.EventResolved:
		var r interrupt.Resolved
		_ = json.Unmarshal(e.Payload, &r)
		var value struct {
			Action    string `json:"action"`
			DecidedBy string `json:"decidedBy"`
		}
		_ = json.Unmarshal(r.ResumeValue, &value) // decidedBy may be an object: then unnamed
		outcome, ok := words.Decided(value.Action)
		if !ok {
			outcome = "Decided"
		}
		if value.DecidedBy != "" {
			outcome += " by " + words.Isolated(value.DecidedBy)
		}
		return outcome + ": " + named
	case interrupt.EventExpired:
		return "Expired without a decision: " + named
	case interrupt.EventReminded:
		return "Reminder: " + named + " still waits for a decision"
	case interrupt.EventEscalated:
		return "Escalated: " + named + " waits for a decision"
	case interrupt.EventRunCompleted:
		return "Run " + e.RunID + " completed"
	case interrupt.EventRunCancelled:
		return "Run " + e.RunID + " was cancelled"
	case interrupt.EventDelegationSet, interrupt.EventDelegationEnded:
		var d interrupt.DelegationChanged
		_ = json.Unmarshal(e.Payload, &d)
		who, delegate := words.Isolated(d.Principal), words.Isolated(d.Delegate)
		if e.Type == interrupt.EventDelegationEnded {
			return who + " is back: " + delegate + " no longer decides in their place"
		}
		return who + " is away from " + d.From.UTC().Format("2 January") + " until " + d.Until.UTC().Format("2 January") + ": " + delegate + " decides in their place"
	}
	if kind != "" {
		return fmt.Sprintf("%s requested in run %s", kind, e.RunID)
	}
	return fmt.Sprintf("%s in run %s", e.Type, e.RunID)
}
