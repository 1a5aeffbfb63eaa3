package slack

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	slackgo "github.com/slack-go/slack"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/words"
)

// statusBlock is the block id of the line the host adds to a message it updates: what the votes
// so far are, or what became of the request.
const statusBlock = "interrupt.status"

// updated is the message of blocks with o's status line.
func updated(o host.Opened, blocks slackgo.Blocks) *slackgo.WebhookMessage {
	closed := o.Status != interrupt.StatusPending
	status := closedSummary(o)
	if !closed {
		status = pendingSummary(o)
	}
	line := slackgo.NewSectionBlock(slackgo.NewTextBlockObject(slackgo.PlainTextType, truncate(status, 3000), false, false), nil, nil, slackgo.SectionBlockOptionBlockID(statusBlock))
	var out []slackgo.Block
	placed := false
	for _, b := range blocks.BlockSet {
		if b.ID() == statusBlock {
			continue
		}
		if a, ok := b.(*slackgo.ActionBlock); ok {
			if !placed {
				out, placed = append(out, line), true
			}
			if closed && a.Elements != nil {
				var kept []slackgo.BlockElement
				for _, e := range a.Elements.ElementSet {
					if btn, ok := e.(*slackgo.ButtonBlockElement); ok && (btn.ActionID == ActionAccept || btn.ActionID == ActionReject) {
						continue
					}
					kept = append(kept, e)
				}
				if len(kept) == 0 {
					continue
				}
				a = slackgo.NewActionBlock(a.BlockID, kept...)
			}
			out = append(out, a)
			continue
		}
		out = append(out, b)
	}
	if !placed {
		out = append(out, line)
	}
	return &slackgo.WebhookMessage{ReplaceOriginal: true, Text: status, Blocks: &slackgo.Blocks{BlockSet: out}}
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
func (x *Interactions) askReason(ctx context.Context, botToken string, cb slackgo.InteractionCallback, value string) error {
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
	input := slackgo.NewPlainTextInputBlockElement(slackgo.NewTextBlockObject(slackgo.PlainTextType, "Why is it rejected?", false, false), reasonInput)
	input.Multiline = true
	input.MaxLength = 2000
	view := slackgo.ModalViewRequest{
		Type: slackgo.VTModal, CallbackID: rejectModal, PrivateMetadata: string(meta),
		Title:  slackgo.NewTextBlockObject(slackgo.PlainTextType, "Reject", false, false),
		Submit: slackgo.NewTextBlockObject(slackgo.PlainTextType, "Reject", false, false),
		Close:  slackgo.NewTextBlockObject(slackgo.PlainTextType, "Cancel", false, false),
		Blocks: slackgo.Blocks{BlockSet: []slackgo.Block{
			slackgo.NewInputBlock(reasonBlock, slackgo.NewTextBlockObject(slackgo.PlainTextType, "Reason", false, false), nil, input),
		}},
	}
	opts := []slackgo.Option{slackgo.OptionHTTPClient(&http.Client{Timeout: SlackBudget})}
	if x.SlackAPI != "" {
		opts = append(opts, slackgo.OptionAPIURL(strings.TrimSuffix(x.SlackAPI, "/")+"/"))
	}
	ctx, cancel := context.WithTimeout(ctx, SlackBudget)
	defer cancel()
	if _, err := slackgo.New(botToken, opts...).OpenViewContext(ctx, cb.TriggerID, view); err != nil {
		return fmt.Errorf("slackapp: open the reason's modal: %w", err)
	}
	return nil
}

// submitReason serves the modal's submission: the rejection recorded with its reason, or the
// refusal shown in the modal; then the message updated.
func (x *Interactions) submitReason(ctx context.Context, tenant string, cb slackgo.InteractionCallback) Answer {
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
	b, err := x.button(ctx, tenant, st.Value, ActionReject)
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
	var blocks slackgo.Blocks
	if len(st.Blocks) == 0 || json.Unmarshal([]byte(`{"blocks":`+string(st.Blocks)+`}`), &blocks) != nil {
		blocks = slackgo.Blocks{BlockSet: []slackgo.Block{slackgo.NewSectionBlock(slackgo.NewTextBlockObject(slackgo.PlainTextType, cmp.Or(st.Text, "Approval"), false, false), nil, nil)}}
	}
	x.respond(ctx, st.ResponseURL, updated(o, blocks))
	return Answer{Outcome: OutcomeRecorded}
}

// modalError answers a modal's submission with text under its reason: the modal stays open.
func modalError(text string) Answer {
	b, _ := json.Marshal(slackgo.NewErrorsViewSubmissionResponse(map[string]string{reasonBlock: text}))
	return Answer{Body: b, Outcome: OutcomeRefused}
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
