package jsonapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// getOutcome serves GET /runs/{runId}/outcomes/{interruptId}: what became of one interrupt, as
// get_outcome answers it over MCP, with an accepted call's receipt.
func (a *API) getOutcome(ctx context.Context, c *call) (reply, error) {
	if err := c.ReadRun(); err != nil {
		return reply{}, err
	}
	id, err := apigw.PathID(c.Req, "interruptId")
	if err != nil {
		return reply{}, err
	}
	o, err := a.tokens.InterruptOutcome(ctx, c.Principal, c.RunID, id)
	if err != nil {
		return reply{}, err
	}
	base, err := a.gw.BaseURL(c.Req)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: o.Document(base + host.PagePath(o.RunID, o.InterruptID))}, nil
}

// redeemReceipt serves POST /receipts/redeem {receipt, toolCall}: 200 with the redemption, once
// (host.Signer.RedeemReceipt says what else it answers).
func (a *API) redeemReceipt(ctx context.Context, c *call) (reply, error) {
	var body struct {
		Receipt  *string `json:"receipt"`
		ToolCall *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCall"`
	}
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	var absent []string
	if body.Receipt == nil {
		absent = append(absent, "receipt")
	}
	if body.ToolCall == nil {
		absent = append(absent, "toolCall")
	}
	if len(absent) > 0 {
		return reply{}, apigw.Missing(absent...)
	}
	r, err := a.tokens.RedeemReceipt(ctx, c.Principal, *body.Receipt, interrupt.ToolCall{Name: body.ToolCall.Name, Arguments: body.ToolCall.Arguments})
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: redemptionView(r)}, nil
}

// redemptionView is a redemption as the API answers it.
func redemptionView(r host.Redemption) any {
	out := struct {
		RunID       string             `json:"runId"`
		NodeID      string             `json:"nodeId"`
		InterruptID string             `json:"interruptId"`
		ToolCall    *host.CallDocument `json:"toolCall"`
		ApprovedBy  string             `json:"approvedBy,omitempty"`
		DecidedAt   string             `json:"decidedAt,omitempty"`
		Votes       []host.Vote        `json:"votes"`
		RedeemedBy  string             `json:"redeemedBy"`
		RedeemedAt  string             `json:"redeemedAt"`
		Seq         int64              `json:"seq"`
	}{
		RunID: r.RunID, NodeID: r.NodeID, InterruptID: r.InterruptID, ToolCall: host.CallDocumentOf(r.Call), ApprovedBy: r.ApprovedBy,
		Votes: host.VotesOf(r.Votes), RedeemedBy: r.RedeemedBy, RedeemedAt: r.RedeemedAt.UTC().Format(runlog.TimeFormat), Seq: r.Seq,
	}
	if !r.DecidedAt.IsZero() {
		out.DecidedAt = r.DecidedAt.UTC().Format(runlog.TimeFormat)
	}
	return out
}
