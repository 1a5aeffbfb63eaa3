package client

import (
	"context"
	"encoding/json"
	"net/http"
)

// ToolCall is the exact call an approval allows (InterruptRequest.ToolCall): a tool's name and
// its arguments, a JSON object. An accepted outcome answers the call as approved (OutcomeOf)
// and a receipt that whoever makes the call redeems once (Redeem).
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// ReceiptTTLMs is how long after the decision the receipt redeems; 0 means 15 minutes.
	ReceiptTTLMs int64 `json:"receiptTtlMs,omitempty"`
}

// ApprovedCall is a call as people approved it: the arguments asked, or as an approver edited
// them, with the SHA-256 (lowercase hex) of their RFC 8785 canonical JSON.
type ApprovedCall struct {
	Name            string          `json:"name"`
	Arguments       json.RawMessage `json:"arguments"`
	ArgumentsDigest string          `json:"argumentsDigest"`
}

// OutcomeVote is one counted vote as an outcome lists it.
type OutcomeVote struct {
	Principal string `json:"principal"`
	// OnBehalfOf is the approver whose place a delegate's vote filled.
	OnBehalfOf string `json:"onBehalfOf,omitempty"`
	Action     string `json:"action"`
	Feedback   string `json:"feedback,omitempty"`
}

// InterruptOutcome is what became of one interrupt as it stands now (OutcomeOf): the document
// MCP's get_outcome answers.
type InterruptOutcome struct {
	RunID       string `json:"runId"`
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
	Kind        string `json:"kind"`
	// Status is pending, resolved, expired, cancelled or completed (its run completed first).
	Status      string          `json:"status"`
	Action      string          `json:"action,omitempty"`
	DecidedBy   string          `json:"decidedBy,omitempty"`
	DecidedAt   string          `json:"decidedAt,omitempty"`
	Feedback    string          `json:"feedback,omitempty"`
	Votes       []OutcomeVote   `json:"votes,omitempty"`
	Answers     json.RawMessage `json:"answers,omitempty"`
	AnsweredBy  string          `json:"answeredBy,omitempty"`
	ResumeValue json.RawMessage `json:"resumeValue,omitempty"`
	// ApprovedCall and Receipt are an accepted call's; Redeemed its receipt's redemption.
	ApprovedCall     *ApprovedCall `json:"approvedCall,omitempty"`
	Receipt          string        `json:"receipt,omitempty"`
	ReceiptExpiresAt string        `json:"receiptExpiresAt,omitempty"`
	Redeemed         *struct {
		At string `json:"at"`
		By string `json:"by"`
	} `json:"redeemed,omitempty"`
	URL string `json:"url"`
}

// OutcomeOf reads what became of interrupt interruptID of run runID now, without waiting (scope
// runs:read): an accepted call's outcome carries its approved call and receipt.
func (c *Client) OutcomeOf(ctx context.Context, runID, interruptID string) (InterruptOutcome, error) {
	var out InterruptOutcome
	err := c.do(ctx, http.MethodGet, "/runs/"+esc(runID)+"/outcomes/"+esc(interruptID), nil, &out)
	return out, err
}

// Redemption is a receipt spent: the call approved, who approved it and when, who redeemed it
// and when.
type Redemption struct {
	RunID       string        `json:"runId"`
	NodeID      string        `json:"nodeId"`
	InterruptID string        `json:"interruptId"`
	ToolCall    ApprovedCall  `json:"toolCall"`
	ApprovedBy  string        `json:"approvedBy,omitempty"`
	DecidedAt   string        `json:"decidedAt,omitempty"`
	Votes       []OutcomeVote `json:"votes"`
	RedeemedBy  string        `json:"redeemedBy"`
	RedeemedAt  string        `json:"redeemedAt"`
	Seq         int64         `json:"seq"`
}

// Redeem spends receipt for the call name(arguments), once (scope receipts:redeem): make the
// call only when it succeeds. A *Problem says why not: receipt_spent (redeemed before;
// its detail says by whom and when), call_differs (another call than approved: nothing spent),
// receipt_expired, not_found (not a receipt of the caller's tenant), conflict (its run ended).
func (c *Client) Redeem(ctx context.Context, receipt, name string, arguments json.RawMessage) (Redemption, error) {
	in := struct {
		Receipt  string `json:"receipt"`
		ToolCall struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCall"`
	}{Receipt: receipt}
	in.ToolCall.Name, in.ToolCall.Arguments = name, arguments
	var out Redemption
	err := c.do(ctx, http.MethodPost, "/receipts/redeem", in, &out)
	return out, err
}
