package clicks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/slack-go/slack"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/slackapp"
	"github.com/interrupthost/interrupthost/pkg/words"
)

// statusBlock is the block id of the line the host adds to a message it updates: what the votes
// so far are, or what became of the request.
const statusBlock = "interrupt.status"

// updated is the message of blocks with o's status line.
func updated(o host.Opened, blocks slack.Blocks) *slack.WebhookMessage {
	closed := o.Status != interrupt.StatusPending
	status := closedSummary(o)
	if !closed {
		status = pendingSummary(o)
	}
	line := slack.NewSectionBlock(slack.NewTextBlockObject(slack.PlainTextType, truncate(status, 3000), false, false), nil, nil, slack.SectionBlockOptionBlockID(statusBlock))
	var out []slack.Block
	placed := false
	for _, b := range blocks.BlockSet {
		if b.ID() == statusBlock {
			continue
		}
		if a, ok := b.(*slack.ActionBlock); ok {
			if !placed {
				out, placed = append(out, line), true
			}
			if closed && a.Elements != nil {
				var kept []slack.BlockElement
				for _, e := range a.Elements.ElementSet {
					if btn, ok := e.(*slack.ButtonBlockElement); ok && (btn.ActionID == slackapp.ActionAccept || btn.ActionID == slackapp.ActionReject) {
						continue
					}
					kept = append(kept, e)
				}
				if len(kept) == 0 {
					continue
				}
				a = slack.NewActionBlock(a.BlockID, kept...)
			}
			out = append(out, a)
			continue
		}
		out = append(out, b)
	}
	if !placed {
		out = append(out, line)
	}
	return &slack.WebhookMessage{ReplaceOriginal: true, Text: status, Blocks: &slack.Blocks{BlockSet: out}}
}

// pendingSummary says the votes so far of a request still waiting: "alice accepted · 1 of 2
// approvals".
func pendingSummary(o host.Opened) string {
	var parts []string
	for _, v := range o.Votes {
		verb, ok := words.Decided(string(v.Action))
		if !ok {
			verb = string(v.Action)
		}
		parts = append(parts, v.Principal+" "+strings.ToLower(verb))
	}
	if t := o.Tally; t.Required > 1 {
		parts = append(parts, fmt.Sprintf("%d of %d approvals", t.Approvals, t.Required))
	}
	return cmp.Or(strings.Join(parts, " · "), "Waiting for a decision")
}

// closedSummary says what became of a request no longer pending: "Accepted by bob", "Rejected
// by alice: the PO is missing", "Expired without a decision".
func closedSummary(o host.Opened) string {
	switch o.Status {
	case interrupt.StatusResolved:
		var rv struct {
			Action   string `json:"action"`
			Feedback string `json:"feedback"`
		}
		_ = json.Unmarshal(o.Outcome, &rv) // a value without these members says less
		s, ok := words.Decided(rv.Action)
		if !ok {
			s = "Decided"
		}
		if o.DecidedBy != "" {
			s += " by " + o.DecidedBy
		}
		if rv.Feedback != "" {
			s += ": " + rv.Feedback
		}
		return s
	case interrupt.StatusExpired:
		return "Expired without a decision"
	case interrupt.StatusCancelled:
		return "Closed: its run ended"
	}
	return ""
}

// rejectModal is the callback id of the modal that asks a rejection's reason; reasonBlock and
// reasonInput name its one input.
const (
	rejectModal = "interrupt.reject.reason"
	reasonBlock = "reason"
	reasonInput = "reason"
	// maxMetadata is Slack's bound of a view's private_metadata.
	maxMetadata = 3000
)

// modalState is what the modal carries from the click to its submission, in its
// private_metadata: the button's value (verified again on submission), the response_url, and
// the message's blocks when they fit (else its text alone), to update it after the vote.
type modalState struct {
	Value       string          `json:"v"`
	ResponseURL string          `json:"u"`
	Blocks      json.RawMessage `json:"b,omitempty"`
	Text        string          `json:"t,omitempty"`
}

