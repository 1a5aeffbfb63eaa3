package host

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Outcome is what became of one interrupt, as a requester waiting on it reads it (an agent
// over MCP, pkg/mcp).
type Outcome struct {
	RunID, NodeID, InterruptID string
	Kind                       interrupt.Kind
	// Status is the interrupt's now: pending, resolved, expired (its deadline passed, whether
	// or not the sweep recorded it yet) or cancelled (its run ended first: RunEnded says how).
	Status   interrupt.Status
	RunEnded interrupt.RunStatus
	// ResumeValue is the resolution's value; ResolvedBy who resolved it, the host's own record
	// (the commit's author), "" for a run checkpointed before it was kept.
	ResumeValue json.RawMessage
	ResolvedBy  string
	// RequestedBy is who requested it (runlog.Interrupt.RequestedBy): a caller that reads only
	// what it asked (a person through the agents' client) reads no other outcome.
	RequestedBy string
	// Votes are an approval's counted votes, in order (runlog.Interrupt.CountedVotes).
	Votes []interrupt.Vote
	// DecidedAt is when it was resolved (zero while it is not).
	DecidedAt time.Time
	// ApprovedCall is the call people approved, for an approval that asked one and was
	// accepted; Receipt its receipt (Signer.InterruptOutcome), Redeemed its redemption once
	// recorded.
	ApprovedCall *interrupt.ApprovedCall
	Receipt      *Receipt
	Redeemed     *runlog.Redemption
}

// InterruptOutcome reads the interrupt interruptID of the caller's run as it stands, with one
// read of the run from its newest checkpoint, as every read of a run: polling it costs the
// same on a run of any length. Another tenant's run, and an interrupt the run does not hold,
// answer 404.
func (h *Host) InterruptOutcome(ctx context.Context, p interrupt.Principal, runID, interruptID string) (Outcome, error) {
	o, _, err := h.outcome(ctx, p, runID, interruptID)
	return o, err
}

// outcome is InterruptOutcome, with the interrupt it read.
func (h *Host) outcome(ctx context.Context, p interrupt.Principal, runID, interruptID string) (Outcome, *runlog.Interrupt, error) {
	_, st, err := h.loadRun(ctx, p, runID, runlog.Ref{Kind: runlog.RefInterrupt, Name: interruptID}, runlog.Ref{Kind: runlog.RefReceipt, Name: interruptID})
	if err != nil {
		return Outcome{}, nil, err
	}
	if !st.Exists() {
		return Outcome{}, nil, interrupt.Errorf(interrupt.CodeNotFound, "no run %s", runID)
	}
	in := st.ByID(interruptID)
	if in == nil {
		return Outcome{}, nil, interrupt.Errorf(interrupt.CodeNotFound, "no interrupt %s in run %s", interruptID, runID)
	}
	o := Outcome{
		RunID: runID, NodeID: in.NodeID, InterruptID: in.ID, Kind: in.Payload.Kind, Status: in.StatusAt(h.now()),
		RunEnded: st.Ended, ResumeValue: in.ResumeValue, ResolvedBy: in.Decider(), RequestedBy: in.RequestedBy, Votes: in.CountedVotes(),
		DecidedAt: in.DecidedAt(), ApprovedCall: in.ApprovedCall(), Redeemed: st.Redeemed(in.ID),
	}
	return o, in, nil
}

// OutcomeDocument is an interrupt's outcome as its requester reads it: what get_outcome answers
// over MCP and GET /runs/{runId}/outcomes/{interruptId} over REST, in one shape. Who decided is
// the host's record (the releasing vote's principal, the resolving commit's author); the
// decider's own decidedBy, an opaque label, stays in resumeValue.
type OutcomeDocument struct {
	RunID       string `json:"runId"`
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
	Kind        string `json:"kind"`
	Status      string `json:"status" jsonschema:"pending, resolved, expired, cancelled or completed (its run ended first)"`
	// Action, DecidedBy and Feedback are an approval's decision (the vote that released it).
	Action    string `json:"action,omitempty" jsonschema:"a decided approval's action: accept, reject, refine or edit-accept"`
	DecidedBy string `json:"decidedBy,omitempty" jsonschema:"the principal whose vote released it, as the host recorded it"`
	DecidedAt string `json:"decidedAt,omitempty" jsonschema:"when it was decided: the host's time of the resolution (the decider's decidedAt for one resolved before the host kept it)"`
	Feedback  string `json:"feedback,omitempty" jsonschema:"the decider's comment"`
	Votes     []Vote `json:"votes,omitempty" jsonschema:"an approval's counted votes, in order"`
	// Answers and AnsweredBy are an answered question's.
	Answers     map[string]any `json:"answers,omitempty" jsonschema:"an answered question's answers, by question id"`
	AnsweredBy  string         `json:"answeredBy,omitempty" jsonschema:"the principal who answered, as the host recorded it"`
	ResumeValue any            `json:"resumeValue,omitempty" jsonschema:"the resume value as recorded"`
	// ApprovedCall, Receipt and its expiry are an accepted call's (interrupt.ToolCall).
	ApprovedCall     *CallDocument `json:"approvedCall,omitempty" jsonschema:"the call as approved (edits included), for an approval that asked one and was accepted: make this call, and no other"`
	Receipt          string        `json:"receipt,omitempty" jsonschema:"the approved call's receipt: whoever makes the call redeems it once, for this call alone (POST /receipts/redeem), before making it"`
	ReceiptExpiresAt string        `json:"receiptExpiresAt,omitempty" jsonschema:"when the receipt stops redeeming"`
	Redeemed         *Redeemed     `json:"redeemed,omitempty" jsonschema:"the receipt's redemption, once recorded"`
	URL              string        `json:"url" jsonschema:"the page the people asked decide on"`
}

// Vote is one counted vote of an approval, as its requester reads it.
type Vote struct {
	Principal string `json:"principal"`
	// OnBehalfOf is the delegator a delegate voted for (interrupt.Vote.OnBehalfOf).
	OnBehalfOf string `json:"onBehalfOf,omitempty"`
	Action     string `json:"action"`
	Feedback   string `json:"feedback,omitempty"`
}

// CallDocument is an approved call as a requester reads it: its arguments an object (numbers as
// written), its digest the SHA-256 of their canonical JSON (interrupt.ArgumentsDigest).
type CallDocument struct {
	Name            string         `json:"name"`
	Arguments       map[string]any `json:"arguments"`
	ArgumentsDigest string         `json:"argumentsDigest" jsonschema:"lowercase hex SHA-256 of the arguments' RFC 8785 canonical JSON"`
}

// VotesOf are counted votes as a requester reads them: who, what, with what comment.
func VotesOf(votes []interrupt.Vote) []Vote {
	out := []Vote{}
	for _, v := range votes {
		out = append(out, Vote{Principal: v.Principal, OnBehalfOf: v.OnBehalfOf, Action: string(v.Action), Feedback: decisionOf(v.ResumeValue).Feedback})
	}
	return out
}

// PagePath is the path, under the API's base URL, of the page where people decide interrupt
// interruptID of run runID: its link without a credential, which signs them in.
func PagePath(runID, interruptID string) string {
	return "/approve/" + url.PathEscape(runID) + "/" + url.PathEscape(interruptID)
}

// Redeemed is a receipt's redemption as a requester reads it.
type Redeemed struct {
	At string `json:"at"`
	By string `json:"by"`
}

// CallDocumentOf is c as a requester reads it.
func CallDocumentOf(c interrupt.ApprovedCall) *CallDocument {
	args, _ := decode(c.Arguments).(map[string]any)
	return &CallDocument{Name: c.Name, Arguments: args, ArgumentsDigest: c.ArgumentsDigest}
}

// Document is o as its requester reads it, with url the page the people asked decide on.
func (o Outcome) Document(url string) OutcomeDocument {
	out := OutcomeDocument{RunID: o.RunID, NodeID: o.NodeID, InterruptID: o.InterruptID, Kind: string(o.Kind), Status: string(o.Status), URL: url}
	if o.Status == interrupt.StatusCancelled && o.RunEnded == interrupt.RunCompleted {
		out.Status = "completed"
	}
	if len(o.Votes) > 0 {
		out.Votes = VotesOf(o.Votes)
	}
	if o.Status != interrupt.StatusResolved {
		return out
	}
	out.ResumeValue = decode(o.ResumeValue)
	if !o.DecidedAt.IsZero() {
		out.DecidedAt = o.DecidedAt.UTC().Format(runlog.TimeFormat)
	}
	d := decisionOf(o.ResumeValue)
	switch o.Kind {
	case interrupt.KindApproval:
		out.Action, out.Feedback = d.Action, d.Feedback
		out.DecidedBy = o.ResolvedBy
		if n := len(o.Votes); n > 0 {
			out.DecidedBy = o.Votes[n-1].Principal
		}
		out.DecidedBy = cmp.Or(out.DecidedBy, d.DecidedBy)
	case interrupt.KindClarification:
		out.Answers, out.AnsweredBy = d.Answers, cmp.Or(o.ResolvedBy, d.DecidedBy)
	}
	if o.ApprovedCall != nil {
		out.ApprovedCall = CallDocumentOf(*o.ApprovedCall)
	}
	if o.Receipt != nil {
		out.Receipt, out.ReceiptExpiresAt = o.Receipt.Token, o.Receipt.ExpiresAt.UTC().Format(runlog.TimeFormat)
	}
	if r := o.Redeemed; r != nil {
		out.Redeemed = &Redeemed{At: r.At.UTC().Format(runlog.TimeFormat), By: r.By}
	}
	return out
}

// decisionValue is what a document reads of a resume value: an approval's decision, or a
// clarification's answers and the label of who answered.
type decisionValue struct {
	Action    string         `json:"action"`
	DecidedBy string         `json:"decidedBy"`
	Feedback  string         `json:"feedback"`
	Answers   map[string]any `json:"answers"`
}

func decisionOf(value json.RawMessage) decisionValue {
	var d decisionValue
	if len(value) > 0 {
		_ = json.Unmarshal(value, &d)
	}
	return d
}

// decode is a JSON value as a document carries it, numbers as written.
func decode(value json.RawMessage) any {
	d := json.NewDecoder(bytes.NewReader(value))
	d.UseNumber()
	var v any
	if len(value) == 0 || d.Decode(&v) != nil {
		return nil
	}
	return v
}
