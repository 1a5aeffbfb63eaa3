package host

import (
	"context"
	"errors"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// ClaimGrace is how long a claim counts as its owner's even when the owner's log does not use
// the conversation yet: longer than any invocation between writing a claim and committing.
const ClaimGrace = time.Minute

// claimConversation makes runID the owner of conversation id in the tenant, or refuses with 409
// when another run has used it. It runs once the request is decided, right before its commit,
// so a refused request leaves no claim behind. A claim whose run never committed the conversation (it crashed
// between the two writes) is taken over once it is older than ClaimGrace.
func (h *Host) claimConversation(ctx context.Context, tenant, id, runID string) error {
	owner, err := h.conversations.ClaimConversation(ctx, runlog.ConversationClaim{Tenant: tenant, ConversationID: id, RunID: runID, At: h.now()})
	if !errors.Is(err, runlog.ErrClaimed) {
		return err
	}
	taken := interrupt.Errorf(interrupt.CodeConflict, "conversation %s belongs to another run of this tenant", id)
	if h.now().Sub(owner.At) < ClaimGrace {
		return taken
	}
	st, err := h.load(ctx, runlog.Key{Tenant: tenant, RunID: owner.RunID}, runlog.Ref{Kind: runlog.RefConversation, Name: id})
	if err != nil {
		return err
	}
	if st.HasConversation(id) {
		return taken
	}
	_, err = h.conversations.ClaimConversation(ctx, runlog.ConversationClaim{Tenant: tenant, ConversationID: id, RunID: runID, At: h.now(), TakeOverFrom: owner.RunID})
	if errors.Is(err, runlog.ErrClaimed) {
		return taken
	}
	return err
}
