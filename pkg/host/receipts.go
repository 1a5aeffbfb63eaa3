package host

import (
	"context"
	"errors"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// receiptSeal makes and opens receipts: rc1.<kid>.<payload>.<mac> under the keyring, with a
// context no token, button value or other sealed value shares.
var receiptSeal = token.Seal{Prefix: "rc1", Purpose: "interrupt-host receipt", Max: 1024}

// receipt is what a receipt names: one approved call of one interrupt of one tenant's run, by its
// name and its arguments' digest, and when it stops redeeming (Unix milliseconds).
type receipt struct {
	Tenant      string `json:"t"`
	RunID       string `json:"r"`
	InterruptID string `json:"i"`
	Name        string `json:"n"`
	Digest      string `json:"d"`
	ExpiresAt   int64  `json:"x"`
}

// Receipt is an approved call's receipt as the outcome answers it.
type Receipt struct {
	Token     string
	ExpiresAt time.Time
}

// receiptOf is the receipt of in's approved call in tenant's run runID: the same one at every
// read while the keyring's active key stays (nothing random in it), nil for an interrupt with no
// approved call.
func (t *Signer) receiptOf(ctx context.Context, tenant, runID string, in *runlog.Interrupt) (*Receipt, error) {
	call := in.ApprovedCall()
	if call == nil {
		return nil, nil
	}
	expires := in.DecidedAt().Add(in.ToolCall.ReceiptTTL())
	s, err := receiptSeal.Make(ctx, t.keys, receipt{
		Tenant: tenant, RunID: runID, InterruptID: in.ID, Name: call.Name, Digest: call.ArgumentsDigest, ExpiresAt: expires.UnixMilli(),
	})
	if err != nil {
		return nil, err
	}
	return &Receipt{Token: s, ExpiresAt: expires}, nil
}

// InterruptOutcome is Host.InterruptOutcome with the receipt of an approved call: the outcome an
// agent reads over MCP or REST, whose executor redeems the receipt (RedeemReceipt).
func (t *Signer) InterruptOutcome(ctx context.Context, p interrupt.Principal, runID, interruptID string) (Outcome, error) {
	o, in, err := t.h.outcome(ctx, p, runID, interruptID)
	if err != nil || in == nil {
		return o, err
	}
	o.Receipt, err = t.receiptOf(ctx, p.Tenant, runID, in)
	return o, err
}

// Redemption is what a redeemed receipt answers: the call it was spent for, who approved it and
// when, who redeemed it and when.
type Redemption struct {
	RunID, NodeID, InterruptID string
	Call                       interrupt.ApprovedCall
	// ApprovedBy is who released the approval (the host's record); DecidedAt when.
	ApprovedBy string
	DecidedAt  time.Time
	Votes      []interrupt.Vote
	RedeemedBy string
	RedeemedAt time.Time
	Seq        int64
}

func (r Redemption) atSeq(seq int64) Redemption { r.Seq = seq; return r }

// RedeemReceipt spends the receipt for call, once: the executor of a call (or a gateway in front
// of its tool) redeems before it makes the call, and makes it only on success. The redemption is
// receipt.redeemed in the run's log, written under the log's condition, so of any number of
// concurrent redemptions exactly one succeeds.
//
// It answers CodeNotFound for a receipt the host did not make or another tenant's (the same
// answer: a caller learns nothing of other tenants), CodeReceiptExpired past its expiry,
// CodeCallDiffers for a call of another name or other arguments (compared by their canonical
// JSON, so member order and spacing do not matter; nothing is spent), CodeReceiptSpent once
// redeemed, and CodeConflict once its run ended (a cancelled run's approvals allow nothing).
func (t *Signer) RedeemReceipt(ctx context.Context, p interrupt.Principal, sealed string, call interrupt.ToolCall) (Redemption, error) {
	if fields := call.Check("/toolCall"); len(fields) > 0 {
		return Redemption{}, interrupt.Invalid("toolCall is not acceptable", fields...)
	}
	var rc receipt
	if err := receiptSeal.Open(ctx, t.keys, sealed, &rc); err != nil {
		if errors.Is(err, token.ErrNotSealed) {
			return Redemption{}, interrupt.Errorf(interrupt.CodeNotFound, "no such receipt")
		}
		return Redemption{}, err
	}
	if rc.Tenant != p.Tenant || !runlog.ValidID(rc.RunID) {
		return Redemption{}, interrupt.Errorf(interrupt.CodeNotFound, "no such receipt")
	}
	now := t.h.now()
	if now.UnixMilli() > rc.ExpiresAt {
		return Redemption{}, interrupt.Errorf(interrupt.CodeReceiptExpired, "the receipt expired at %s", time.UnixMilli(rc.ExpiresAt).UTC().Format(runlog.TimeFormat))
	}
	digest, err := interrupt.ArgumentsDigest(call.Arguments)
	if err != nil {
		return Redemption{}, err
	}
	if call.Name != rc.Name || digest != rc.Digest {
		return Redemption{}, interrupt.Errorf(interrupt.CodeCallDiffers, "the receipt approves another call (%s with arguments of digest %s): this one was not approved, and nothing was spent", rc.Name, rc.Digest)
	}
	k, st, err := t.h.loadRun(ctx, p, rc.RunID, runlog.Ref{Kind: runlog.RefInterrupt, Name: rc.InterruptID}, runlog.Ref{Kind: runlog.RefReceipt, Name: rc.InterruptID})
	if err != nil {
		return Redemption{}, err
	}
	return commit(ctx, t.h, k, st, p.Voter(), func(st *runlog.State) (decision[Redemption], error) {
		in := st.ByID(rc.InterruptID)
		approved := (*interrupt.ApprovedCall)(nil)
		if in != nil {
			approved = in.ApprovedCall()
		}
		if approved == nil || approved.ArgumentsDigest != rc.Digest {
			// A receipt the host made names an approved call of its run; the run no longer
			// holding it is a run whose id was taken again after it expired.
			return decision[Redemption]{}, interrupt.Errorf(interrupt.CodeNotFound, "no such receipt")
		}
		if r := st.Redeemed(in.ID); r != nil {
			return decision[Redemption]{}, interrupt.Errorf(interrupt.CodeReceiptSpent, "the receipt was redeemed at %s by %s", r.At.UTC().Format(runlog.TimeFormat), r.By)
		}
		if st.Ended != "" {
			return decision[Redemption]{}, interrupt.Errorf(interrupt.CodeConflict, "run %s is %s: its receipts redeem nothing", rc.RunID, st.Ended)
		}
		ev, err := runlog.NewEvent(interrupt.EventReceiptRedeemed, in.NodeID, in.ID, interrupt.Redeemed{
			NodeID: in.NodeID, InterruptID: in.ID, Name: approved.Name, ArgumentsDigest: approved.ArgumentsDigest, By: p.Subject,
		})
		return decision[Redemption]{events: []runlog.Event{ev}, answer: Redemption{
			RunID: rc.RunID, NodeID: in.NodeID, InterruptID: in.ID, Call: *approved, ApprovedBy: approvedBy(in), DecidedAt: in.DecidedAt(),
			Votes: in.CountedVotes(), RedeemedBy: p.Subject,
		}, prepare: []func(context.Context, *decision[Redemption], time.Time) error{
			func(_ context.Context, d *decision[Redemption], at time.Time) error {
				d.answer.RedeemedAt = at
				return nil
			},
		}}, err
	})
}

// approvedBy is who released in: the releasing vote's principal, else the resolving commit's
// author.
func approvedBy(in *runlog.Interrupt) string {
	if n := len(in.Votes); n > 0 {
		return in.Votes[n-1].Principal
	}
	return in.Decider()
}
