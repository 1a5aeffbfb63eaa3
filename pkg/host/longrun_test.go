package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// TestALongRunAnswersAsAShortOne: in a run of 100,000 commits (20,000 under -short, 10,000 under
// the race detector), whose reads
// fold a checkpoint and the commits after it, what its first commits did still answers as it did:
// the re-entry key replays its persisted value and appends nothing, the Idempotency-Key its
// original bytes (and 422 for another request), the interrupts they resolved are resolved to
// every surface, the closed conversation stays closed, the agent decision answers its first
// commit.
func TestALongRunAnswersAsAShortOne(t *testing.T) {
	t.Parallel()
	commits := 100_000
	switch {
	case raceDetector:
		commits = 10_000
	case testing.Short():
		commits = 20_000
	}
	ctx := context.Background()
	h, l := hosttest.MemHost(t)
	tokens := hosttest.Tokens(h)
	r := hosttest.NewLongRun(t, h, "long", commits)
	k := runlog.Key{Tenant: "acme", RunID: "long"}
	cp, tail, err := l.Tail(ctx, k)
	if err != nil || cp == nil || len(tail) >= runlog.CheckpointEvery || cp.Seq < int64(commits-runlog.CheckpointEvery) || !cp.Archived {
		t.Fatalf("the run's tail: checkpoint %+v, %d commits, %v", cp, len(tail), err)
	}
	if len(cp.Pending) > 1 {
		t.Errorf("a checkpoint of a run with at most one interrupt pending keeps %d", len(cp.Pending))
	}
	writes := l.Writes()

	v, created, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "long", host.Request{NodeID: "a", Payload: hosttest.Custom("first")})
	if err != nil || created || v.Status != interrupt.StatusResolved || string(v.ResumeValue) != `{"v":1}` || v.Seq != 1 {
		t.Errorf("the first re-entry key: %+v created %v, %v", v, created, err)
	}
	replay, err := h.Resolve(ctx, hosttest.Who("alice"), "long", "a", json.RawMessage(`{"v":1}`), &host.Idempotency{Key: "idem-1", Fingerprint: "f1"})
	if err != nil || string(replay.Replay) != string(r.First.Replay) || replay.Seq != r.First.Seq {
		t.Errorf("the first Idempotency-Key: %s (seq %d), first answered %s (seq %d), %v", replay.Replay, replay.Seq, r.First.Replay, r.First.Seq, err)
	}
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), "long", "a", json.RawMessage(`{"v":2}`), &host.Idempotency{Key: "idem-1", Fingerprint: "f2"}); interrupt.ErrorCode(err) != interrupt.CodeIdempotencyReuse {
		t.Errorf("the first Idempotency-Key for another request: %v", err)
	}
	if _, err := h.Resolve(ctx, hosttest.Who("bob"), "long", "a", json.RawMessage(`{}`), nil); interrupt.ErrorCode(err) != interrupt.CodeAlreadyResolved {
		t.Errorf("a resolve by node of the first interrupt: %v", err)
	}
	if _, err := tokens.MintToken(ctx, hosttest.Who("engine"), "long", "a", host.TokenRequest{Intent: token.IntentInspect}); interrupt.ErrorCode(err) != interrupt.CodeAlreadyResolved {
		t.Errorf("a token for the first interrupt: %v", err)
	}
	g, err := tokens.Authorize(ctx, r.Callback)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ResolveByToken(ctx, g, []byte(`{}`), nil); interrupt.ErrorCode(err) != interrupt.CodeAlreadyResolved {
		t.Errorf("the callback of an interrupt resolved long ago: %v", err)
	}
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "long", host.Request{NodeID: "talk2", Payload: json.RawMessage(`{"kind":"conversation.start","key":"again","data":{"conversationId":"conv-1"}}`)}); interrupt.ErrorCode(err) != interrupt.CodeConflict {
		t.Errorf("reopening the conversation closed long ago: %v", err)
	}
	d, created, err := h.Decide(ctx, hosttest.Who("agent"), "long", host.AgentDecision{NodeID: "plan", Key: "dec-1", AgentID: "planner", Confidence: 0.99, Decision: json.RawMessage(`{"go":true}`)})
	if err != nil || created || d.Seq != r.DecidedAt {
		t.Errorf("the first agent decision again: %+v created %v, %v", d, created, err)
	}
	if l.Writes() != writes {
		t.Errorf("answering what the first commits did wrote %d items", l.Writes()-writes)
	}
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "long", host.Request{NodeID: "n", Payload: hosttest.Custom("fresh")}); err != nil {
		t.Errorf("a new request on the long run: %v", err)
	}
}

