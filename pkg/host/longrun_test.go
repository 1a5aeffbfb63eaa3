package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/pkg/token"
)

func custom(key string) json.RawMessage {
	return json.RawMessage(`{"kind":"custom","key":"` + key + `","data":{"customKind":"x"}}`)
}

// longRun is a run whose first commits leave something of every kind a checkpoint moves to the
// archive (a resolved interrupt with its value, an Idempotency-Key's answer, a closed
// conversation, an agent decision, a token's interrupt), then grows to commits with request and
// resolve pairs.
type longRun struct {
	h         *host.Host
	run       string
	first     host.Resolution
	callback  string
	decidedAt int64
}

func newLongRun(t testing.TB, h *host.Host, run string, commits int) *longRun {
	t.Helper()
	ctx := context.Background()
	r := &longRun{h: h, run: run}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := h.RequestInterrupt(ctx, who("engine"), run, host.Request{NodeID: "a", Payload: custom("first")})
	must(err)
	_, err = h.Resolve(ctx, who("alice"), run, "a", json.RawMessage(`{"v":1}`), &host.Idempotency{Key: "idem-1", Fingerprint: "f1"})
	must(err)
	r.first, err = h.Resolve(ctx, who("alice"), run, "a", json.RawMessage(`{"v":1}`), &host.Idempotency{Key: "idem-1", Fingerprint: "f1"})
	must(err) // its replay on the short run: the original bytes
	if len(r.first.Replay) == 0 {
		t.Fatal("a replay without the original bytes")
	}
	for _, kind := range []string{"conversation.start", "conversation.close"} {
		_, _, err := h.RequestInterrupt(ctx, who("engine"), run, host.Request{NodeID: "talk", Payload: json.RawMessage(`{"kind":"` + kind + `","key":"` + kind + `","data":{"conversationId":"conv-1"}}`)})
		must(err)
		if kind == "conversation.start" {
			_, err = h.Resolve(ctx, who("alice"), run, "talk", json.RawMessage(`{}`), nil)
			must(err)
		}
	}
	d, _, err := h.Decide(ctx, who("agent"), run, host.AgentDecision{NodeID: "plan", Key: "dec-1", AgentID: "planner", Confidence: 0.99, Decision: json.RawMessage(`{"go":true}`)})
	must(err)
	r.decidedAt = d.Seq
	v, _, err := h.RequestInterrupt(ctx, who("engine"), run, host.Request{NodeID: "hook", Payload: custom("hook"), Token: &host.TokenRequest{Intent: token.IntentResolve}})
	must(err)
	r.callback = v.Tokens[0].Token
	g, err := h.Authorize(ctx, r.callback)
	must(err)
	_, err = h.ResolveByToken(ctx, g, []byte(`{}`), nil)
	must(err)
	snap, err := h.Snapshot(ctx, who("engine"), run)
	must(err)
	for i := 0; snap.LastSeq < int64(commits); i++ {
		_, _, err := h.RequestInterrupt(ctx, who("engine"), run, host.Request{NodeID: "n", Payload: custom(fmt.Sprintf("k%d", i))})
		must(err)
		res, err := h.Resolve(ctx, who("alice"), run, "n", json.RawMessage(`{}`), nil)
		must(err)
		snap.LastSeq = res.Seq
	}
	return r
}

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
	h, l := memHost(t, func(c *host.Config) { c.Keys = keys })
	r := newLongRun(t, h, "long", commits)
	k := runlog.Key{Tenant: "acme", RunID: "long"}
	cp, tail, err := l.Tail(ctx, k)
	if err != nil || cp == nil || len(tail) >= runlog.CheckpointEvery || cp.Seq < int64(commits-runlog.CheckpointEvery) || !cp.Archived {
		t.Fatalf("the run's tail: checkpoint %+v, %d commits, %v", cp, len(tail), err)
	}
	if len(cp.Pending) > 1 {
		t.Errorf("a checkpoint of a run with at most one interrupt pending keeps %d", len(cp.Pending))
	}
	writes := l.Writes()

	v, created, err := h.RequestInterrupt(ctx, who("engine"), "long", host.Request{NodeID: "a", Payload: custom("first")})
	if err != nil || created || v.Status != interrupt.StatusResolved || string(v.ResumeValue) != `{"v":1}` || v.Seq != 1 {
		t.Errorf("the first re-entry key: %+v created %v, %v", v, created, err)
	}
	replay, err := h.Resolve(ctx, who("alice"), "long", "a", json.RawMessage(`{"v":1}`), &host.Idempotency{Key: "idem-1", Fingerprint: "f1"})
	if err != nil || string(replay.Replay) != string(r.first.Replay) || replay.Seq != r.first.Seq {
		t.Errorf("the first Idempotency-Key: %s (seq %d), first answered %s (seq %d), %v", replay.Replay, replay.Seq, r.first.Replay, r.first.Seq, err)
	}
	if _, err := h.Resolve(ctx, who("alice"), "long", "a", json.RawMessage(`{"v":2}`), &host.Idempotency{Key: "idem-1", Fingerprint: "f2"}); interrupt.ErrorCode(err) != interrupt.CodeIdempotencyReuse {
		t.Errorf("the first Idempotency-Key for another request: %v", err)
	}
	if _, err := h.Resolve(ctx, who("bob"), "long", "a", json.RawMessage(`{}`), nil); interrupt.ErrorCode(err) != interrupt.CodeAlreadyResolved {
		t.Errorf("a resolve by node of the first interrupt: %v", err)
	}
	if _, err := h.MintToken(ctx, who("engine"), "long", "a", host.TokenRequest{Intent: token.IntentInspect}); interrupt.ErrorCode(err) != interrupt.CodeAlreadyResolved {
		t.Errorf("a token for the first interrupt: %v", err)
	}
	g, err := h.Authorize(ctx, r.callback)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ResolveByToken(ctx, g, []byte(`{}`), nil); interrupt.ErrorCode(err) != interrupt.CodeAlreadyResolved {
		t.Errorf("the callback of an interrupt resolved long ago: %v", err)
	}
	if _, _, err := h.RequestInterrupt(ctx, who("engine"), "long", host.Request{NodeID: "talk2", Payload: json.RawMessage(`{"kind":"conversation.start","key":"again","data":{"conversationId":"conv-1"}}`)}); interrupt.ErrorCode(err) != interrupt.CodeConflict {
		t.Errorf("reopening the conversation closed long ago: %v", err)
	}
	d, created, err := h.Decide(ctx, who("agent"), "long", host.AgentDecision{NodeID: "plan", Key: "dec-1", AgentID: "planner", Confidence: 0.99, Decision: json.RawMessage(`{"go":true}`)})
	if err != nil || created || d.Seq != r.decidedAt {
		t.Errorf("the first agent decision again: %+v created %v, %v", d, created, err)
	}
	if l.Writes() != writes {
		t.Errorf("answering what the first commits did wrote %d items", l.Writes()-writes)
	}
	if _, _, err := h.RequestInterrupt(ctx, who("engine"), "long", host.Request{NodeID: "n", Payload: custom("fresh")}); err != nil {
		t.Errorf("a new request on the long run: %v", err)
	}
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

