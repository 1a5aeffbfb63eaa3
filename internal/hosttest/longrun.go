package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// LongRun is a run whose first commits leave something of every kind a checkpoint moves to the
// archive (a resolved interrupt with its value, an Idempotency-Key's answer, a closed
// conversation, an agent decision, a token's interrupt), then grows to commits with request and
// resolve pairs.
type LongRun struct {
	// First is the answer to the replay of the run's first Idempotency-Key.
	First host.Resolution
	// Callback is the resolve token of an interrupt the run resolved early.
	Callback string
	// DecidedAt is the seq of the run's agent decision.
	DecidedAt int64
}

// NewLongRun makes run, on h, a long run of at least commits commits, and answers what its first
// commits did, for a test to ask again once checkpoints moved it to the archive. h must advertise
// conversations (MemHost's does); its tokens are minted with Keys.
func NewLongRun(t testing.TB, h *host.Host, run string, commits int) *LongRun {
	t.Helper()
	ctx := context.Background()
	r := &LongRun{}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := h.RequestInterrupt(ctx, Who("engine"), run, host.Request{NodeID: "a", Payload: Custom("first")})
	must(err)
	_, err = h.Resolve(ctx, Who("alice"), run, "a", json.RawMessage(`{"v":1}`), &host.Idempotency{Key: "idem-1", Fingerprint: "f1"})
	must(err)
	r.First, err = h.Resolve(ctx, Who("alice"), run, "a", json.RawMessage(`{"v":1}`), &host.Idempotency{Key: "idem-1", Fingerprint: "f1"})
	must(err) // its replay on the short run: the original bytes
	if len(r.First.Replay) == 0 {
		t.Fatal("a replay without the original bytes")
	}
	for _, kind := range []string{"conversation.start", "conversation.close"} {
		_, _, err := h.RequestInterrupt(ctx, Who("engine"), run, host.Request{NodeID: "talk", Payload: json.RawMessage(`{"kind":"` + kind + `","key":"` + kind + `","data":{"conversationId":"conv-1"}}`)})
		must(err)
		if kind == "conversation.start" {
			_, err = h.Resolve(ctx, Who("alice"), run, "talk", json.RawMessage(`{}`), nil)
			must(err)
		}
	}
	d, _, err := h.Decide(ctx, Who("agent"), run, host.AgentDecision{NodeID: "plan", Key: "dec-1", AgentID: "planner", Confidence: 0.99, Decision: json.RawMessage(`{"go":true}`)})
	must(err)
	r.DecidedAt = d.Seq
	tokens := host.NewSigner(h, Keys)
	v, _, err := tokens.RequestInterrupt(ctx, Who("engine"), run, host.Request{NodeID: "hook", Payload: Custom("hook"), Token: &host.TokenRequest{Intent: token.IntentResolve}})
	must(err)
	r.Callback = v.Tokens[0].Token
	g, err := tokens.Authorize(ctx, r.Callback)
	must(err)
	_, err = h.ResolveByToken(ctx, g, []byte(`{}`), nil)
	must(err)
	snap, err := h.Snapshot(ctx, Who("engine"), run)
	must(err)
	for i := 0; snap.LastSeq < int64(commits); i++ {
		_, _, err := h.RequestInterrupt(ctx, Who("engine"), run, host.Request{NodeID: "n", Payload: Custom(fmt.Sprintf("k%d", i))})
		must(err)
		res, err := h.Resolve(ctx, Who("alice"), run, "n", json.RawMessage(`{}`), nil)
		must(err)
		snap.LastSeq = res.Seq
	}
	return r
}

// reads counts the items a log's reads of a run return: its checkpoint and the commits after it.
type reads struct {
	host.Store
	items int
}

func (r *reads) Tail(ctx context.Context, k runlog.Key) (*runlog.Checkpoint, []runlog.Commit, error) {
	cp, commits, err := r.Store.Tail(ctx, k)
	if cp != nil {
		r.items++
	}
	r.items += len(commits)
	return cp, commits, err
}