// TestLargePendingStateStaysCheckpointed runs the scenario on the in-memory store; pkg/dynamo
// runs it on a table, where DynamoDB's item size is what a checkpoint must fit.
func TestLargePendingStateStaysCheckpointed(t *testing.T) {
	t.Parallel()
	hosttest.LargePendingStateStaysCheckpointed(t, inmem.New())
}

// TestVotesStayWithinThePendingBound: a vote that releases nothing adds its value to the pending
// state and is refused past MaxPendingBytes; the vote that releases the approval closes it and is
// always recorded.
func TestVotesStayWithinThePendingBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := hosttest.MemHost(t)
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r", host.Request{NodeID: "big", Payload: hosttest.BigPayload("big", 240_000)}); err != nil {
		t.Fatal(err)
	}
	approval := json.RawMessage(`{"kind":"approval","key":"q","data":{"artifactId":"a","artifactType":"doc","title":"t","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`)
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r", host.Request{NodeID: "approve", Payload: approval}); err != nil {
		t.Fatal(err)
	}
	long := func(who string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"action":"accept","decidedBy":%q,"decidedAt":"2026-11-30T09:00:00Z","feedback":%q}`, who, strings.Repeat("f", 60_000)))
	}
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), "r", "approve", long("alice"), nil); interrupt.ErrorCode(err) != interrupt.CodePayloadTooLarge {
		t.Errorf("a vote that releases nothing, past the bound: %v", err)
	}
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), "r", "approve", json.RawMessage(`{"action":"accept","decidedBy":"alice","decidedAt":"2026-11-30T09:00:00Z"}`), nil); err != nil {
		t.Fatalf("a short vote within the bound: %v", err)
	}
	if res, err := h.Resolve(ctx, hosttest.Who("bob"), "r", "approve", long("bob"), nil); err != nil || res.Status != interrupt.StatusResolved {
		t.Errorf("the releasing vote, however long: %+v %v", res, err)
	}
}

// TestALateCheckpointRevivesNothing runs the scenario on the in-memory store; pkg/dynamo runs it
// on a table, whose items hold the checkpoint apart from its commit.
func TestALateCheckpointRevivesNothing(t *testing.T) {
	t.Parallel()
	hosttest.ALateCheckpointRevivesNothing(t, inmem.New())
}

// TestTheLastInterruptAtANode: an interrupt past its deadline (the sweep has not recorded it),
// then another at its node resolved: after a checkpoint, the node's last interrupt is still the
// second, not the one the checkpoint keeps pending.
func TestTheLastInterruptAtANode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	h, _ := hosttest.MemHost(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r", host.Request{NodeID: "a", Payload: json.RawMessage(`{"kind":"custom","key":"first","timeoutMs":1000,"data":{"customKind":"x"}}`)}); err != nil {
		t.Fatal(err)
	}
	clock.Set(t0.Add(2 * time.Second))
	second, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r", host.Request{NodeID: "a", Payload: hosttest.Custom("second")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), "r", "a", json.RawMessage(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		v, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), "r", host.Request{NodeID: "b", Payload: hosttest.Custom(fmt.Sprintf("b%d", i))})
		if err != nil {
			t.Fatal(err)
		}
		res, err := h.Resolve(ctx, hosttest.Who("alice"), "r", "b", json.RawMessage(`{}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if v.Seq > runlog.CheckpointEvery || res.Seq >= runlog.CheckpointEvery {
			break
		}
	}
	_, err = h.Resolve(ctx, hosttest.Who("bob"), "r", "a", json.RawMessage(`{}`), nil)
	if interrupt.ErrorCode(err) != interrupt.CodeAlreadyResolved || !strings.Contains(err.Error(), second.InterruptID) || !strings.Contains(err.Error(), "resolved") {
		t.Errorf("a resolve at the node after a checkpoint: %v, want %s resolved", err, second.InterruptID)
	}
}
