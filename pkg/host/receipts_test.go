package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// refund is the call the receipts' tests ask approval of.
var refund = interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{"order":"4471","amountCents":124000,"currency":"EUR"}`)}

var (
	executor = scoped("executor", "receipts:redeem")
	stranger = interrupt.Principal{Subject: "executor", Tenant: "globex", Scopes: []string{"receipts:redeem"}}
)

// approved requests approval of call from alice in run r1 and records her decision; it answers
// the tokens and the outcome as the requesting engine reads it.
func approved(t *testing.T, h *host.Host, call interrupt.ToolCall, resumeValue string) (*host.Signer, host.Outcome) {
	t.Helper()
	ctx := context.Background()
	tokens := hosttest.Tokens(h)
	view, _, err := h.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: "gate", Payload: approvalWith(`,"approversList":["alice"]`), ToolCall: &call})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Resolve(ctx, approver("alice"), "r1", "gate", decidedNow(resumeValue), nil); err != nil {
		t.Fatal(err)
	}
	o, err := tokens.InterruptOutcome(ctx, engine, "r1", view.InterruptID)
	if err != nil {
		t.Fatal(err)
	}
	return tokens, o
}

// TestReceipts: an accepted call's outcome names the call as approved and a receipt that redeems
// once, for that call alone, within its tenant and its life; a call approved nothing has none.
func TestReceipts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reordered := interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{ "currency":"EUR", "amountCents":1.24e5, "order":"4471" }`)}
	other := interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{"order":"4471","amountCents":999900,"currency":"EUR"}`)}
	renamed := interrupt.ToolCall{Name: "issue_refunds", Arguments: refund.Arguments}
	edited := interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{"order":"4471","amountCents":100000,"currency":"EUR"}`)}
	type try struct {
		by   interrupt.Principal
		call interrupt.ToolCall
		// want is an error code, or "" for a redemption.
		want interrupt.Code
	}
	tests := []struct {
		name     string
		decision string
		// args are the arguments approved; none for an outcome with no receipt.
		args  string
		tries []try
	}{
		{"accepted", `{"action":"accept"}`, string(refund.Arguments), []try{
			{executor, other, interrupt.CodeCallDiffers},
			{executor, renamed, interrupt.CodeCallDiffers},
			{stranger, refund, interrupt.CodeNotFound},
			{executor, reordered, ""},
			{executor, refund, interrupt.CodeReceiptSpent},
			{executor, other, interrupt.CodeCallDiffers},
		}},
		{"edited, then accepted", `{"action":"edit-accept","editedArtifactData":` + string(edited.Arguments) + `}`, string(edited.Arguments), []try{
			{executor, refund, interrupt.CodeCallDiffers},
			{executor, edited, ""},
			{executor, edited, interrupt.CodeReceiptSpent},
		}},
		{"rejected", `{"action":"reject"}`, "", nil},
		{"refined", `{"action":"refine","refineFeedback":{"scope":"whole","text":"less"}}`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, l := hosttest.MemHost(t)
			tokens, o := approved(t, h, refund, tt.decision)
			if tt.args == "" {
				if o.ApprovedCall != nil || o.Receipt != nil {
					t.Fatalf("a call not accepted has an approved call %v and a receipt %v", o.ApprovedCall, o.Receipt)
				}
				return
			}
			if o.ApprovedCall == nil || o.Receipt == nil {
				t.Fatalf("an accepted call has no approved call or receipt: %+v", o)
			}
			if !sameJSON(o.ApprovedCall.Arguments, json.RawMessage(tt.args)) || o.ApprovedCall.Name != "issue_refund" {
				t.Errorf("approved %s %s, want issue_refund %s", o.ApprovedCall.Name, o.ApprovedCall.Arguments, tt.args)
			}
			if want, _ := interrupt.ArgumentsDigest(json.RawMessage(tt.args)); o.ApprovedCall.ArgumentsDigest != want {
				t.Errorf("digest %s, want %s", o.ApprovedCall.ArgumentsDigest, want)
			}
			if !o.Receipt.ExpiresAt.Equal(hosttest.T0.Add(interrupt.DefaultReceiptTTL)) {
				t.Errorf("the receipt expires at %s, want the decision's time and 15 minutes", o.Receipt.ExpiresAt)
			}
			for i, try := range tt.tries {
				writes := l.Writes()
				r, err := tokens.RedeemReceipt(ctx, try.by, o.Receipt.Token, try.call)
				if code(err) != try.want {
					t.Fatalf("try %d: %v, want %q", i, err, try.want)
				}
				if try.want != "" {
					if l.Writes() != writes {
						t.Errorf("try %d: a refused redemption wrote", i)
					}
					continue
				}
				if r.ApprovedBy != "alice" || !r.DecidedAt.Equal(hosttest.T0) || r.RedeemedBy != "executor" || r.Call.ArgumentsDigest != o.ApprovedCall.ArgumentsDigest {
					t.Errorf("try %d: redemption %+v", i, r)
				}
				if n := hosttest.CountEvents(t, h, engine, "r1", interrupt.EventReceiptRedeemed); n != 1 {
					t.Errorf("%d receipt.redeemed events, want 1", n)
				}
			}
		})
	}
}