// askReason opens the modal asking a rejection's reason (views.open, with the tenant's bot
// token, within the click's trigger_id's 3 seconds).
func (x *Interactions) askReason(ctx context.Context, botToken string, cb slack.InteractionCallback, value string) error {
	st := modalState{Value: value, ResponseURL: cb.ResponseURL}
	if b, err := json.Marshal(cb.Message.Blocks.BlockSet); err == nil {
		st.Blocks = b
	}
	meta, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if len(meta) > maxMetadata {
		st.Blocks, st.Text = nil, truncate(cb.Message.Text, 1000)
		if meta, err = json.Marshal(st); err != nil {
			return err
		}
	}
	input := slack.NewPlainTextInputBlockElement(slack.NewTextBlockObject(slack.PlainTextType, "Why is it rejected?", false, false), reasonInput)
	input.Multiline = true
	input.MaxLength = 2000
	view := slack.ModalViewRequest{
		Type: slack.VTModal, CallbackID: rejectModal, PrivateMetadata: string(meta),
		Title:  slack.NewTextBlockObject(slack.PlainTextType, "Reject", false, false),
		Submit: slack.NewTextBlockObject(slack.PlainTextType, "Reject", false, false),
		Close:  slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewInputBlock(reasonBlock, slack.NewTextBlockObject(slack.PlainTextType, "Reason", false, false), nil, input),
		}},
	}
	opts := []slack.Option{slack.OptionHTTPClient(&http.Client{Timeout: SlackBudget})}
	if x.SlackAPI != "" {
		opts = append(opts, slack.OptionAPIURL(strings.TrimSuffix(x.SlackAPI, "/")+"/"))
	}
	ctx, cancel := context.WithTimeout(ctx, SlackBudget)
	defer cancel()
	if _, err := slack.New(botToken, opts...).OpenViewContext(ctx, cb.TriggerID, view); err != nil {
		return fmt.Errorf("slackapp: open the reason's modal: %w", err)
	}
	return nil
}

// submitReason serves the modal's submission: the rejection recorded with its reason, or the
// refusal shown in the modal; then the message updated.
func (x *Interactions) submitReason(ctx context.Context, tenant string, cb slack.InteractionCallback) Answer {
	var st modalState
	if json.Unmarshal([]byte(cb.View.PrivateMetadata), &st) != nil {
		return modalError("This form was not made by this host; nothing was recorded.")
	}
	var reason string
	if cb.View.State != nil {
		reason = strings.TrimSpace(cb.View.State.Values[reasonBlock][reasonInput].Value)
	}
	if reason == "" {
		a := modalError("Say why it is rejected.")
		a.Outcome = OutcomeAsked // asked again, not refused
		return a
	}
	b, err := x.button(ctx, tenant, st.Value, slackapp.ActionReject)
	var o host.Opened
	if err == nil {
		o, err = x.record(ctx, tenant, b, cb.User.ID, reason)
	}
	var r refusal
	if errors.As(err, &r) {
		return modalError(r.text)
	}
	if err != nil {
		x.log().ErrorContext(ctx, "slack click", "error", err.Error())
		return modalError("The host could not record your rejection just now; nothing was recorded. Try again.")
	}
	var blocks slack.Blocks
	if len(st.Blocks) == 0 || json.Unmarshal([]byte(`{"blocks":`+string(st.Blocks)+`}`), &blocks) != nil {
		blocks = slack.Blocks{BlockSet: []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.PlainTextType, cmp.Or(st.Text, "Approval"), false, false), nil, nil)}}
	}
	x.respond(ctx, st.ResponseURL, updated(o, blocks))
	return Answer{Outcome: OutcomeRecorded}
}

// modalError answers a modal's submission with text under its reason: the modal stays open.
func modalError(text string) Answer {
	b, _ := json.Marshal(slack.NewErrorsViewSubmissionResponse(map[string]string{reasonBlock: text}))
	return Answer{Body: b, Outcome: OutcomeRefused}
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