// LargePendingStateStaysCheckpointed, on store: the probe's run (pending interrupts of
// about 115 KB each) made every checkpoint too large for one item, and from then on every read
// folded the whole log. A request that would take the pending payloads past MaxPendingBytes is
// refused (413, naming the limit) and writes nothing; so every checkpoint is written, and a read
// of a run holding large payloads reads as many items as one of small payloads. A commit that
// closes an interrupt always fits, and makes room.
func LargePendingStateStaysCheckpointed(t *testing.T, store host.Store) {
	ctx := context.Background()
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	counted := &reads{Store: store}
	var refused []error
	h := host.New(host.Env{Stores: host.StoresOf(counted), Schemas: sch, OnCheckpointError: func(_ runlog.Key, _ int64, err error) { refused = append(refused, err) }}, host.Config{})
	// grow makes run's log reach commits with request and resolve pairs of small payloads.
	grow := func(run string, commits int64) {
		t.Helper()
		for i := 0; ; i++ {
			snap, err := h.Snapshot(ctx, Who("engine"), run)
			if err != nil {
				t.Fatal(err)
			}
			if snap.LastSeq >= commits {
				return
			}
			if _, _, err := h.RequestInterrupt(ctx, Who("engine"), run, host.Request{NodeID: "s", Payload: Custom(fmt.Sprintf("s%d", i))}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Resolve(ctx, Who("alice"), run, "s", json.RawMessage(`{}`), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 2 {
		if _, _, err := h.RequestInterrupt(ctx, Who("engine"), "large", host.Request{NodeID: fmt.Sprintf("n%d", i), Payload: BigPayload(fmt.Sprintf("big-%d", i), 115<<10)}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.RequestInterrupt(ctx, Who("engine"), "small", host.Request{NodeID: fmt.Sprintf("n%d", i), Payload: BigPayload(fmt.Sprintf("small-%d", i), 100)}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := h.Snapshot(ctx, Who("engine"), "large")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = h.RequestInterrupt(ctx, Who("engine"), "large", host.Request{NodeID: "n2", Payload: BigPayload("big-2", 115<<10)})
	if interrupt.ErrorCode(err) != interrupt.CodePayloadTooLarge || !strings.Contains(err.Error(), fmt.Sprint(host.MaxPendingBytes)) {
		t.Fatalf("a third pending payload of 115 KB: %v, want payload_too_large naming %d", err, host.MaxPendingBytes)
	}
	if after, err := h.Snapshot(ctx, Who("engine"), "large"); err != nil || after.LastSeq != before.LastSeq {
		t.Fatalf("the refused request wrote: seq %d, then %d (%v)", before.LastSeq, after.LastSeq, err)
	}
	grow("large", 3*runlog.CheckpointEvery)
	grow("small", 3*runlog.CheckpointEvery)
	if len(refused) > 0 {
		t.Fatalf("checkpoints not written: %v", refused)
	}
	items := map[string]int{}
	for _, run := range []string{"large", "small"} {
		counted.items = 0
		if _, err := h.Snapshot(ctx, Who("engine"), run); err != nil {
			t.Fatal(err)
		}
		items[run] = counted.items
	}
	if items["large"] != items["small"] || items["large"] > runlog.CheckpointEvery {
		t.Errorf("a read of the run with large payloads pending took %d items, of the one with small ones %d", items["large"], items["small"])
	}
	if _, err := h.Resolve(ctx, Who("alice"), "large", "n0", json.RawMessage(`{}`), nil); err != nil {
		t.Fatalf("closing a large interrupt: %v", err)
	}
	if _, _, err := h.RequestInterrupt(ctx, Who("engine"), "large", host.Request{NodeID: "n2", Payload: BigPayload("big-2", 115<<10)}); err != nil {
		t.Errorf("the third large payload once the first closed: %v", err)
	}
}

// late holds back the checkpoint writes of a log until told, as a writer that stalls between its
// commit and its checkpoint does.
type late struct {
	host.Store
	held []func() error
}

func (l *late) Checkpoint(ctx context.Context, k runlog.Key, cp *runlog.Checkpoint, archive []runlog.Found) error {
	l.held = append(l.held, func() error { return l.Store.Checkpoint(ctx, k, cp, archive) })
	return nil
}

// ALateCheckpointRevivesNothing, on store: a checkpoint that lands after its run ended
// and was retained past its expiry does not bring the run back (the checkpoint is read only beside
// its own commit, live), and the archive it wrote is not the next run's of the same id.
func ALateCheckpointRevivesNothing(t *testing.T, store host.Store) {
	ctx := context.Background()
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	k := runlog.Key{Tenant: "acme", RunID: "r"}
	stalled := &late{Store: store}
	h := host.New(host.Env{Stores: host.StoresOf(stalled), Schemas: sch}, host.Config{})
	for i := range runlog.CheckpointEvery / 2 {
		if _, _, err := h.RequestInterrupt(ctx, Who("engine"), "r", host.Request{NodeID: "n", Payload: Custom(fmt.Sprintf("k%d", i))}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Resolve(ctx, Who("alice"), "r", "n", json.RawMessage(`{"old":true}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := h.RequestInterrupt(ctx, Who("engine"), "r", host.Request{NodeID: "m", Payload: Custom("pending")}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.EndRun(ctx, Who("engine"), "r", interrupt.RunCancelled, ""); err != nil {
		t.Fatal(err)
	}
	for more := true; more; {
		if more, err = store.Retain(ctx, k, time.Now().Add(-time.Second), 1000); err != nil {
			t.Fatal(err)
		}
	}
	if len(stalled.held) != 1 {
		t.Fatalf("%d checkpoints held, want the one at %d", len(stalled.held), runlog.CheckpointEvery)
	}
	if err := stalled.held[0](); err != nil {
		t.Fatal(err)
	}
	if snap, err := h.Snapshot(ctx, Who("engine"), "r"); interrupt.ErrorCode(err) != interrupt.CodeNotFound {
		t.Errorf("the expired run, its checkpoint written late: %+v %v", snap, err)
	}
	// A new run of the id, past its own first checkpoints, asks for a key the old one
	// archived: a new interrupt, not the old run's.
	fresh := host.New(host.Env{Stores: host.StoresOf(store), Schemas: sch}, host.Config{})
	for i := range runlog.CheckpointEvery {
		if _, _, err := fresh.RequestInterrupt(ctx, Who("engine"), "r", host.Request{NodeID: "x", Payload: Custom(fmt.Sprintf("new-%d", i))}); err != nil {
			t.Fatal(err)
		}
		if _, err := fresh.Resolve(ctx, Who("alice"), "r", "x", json.RawMessage(`{}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	v, created, err := fresh.RequestInterrupt(ctx, Who("engine"), "r", host.Request{NodeID: "y", Payload: Custom("k0")})
	if err != nil || !created || v.Status != interrupt.StatusPending {
		t.Errorf("the old run's key on the new run: %+v created %v, %v", v, created, err)
	}
}