// TestAReceiptKeepsItsBounds: a receipt forged, past its life, or of a run ended since is
// refused, and so is a request whose call cannot be one.
func TestAReceiptKeepsItsBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("forged", func(t *testing.T) {
		t.Parallel()
		h, _ := hosttest.MemHost(t)
		tokens, o := approved(t, h, refund, `{"action":"accept"}`)
		parts := strings.Split(o.Receipt.Token, ".")
		parts[3] = strings.Repeat("A", len(parts[3]))
		for _, forged := range []string{strings.Join(parts, "."), "", "rc1.k1.e30.AAAA", o.Receipt.Token + "x"} {
			if _, err := tokens.RedeemReceipt(ctx, executor, forged, refund); code(err) != interrupt.CodeNotFound {
				t.Errorf("%q: %v, want not_found", forged, err)
			}
		}
	})
	t.Run("expired", func(t *testing.T) {
		t.Parallel()
		now := hosttest.T0
		var mu sync.Mutex
		h, _ := hosttest.MemHost(t, func(s *hosttest.Setup) {
			s.Env.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		})
		call := refund
		call.ReceiptTTLMs = 60_000
		tokens, o := approved(t, h, call, `{"action":"accept"}`)
		mu.Lock()
		now = now.Add(time.Minute + time.Millisecond)
		mu.Unlock()
		if _, err := tokens.RedeemReceipt(ctx, executor, o.Receipt.Token, refund); code(err) != interrupt.CodeReceiptExpired {
			t.Errorf("%v, want receipt_expired", err)
		}
	})
	t.Run("its run cancelled", func(t *testing.T) {
		t.Parallel()
		h, _ := hosttest.MemHost(t)
		tokens, o := approved(t, h, refund, `{"action":"accept"}`)
		if _, err := h.EndRun(ctx, engine, "r1", interrupt.RunCancelled, "changed our mind"); err != nil {
			t.Fatal(err)
		}
		if _, err := tokens.RedeemReceipt(ctx, executor, o.Receipt.Token, refund); code(err) != interrupt.CodeConflict {
			t.Errorf("%v, want conflict", err)
		}
	})
	t.Run("requests", func(t *testing.T) {
		t.Parallel()
		clarification := json.RawMessage(`{"kind":"clarification","key":"k","data":{"questions":[{"id":"q","question":"which?"}]}}`)
		for _, tt := range []struct {
			name    string
			payload json.RawMessage
			call    interrupt.ToolCall
			path    string
		}{
			{"a clarification", clarification, refund, "/toolCall"},
			{"a name no tool has", approvalWith(``), interrupt.ToolCall{Name: "issue refund", Arguments: refund.Arguments}, "/toolCall/name"},
			{"arguments no object", approvalWith(``), interrupt.ToolCall{Name: "x", Arguments: json.RawMessage(`[1]`)}, "/toolCall/arguments"},
			{"no arguments", approvalWith(``), interrupt.ToolCall{Name: "x"}, "/toolCall/arguments"},
			{"a number past doubles", approvalWith(``), interrupt.ToolCall{Name: "x", Arguments: json.RawMessage(`{"n":1e400}`)}, "/toolCall/arguments/n"},
			{"an id doubles round", approvalWith(``), interrupt.ToolCall{Name: "x", Arguments: json.RawMessage(`{"id":9007199254740993}`)}, "/toolCall/arguments/id"},
			{"a receipt of a millisecond", approvalWith(``), interrupt.ToolCall{Name: "x", Arguments: json.RawMessage(`{}`), ReceiptTTLMs: 1}, "/toolCall/receiptTtlMs"},
			{"a receipt past int64 nanoseconds", approvalWith(``), interrupt.ToolCall{Name: "x", Arguments: json.RawMessage(`{}`), ReceiptTTLMs: 18446744074710}, "/toolCall/receiptTtlMs"},
		} {
			h, l := hosttest.MemHost(t)
			_, _, err := h.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: "gate", Payload: tt.payload, ToolCall: &tt.call})
			if code(err) != interrupt.CodeValidation || !hasPath(err, tt.path) || l.Writes() != 0 {
				t.Errorf("%s: %v (%d writes), want validation_error at %s", tt.name, err, l.Writes(), tt.path)
			}
		}
	})
	t.Run("an edit of a call two approve", func(t *testing.T) {
		t.Parallel()
		h, l := hosttest.MemHost(t)
		if _, _, err := h.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: "gate", Payload: approvalWith(`,"requiredApprovals":2`), ToolCall: &refund}); err != nil {
			t.Fatal(err)
		}
		writes := l.Writes()
		_, err := h.Resolve(ctx, approver("alice"), "r1", "gate", decidedNow(`{"action":"edit-accept","editedArtifactData":{"order":"4471","amountCents":1,"currency":"EUR"}}`), nil)
		if code(err) != interrupt.CodeValidation || !hasPath(err, "/resumeValue/action") || l.Writes() != writes {
			t.Errorf("%v, want validation_error at /resumeValue/action, nothing written", err)
		}
	})
	t.Run("edited arguments no object", func(t *testing.T) {
		t.Parallel()
		h, _ := hosttest.MemHost(t)
		if _, _, err := h.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: "gate", Payload: approvalWith(``), ToolCall: &refund}); err != nil {
			t.Fatal(err)
		}
		_, err := h.Resolve(ctx, approver("alice"), "r1", "gate", decidedNow(`{"action":"edit-accept","editedArtifactData":"4471"}`), nil)
		if code(err) != interrupt.CodeValidation || !hasPath(err, "/resumeValue/editedArtifactData") {
			t.Errorf("%v, want validation_error at /resumeValue/editedArtifactData", err)
		}
	})
}