// bigPayload is a custom interrupt's payload of about size bytes.
func bigPayload(key string, size int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"kind":"custom","key":%q,"data":{"customKind":"x","payload":%q}}`, key, strings.Repeat("x", size)))
}

// TestLargePendingStateStaysCheckpointed, on both stores: the probe's run (pending interrupts of
// about 115 KB each) made every checkpoint too large for one item, and from then on every read
// folded the whole log. A request that would take the pending payloads past MaxPendingBytes is
// refused (413, naming the limit) and writes nothing; so every checkpoint is written, and a read
// of a run holding large payloads reads as many items as one of small payloads. A commit that
// closes an interrupt always fits, and makes room.
func TestLargePendingStateStaysCheckpointed(t *testing.T) {
	ctx := context.Background()
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range logs {
		t.Run(name, func(t *testing.T) {
			counted := &reads{Store: open(t)}
			var refused []error
			h := host.New(host.StoresOf(counted), sch, host.Config{OnCheckpointError: func(_ runlog.Key, _ int64, err error) { refused = append(refused, err) }})
			// grow makes run's log reach commits with request and resolve pairs of small payloads.
			grow := func(run string, commits int64) {
				t.Helper()
				for i := 0; ; i++ {
					snap, err := h.Snapshot(ctx, who("engine"), run)
					if err != nil {
						t.Fatal(err)
					}
					if snap.LastSeq >= commits {
						return
					}
					if _, _, err := h.RequestInterrupt(ctx, who("engine"), run, host.Request{NodeID: "s", Payload: custom(fmt.Sprintf("s%d", i))}); err != nil {
						t.Fatal(err)
					}
					if _, err := h.Resolve(ctx, who("alice"), run, "s", json.RawMessage(`{}`), nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i := range 2 {
				if _, _, err := h.RequestInterrupt(ctx, who("engine"), "large", host.Request{NodeID: fmt.Sprintf("n%d", i), Payload: bigPayload(fmt.Sprintf("big-%d", i), 115<<10)}); err != nil {
					t.Fatal(err)
				}
				if _, _, err := h.RequestInterrupt(ctx, who("engine"), "small", host.Request{NodeID: fmt.Sprintf("n%d", i), Payload: bigPayload(fmt.Sprintf("small-%d", i), 100)}); err != nil {
					t.Fatal(err)
				}
			}
			before, err := h.Snapshot(ctx, who("engine"), "large")
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = h.RequestInterrupt(ctx, who("engine"), "large", host.Request{NodeID: "n2", Payload: bigPayload("big-2", 115<<10)})
			if interrupt.ErrorCode(err) != interrupt.CodePayloadTooLarge || !strings.Contains(err.Error(), fmt.Sprint(host.MaxPendingBytes)) {
				t.Fatalf("a third pending payload of 115 KB: %v, want payload_too_large naming %d", err, host.MaxPendingBytes)
			}
			if after, err := h.Snapshot(ctx, who("engine"), "large"); err != nil || after.LastSeq != before.LastSeq {
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
				if _, err := h.Snapshot(ctx, who("engine"), run); err != nil {
					t.Fatal(err)
				}
				items[run] = counted.items
			}
			if items["large"] != items["small"] || items["large"] > runlog.CheckpointEvery {
				t.Errorf("a read of the run with large payloads pending took %d items, of the one with small ones %d", items["large"], items["small"])
			}
			if _, err := h.Resolve(ctx, who("alice"), "large", "n0", json.RawMessage(`{}`), nil); err != nil {
				t.Fatalf("closing a large interrupt: %v", err)
			}
			if _, _, err := h.RequestInterrupt(ctx, who("engine"), "large", host.Request{NodeID: "n2", Payload: bigPayload("big-2", 115<<10)}); err != nil {
				t.Errorf("the third large payload once the first closed: %v", err)
			}
		})
	}
}

// TestVotesStayWithinThePendingBound: a vote that releases nothing adds its value to the pending
// state and is refused past MaxPendingBytes; the vote that releases the approval closes it and is
// always recorded.
func TestVotesStayWithinThePendingBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := memHost(t)
	if _, _, err := h.RequestInterrupt(ctx, who("engine"), "r", host.Request{NodeID: "big", Payload: bigPayload("big", 240_000)}); err != nil {
		t.Fatal(err)
	}
	approval := json.RawMessage(`{"kind":"approval","key":"q","data":{"artifactId":"a","artifactType":"doc","title":"t","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`)
	if _, _, err := h.RequestInterrupt(ctx, who("engine"), "r", host.Request{NodeID: "approve", Payload: approval}); err != nil {
		t.Fatal(err)
	}
	long := func(who string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"action":"accept","decidedBy":%q,"decidedAt":"2026-11-30T09:00:00Z","feedback":%q}`, who, strings.Repeat("f", 60_000)))
	}
	if _, err := h.Resolve(ctx, who("alice"), "r", "approve", long("alice"), nil); interrupt.ErrorCode(err) != interrupt.CodePayloadTooLarge {
		t.Errorf("a vote that releases nothing, past the bound: %v", err)
	}
	if _, err := h.Resolve(ctx, who("alice"), "r", "approve", json.RawMessage(`{"action":"accept","decidedBy":"alice","decidedAt":"2026-11-30T09:00:00Z"}`), nil); err != nil {
		t.Fatalf("a short vote within the bound: %v", err)
	}
	if res, err := h.Resolve(ctx, who("bob"), "r", "approve", long("bob"), nil); err != nil || res.Status != interrupt.StatusResolved {
		t.Errorf("the releasing vote, however long: %+v %v", res, err)
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

// TestALateCheckpointRevivesNothing, on both stores: a checkpoint that lands after its run ended
// and was retained past its expiry does not bring the run back (the checkpoint is read only beside
// its own commit, live), and the archive it wrote is not the next run's of the same id.
func TestALateCheckpointRevivesNothing(t *testing.T) {
	ctx := context.Background()
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	k := runlog.Key{Tenant: "acme", RunID: "r"}
	for name, open := range logs {
		t.Run(name, func(t *testing.T) {
			store := open(t)
			stalled := &late{Store: store}
			h := host.New(host.StoresOf(stalled), sch, host.Config{})
			for i := range runlog.CheckpointEvery / 2 {
				if _, _, err := h.RequestInterrupt(ctx, who("engine"), "r", host.Request{NodeID: "n", Payload: custom(fmt.Sprintf("k%d", i))}); err != nil {
					t.Fatal(err)
				}
				if _, err := h.Resolve(ctx, who("alice"), "r", "n", json.RawMessage(`{"old":true}`), nil); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, err := h.RequestInterrupt(ctx, who("engine"), "r", host.Request{NodeID: "m", Payload: custom("pending")}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.EndRun(ctx, who("engine"), "r", interrupt.RunCancelled, ""); err != nil {
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
			if snap, err := h.Snapshot(ctx, who("engine"), "r"); interrupt.ErrorCode(err) != interrupt.CodeNotFound {
				t.Errorf("the expired run, its checkpoint written late: %+v %v", snap, err)
			}
			// A new run of the id, past its own first checkpoints, asks for a key the old one
			// archived: a new interrupt, not the old run's.
			fresh := host.New(host.StoresOf(store), sch, host.Config{})
			for i := range runlog.CheckpointEvery {
				if _, _, err := fresh.RequestInterrupt(ctx, who("engine"), "r", host.Request{NodeID: "x", Payload: custom(fmt.Sprintf("new-%d", i))}); err != nil {
					t.Fatal(err)
				}
				if _, err := fresh.Resolve(ctx, who("alice"), "r", "x", json.RawMessage(`{}`), nil); err != nil {
					t.Fatal(err)
				}
			}
			v, created, err := fresh.RequestInterrupt(ctx, who("engine"), "r", host.Request{NodeID: "y", Payload: custom("k0")})
			if err != nil || !created || v.Status != interrupt.StatusPending {
				t.Errorf("the old run's key on the new run: %+v created %v, %v", v, created, err)
			}
		})
	}
}

// TestTheLastInterruptAtANode: an interrupt past its deadline (the sweep has not recorded it),
// then another at its node resolved: after a checkpoint, the node's last interrupt is still the
// second, not the one the checkpoint keeps pending.
func TestTheLastInterruptAtANode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	h, _ := memHost(t, func(c *host.Config) { c.Now = clock.Now })
	if _, _, err := h.RequestInterrupt(ctx, who("engine"), "r", host.Request{NodeID: "a", Payload: json.RawMessage(`{"kind":"custom","key":"first","timeoutMs":1000,"data":{"customKind":"x"}}`)}); err != nil {
		t.Fatal(err)
	}
	clock.Set(t0.Add(2 * time.Second))
	second, _, err := h.RequestInterrupt(ctx, who("engine"), "r", host.Request{NodeID: "a", Payload: custom("second")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Resolve(ctx, who("alice"), "r", "a", json.RawMessage(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		v, _, err := h.RequestInterrupt(ctx, who("engine"), "r", host.Request{NodeID: "b", Payload: custom(fmt.Sprintf("b%d", i))})
		if err != nil {
			t.Fatal(err)
		}
		res, err := h.Resolve(ctx, who("alice"), "r", "b", json.RawMessage(`{}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if v.Seq > runlog.CheckpointEvery || res.Seq >= runlog.CheckpointEvery {
			break
		}
	}
	_, err = h.Resolve(ctx, who("bob"), "r", "a", json.RawMessage(`{}`), nil)
	if interrupt.ErrorCode(err) != interrupt.CodeAlreadyResolved || !strings.Contains(err.Error(), second.InterruptID) || !strings.Contains(err.Error(), "resolved") {
		t.Errorf("a resolve at the node after a checkpoint: %v, want %s resolved", err, second.InterruptID)
	}
}