// TestOneRedemptionOfMany: of concurrent redemptions of one receipt, exactly one succeeds; the
// redemption is kept when its run is checkpointed, so it is never redeemed again.
func TestOneRedemptionOfMany(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := hosttest.MemHost(t)
	tokens, o := approved(t, h, refund, `{"action":"accept"}`)
	const racers = 8
	codes := make([]interrupt.Code, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			_, err := tokens.RedeemReceipt(ctx, executor, o.Receipt.Token, refund)
			codes[i] = code(err)
		})
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		switch c {
		case "":
			won++
		case interrupt.CodeReceiptSpent:
		default:
			t.Errorf("a racer got %q", c)
		}
	}
	if won != 1 {
		t.Fatalf("%d redemptions succeeded, want 1 (%v)", won, codes)
	}
	// Commits enough to checkpoint the run with the interrupt closed and its redemption
	// archived: a later read finds both in the archive.
	for i := range 8 {
		node := fmt.Sprintf("n%d", i)
		if _, _, err := h.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: node, Payload: hosttest.Custom(node)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tokens.RedeemReceipt(ctx, executor, o.Receipt.Token, refund); code(err) != interrupt.CodeReceiptSpent {
		t.Errorf("after a checkpoint: %v, want receipt_spent", err)
	}
	again, err := tokens.InterruptOutcome(ctx, engine, "r1", o.InterruptID)
	if err != nil || again.Redeemed == nil || again.Receipt == nil || again.Receipt.Token != o.Receipt.Token {
		t.Errorf("after a checkpoint: %+v, %v; want the same receipt, redeemed", again, err)
	}
}

// decidedNow is the resume value v with a decidedAt of the decider's, before the host's time of
// the resolution (hosttest.T0), which a receipt's expiry counts from.
func decidedNow(v string) json.RawMessage {
	return json.RawMessage(`{"decidedAt":"2026-11-29T17:00:00Z",` + strings.TrimPrefix(v, "{"))
}

func hasPath(err error, path string) bool {
	e, ok := err.(*interrupt.Error)
	if !ok {
		return false
	}
	for _, f := range e.Fields {
		if f.Path == path {
			return true
		}
	}
	return false
}

// sameJSON reports whether a and b are one JSON value.
func sameJSON(a, b json.RawMessage) bool {
	da, _ := interrupt.ArgumentsDigest(a)
	db, _ := interrupt.ArgumentsDigest(b)
	return da != "" && da == db
}
