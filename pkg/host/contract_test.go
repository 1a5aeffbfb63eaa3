package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// The stores the host runs on.
var (
	_ host.Store = (*dynamo.Table)(nil)
	_ host.Store = (*inmem.Store)(nil)
)

// logs are the implementations of host.Store that TestLogContract holds to one behaviour; the
// DynamoDB one talks to the local stack (skipped under -short).
var logs = map[string]func(t *testing.T) host.Store{
	"inmem": func(*testing.T) host.Store { return inmem.New() },
	"dynamo": func(t *testing.T) host.Store {
		db, table := localaws.NewTable(t)
		return dynamo.NewTable(db, table)
	},
}

func commitOf(seq int64, payload string) runlog.Commit {
	return runlog.Commit{Seq: seq, ID: fmt.Sprintf("c%d", seq), At: time.Date(2026, 11, 30, 9, 0, int(seq), 0, time.UTC), Events: []runlog.Event{
		{Type: "interrupt.requested", NodeID: "n1", InterruptID: "i1", Payload: json.RawMessage(payload)},
	}}
}

// second and third are the error of a call that answers more.
func second[T any](_ T, err error) error        { return err }
func third[A, B any](_ A, _ B, err error) error { return err }

// TestLogContract: every store appends conditionally on the seq, pages, keeps tenants apart,
// refuses commits it cannot hold without writing, stores payloads byte for byte, gives
// conversations one owner each, refuses keys that name no one run in every port, and reads no
// run as nothing.
func TestLogContract(t *testing.T) {
	ctx := context.Background()
	acme, evil := runlog.Key{Tenant: "acme", RunID: "r1"}, runlog.Key{Tenant: "evilcorp", RunID: "r1"}
	for name, open := range logs {
		t.Run(name, func(t *testing.T) {
			t.Run("append is conditional on the seq", func(t *testing.T) {
				l := open(t)
				if err := l.Append(ctx, acme, commitOf(1, `{"a":1}`)); err != nil {
					t.Fatal(err)
				}
				if err := l.Append(ctx, acme, commitOf(1, `{"b":2}`)); !errors.Is(err, runlog.ErrSeqTaken) {
					t.Fatalf("second commit 1: %v, want ErrSeqTaken", err)
				}
				got, err := l.Read(ctx, acme, 0, 0)
				if err != nil || len(got) != 1 || string(got[0].Events[0].Payload) != `{"a":1}` || got[0].ID != "c1" {
					t.Fatalf("read %+v %v, want the first commit alone", got, err)
				}
			})
			t.Run("reads page and keep tenants apart", func(t *testing.T) {
				l := open(t)
				for seq := int64(1); seq <= 5; seq++ {
					if err := l.Append(ctx, acme, commitOf(seq, fmt.Sprintf(`{"n":%d}`, seq))); err != nil {
						t.Fatal(err)
					}
				}
				for _, c := range []struct {
					after        int64
					limit, first int
					n            int
				}{{0, 0, 1, 5}, {0, 2, 1, 2}, {2, 0, 3, 3}, {3, 1, 4, 1}, {5, 0, 0, 0}, {9, 3, 0, 0}} {
					got, err := l.Read(ctx, acme, c.after, c.limit)
					if err != nil || len(got) != c.n || (c.n > 0 && got[0].Seq != int64(c.first)) {
						t.Errorf("after %d limit %d: %d commits %v, want %d from %d", c.after, c.limit, len(got), err, c.n, c.first)
					}
				}
				if got, err := l.Read(ctx, evil, 0, 0); err != nil || len(got) != 0 {
					t.Errorf("another tenant's r1: %d commits %v", len(got), err)
				}
			})
			t.Run("payloads and records read back byte for byte", func(t *testing.T) {
				l := open(t)
				c := commitOf(1, `{"text":"<b>é</b> \"\\ &"}`)
				c.Idem = &runlog.Idem{Key: "sub:alice\nk1", Fingerprint: "f", Response: json.RawMessage(`{"status":"resolved"}`)}
				if err := l.Append(ctx, acme, c); err != nil {
					t.Fatal(err)
				}
				got, err := l.Read(ctx, acme, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				g := got[0]
				if string(g.Events[0].Payload) != string(c.Events[0].Payload) || !g.At.Equal(c.At) || g.Idem == nil ||
					g.Idem.Key != c.Idem.Key || g.Idem.Fingerprint != "f" || string(g.Idem.Response) != `{"status":"resolved"}` {
					t.Errorf("read back %+v (%s), want %+v", g, g.Events[0].Payload, c)
				}
			})
			t.Run("a commit too large is refused and not written", func(t *testing.T) {
				l := open(t)
				big := `{"x":"` + strings.Repeat("x", 410_000) + `"}`
				var tooLarge *runlog.TooLargeError
				if err := l.Append(ctx, acme, commitOf(1, big)); !errors.As(err, &tooLarge) || tooLarge.Limit < 400_000 {
					t.Fatalf("%v, want a TooLargeError at DynamoDB's limit", err)
				}
				if got, _ := l.Read(ctx, acme, 0, 0); len(got) != 0 {
					t.Errorf("the refused commit was written")
				}
				fits := `{"x":"` + strings.Repeat("<", 300_000) + `"}`
				if err := l.Append(ctx, acme, commitOf(1, fits)); err != nil {
					t.Errorf("a 300 KB commit: %v", err)
				}
			})
			t.Run("a key that names no one run is refused", func(t *testing.T) {
				l := open(t)
				for _, k := range []runlog.Key{{Tenant: "acme#run#r1", RunID: "x"}, {Tenant: "acme", RunID: "r1#c"}, {Tenant: "", RunID: "r1"}, {Tenant: "acme", RunID: ""}} {
					cp := &runlog.Checkpoint{Seq: 1, Commit: "c1", Pending: []runlog.Saved{}}
					ref := runlog.Ref{Kind: runlog.RefKey, Name: "k"}
					w := runlog.Waiting{Key: k, Seq: 1, Origin: "c1"}
					for op, err := range map[string]error{
						"append":     l.Append(ctx, k, commitOf(1, `{}`)),
						"read":       second(l.Read(ctx, k, 0, 0)),
						"tail":       third(l.Tail(ctx, k)),
						"checkpoint": l.Checkpoint(ctx, k, cp, []runlog.Found{{Ref: ref, Value: json.RawMessage(`1`)}}),
						"lookup":     second(l.Lookup(ctx, k, []runlog.Ref{ref})),
						"retain":     second(l.Retain(ctx, k, time.Now(), 10)),
						"newer":      second(l.Newer(ctx, k, 0)),
						"schedule":   l.Schedule(ctx, runlog.Due{Tenant: k.Tenant, RunID: k.RunID, InterruptID: "i1", Deadline: time.Now()}),
						"file":       l.FileWaiting(ctx, w),
						"unfile":     l.UnfileWaiting(ctx, w),
					} {
						if !errors.Is(err, runlog.ErrInvalidKey) {
							t.Errorf("%s of %+v: %v", op, k, err)
						}
					}
				}
				if _, err := l.ClaimConversation(ctx, "acme#conv#x", "c", "r1", "", time.Now()); !errors.Is(err, runlog.ErrInvalidKey) {
					t.Errorf("a claim in tenant acme#conv#x: %v", err)
				}
				if _, err := l.WaitingRuns(ctx, "acme#waiting#", "", 10); !errors.Is(err, runlog.ErrInvalidKey) {
					t.Errorf("the waiting runs of tenant acme#waiting#: %v", err)
				}
			})
			t.Run("no run reads as nothing", func(t *testing.T) {
				l := open(t)
				none := runlog.Key{Tenant: "acme", RunID: "none"}
				if got, err := l.Read(ctx, none, 0, 0); err != nil || len(got) != 0 {
					t.Errorf("read: %+v %v", got, err)
				}
				if cp, got, err := l.Tail(ctx, none); err != nil || cp != nil || len(got) != 0 {
					t.Errorf("tail: %+v %+v %v", cp, got, err)
				}
				if found, err := l.Lookup(ctx, none, []runlog.Ref{{Kind: runlog.RefKey, Name: "k"}}); err != nil || len(found) != 0 {
					t.Errorf("lookup: %+v %v", found, err)
				}
				if more, err := l.Retain(ctx, none, time.Now(), 10); err != nil || more {
					t.Errorf("retain: %v %v", more, err)
				}
			})
			t.Run("a conversation has one owner", func(t *testing.T) {
				l := open(t)
				t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
				claim := func(run, from string, at time.Time) (runlog.Claim, error) {
					return l.ClaimConversation(ctx, "acme", "conv-1", run, from, at)
				}
				if c, err := claim("a", "", t0); err != nil || c.RunID != "a" {
					t.Fatalf("first claim: %+v %v", c, err)
				}
				if c, err := claim("a", "", t0.Add(time.Hour)); err != nil || c.RunID != "a" || !c.At.Equal(t0) {
					t.Errorf("the owner again: %+v %v, want the claim unchanged", c, err)
				}
				if c, err := claim("b", "", t0); !errors.Is(err, runlog.ErrClaimed) || c.RunID != "a" || !c.At.Equal(t0) {
					t.Errorf("another run: %+v %v, want ErrClaimed with the owner", c, err)
				}
				if c, err := claim("b", "z", t0); !errors.Is(err, runlog.ErrClaimed) || c.RunID != "a" {
					t.Errorf("a takeover from a run that does not own it: %+v %v", c, err)
				}
				if c, err := claim("b", "a", t0.Add(time.Hour)); err != nil || c.RunID != "b" {
					t.Errorf("a takeover from the owner: %+v %v", c, err)
				}
				if c, err := l.ClaimConversation(ctx, "evilcorp", "conv-1", "x", "", t0); err != nil || c.RunID != "x" {
					t.Errorf("another tenant's conv-1: %+v %v", c, err)
				}
			})
		})
	}
}

// TestInboxContract: both stores keep endpoints, keep the first live event of a correlation
// item and register waiters beside it, order Confirm with Deliver, settle only the event kept,
// record answers outside slots once, answer what is not there without an error, and refuse a
// slot of a tenant that is no id.
func TestInboxContract(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	k := webhook.Key{Tenant: "acme", Endpoint: "we_1", EventType: "payment_intent.succeeded", Value: "order#7/é"}
	delivery := func(id string) webhook.Delivery {
		return webhook.Delivery{EndpointID: "we_1", EventID: id, Body: json.RawMessage(`{"id":"` + id + `"}`), ReceivedAt: t0, Expires: t0.Add(time.Hour)}
	}
	w1 := webhook.Waiter{RunID: "r1", NodeID: "n1", InterruptID: "int_1"}
	w2 := webhook.Waiter{RunID: "r2", NodeID: "n1", InterruptID: "int_2"}
	for name, open := range logs {
		t.Run(name, func(t *testing.T) {
			t.Run("endpoints", func(t *testing.T) {
				l := open(t)
				e := webhook.Endpoint{ID: "we_1", Tenant: "acme", Provider: "stripe", Correlation: []string{"/data/id"}, CreatedAt: t0}
				if err := l.CreateEndpoint(ctx, e, host.MaxEndpoints); err != nil {
					t.Fatal(err)
				}
				got, err := l.Endpoint(ctx, "we_1")
				if err != nil || got.Tenant != "acme" || got.Provider != "stripe" || got.Correlation[0] != "/data/id" || !got.CreatedAt.Equal(t0) {
					t.Errorf("read %+v %v", got, err)
				}
				if err := l.DeleteEndpoint(ctx, "we_1"); err != nil {
					t.Fatal(err)
				}
				if _, err := l.Endpoint(ctx, "we_1"); !errors.Is(err, webhook.ErrNoEndpoint) {
					t.Errorf("a deleted endpoint: %v", err)
				}
			})
			t.Run("a tenant's endpoints are listed", func(t *testing.T) {
				l := open(t)
				for _, e := range []webhook.Endpoint{
					{ID: "we_a", Tenant: "acme", Provider: "stripe", Correlation: []string{"/data/id"}, CreatedAt: t0},
					{ID: "we_b", Tenant: "acme", Provider: "standard-webhooks", Correlation: []string{"/data/id"}, CreatedAt: t0},
					{ID: "we_g", Tenant: "globex", Provider: "stripe", Correlation: []string{"/data/id"}, CreatedAt: t0},
				} {
					if err := l.CreateEndpoint(ctx, e, host.MaxEndpoints); err != nil {
						t.Fatal(err)
					}
				}
				list := func(tenant string) []string {
					ids, err := l.Endpoints(ctx, tenant)
					if err != nil {
						t.Fatal(err)
					}
					slices.Sort(ids)
					return ids
				}
				if got := list("acme"); !slices.Equal(got, []string{"we_a", "we_b"}) {
					t.Errorf("acme's: %v", got)
				}
				if err := l.DeleteEndpoint(ctx, "we_a"); err != nil {
					t.Fatal(err)
				}
				if got := list("acme"); !slices.Equal(got, []string{"we_b"}) {
					t.Errorf("acme's after a deletion: %v", got)
				}
				if got := list("initech"); len(got) != 0 {
					t.Errorf("a tenant with none: %v", got)
				}
			})
			t.Run("a tenant's limit of endpoints holds at once", func(t *testing.T) {
				l := open(t)
				const limit = 5
				endpoint := func(tenant string, i int) webhook.Endpoint {
					return webhook.Endpoint{ID: fmt.Sprintf("we_%s_%d", tenant, i), Tenant: tenant, Provider: "stripe", Correlation: []string{"/data/id"}, CreatedAt: t0}
				}
				for i := range limit - 2 {
					if err := l.CreateEndpoint(ctx, endpoint("acme", i), limit); err != nil {
						t.Fatal(err)
					}
				}
				var wg sync.WaitGroup
				var made atomic.Int32
				for i := range 8 {
					wg.Go(func() {
						switch err := l.CreateEndpoint(ctx, endpoint("acme", 100+i), limit); {
						case err == nil:
							made.Add(1)
						case !errors.Is(err, webhook.ErrLimit):
							t.Errorf("a refusal: %v", err)
						}
					})
				}
				wg.Wait()
				if made.Load() != 2 {
					t.Fatalf("%d of 8 made at %d of %d, want 2", made.Load(), limit-2, limit)
				}
				if err := l.CreateEndpoint(ctx, endpoint("globex", 1), limit); err != nil {
					t.Errorf("another tenant: %v", err)
				}
				if err := l.DeleteEndpoint(ctx, "we_acme_0"); err != nil {
					t.Fatal(err)
				}
				if err := l.CreateEndpoint(ctx, endpoint("acme", 200), limit); err != nil {
					t.Errorf("after a deletion: %v", err)
				}
				if err := l.CreateEndpoint(ctx, endpoint("acme", 201), limit); !errors.Is(err, webhook.ErrLimit) {
					t.Errorf("past the limit again: %v", err)
				}
			})
			t.Run("a slot keeps the first live event and its waiters", func(t *testing.T) {
				l := open(t)
				if e, err := l.Wait(ctx, k, w1, t0); err != nil || e != nil {
					t.Fatalf("wait on an empty slot: %v %v", e, err)
				}
				slot, err := l.Deliver(ctx, k, delivery("evt_1"), t0)
				if err != nil || slot.Event == nil || slot.Event.EventID != "evt_1" || len(slot.Waiters) != 1 || slot.Waiters[0] != w1 {
					t.Fatalf("deliver: %+v %v", slot, err)
				}
				if slot, _ := l.Deliver(ctx, k, delivery("evt_2"), t0); slot.Event.EventID != "evt_1" {
					t.Errorf("a second event replaced the first: %+v", slot.Event)
				}
				if e, err := l.Wait(ctx, k, w2, t0); err != nil || e == nil || string(e.Body) != `{"id":"evt_1"}` {
					t.Errorf("wait beside a live event: %+v %v", e, err)
				}
				if e, err := l.Confirm(ctx, k, w2, t0); err != nil || e == nil || e.EventID != "evt_1" {
					t.Errorf("confirm beside a live event: %+v %v", e, err)
				}
				settled := delivery("evt_1")
				settled.Answer = json.RawMessage(`{"outcome":"resolved"}`)
				if err := l.Settle(ctx, k, settled, []webhook.Waiter{w1}); err != nil {
					t.Fatal(err)
				}
				if err := l.Settle(ctx, k, delivery("evt_2"), []webhook.Waiter{w2}); err != nil {
					t.Fatal(err)
				}
				slot, _ = l.Deliver(ctx, k, delivery("evt_1"), t0)
				if string(slot.Event.Answer) != `{"outcome":"resolved"}` || len(slot.Waiters) != 1 || slot.Waiters[0] != w2 {
					t.Errorf("after settling: %+v (answer %s)", slot, slot.Event.Answer)
				}
				later := t0.Add(2 * time.Hour)
				if e, err := l.Confirm(ctx, k, w2, later); err != nil || e != nil {
					t.Errorf("confirm past the kept event's expiry: %+v %v", e, err)
				}
				third := delivery("evt_3")
				third.Expires = later.Add(time.Hour)
				if slot, _ := l.Deliver(ctx, k, third, later); slot.Event == nil || slot.Event.EventID != "evt_3" || slot.Event.Answer != nil {
					t.Errorf("an expired event is replaced: %+v", slot.Event)
				}
				for _, other := range []webhook.Key{
					{Tenant: "evilcorp", Endpoint: k.Endpoint, EventType: k.EventType, Value: k.Value},
					{Tenant: k.Tenant, Endpoint: "we_2", EventType: k.EventType, Value: k.Value},
				} {
					if slot, _ := l.Deliver(ctx, other, delivery("evt_9"), t0); slot.Event.EventID != "evt_9" || len(slot.Waiters) != 0 {
						t.Errorf("the slot of %+v: %+v", other, slot)
					}
				}
			})
			t.Run("what is not there is no error", func(t *testing.T) {
				l := open(t)
				if err := l.DeleteEndpoint(ctx, "we_none"); err != nil {
					t.Errorf("deleting an endpoint not held: %v", err)
				}
				if err := l.Settle(ctx, k, delivery("evt_1"), []webhook.Waiter{w1}); err != nil {
					t.Errorf("settling an empty slot: %v", err)
				}
				if e, err := l.Confirm(ctx, k, w1, t0); err != nil || e != nil {
					t.Errorf("confirm on an empty slot: %+v %v", e, err)
				}
				if slot, err := l.Deliver(ctx, k, delivery("evt_1"), t0); err != nil || slot.Event == nil || slot.Event.Answer != nil || len(slot.Waiters) != 1 {
					t.Errorf("the slot after a settle of nothing: %+v %v", slot, err)
				}
			})
			t.Run("a slot of a tenant that is no id is refused", func(t *testing.T) {
				l := open(t)
				for _, tenant := range []string{"acme#corr#x", ""} {
					bad := k
					bad.Tenant = tenant
					for op, err := range map[string]error{
						"wait":    second(l.Wait(ctx, bad, w1, t0)),
						"confirm": second(l.Confirm(ctx, bad, w1, t0)),
						"deliver": second(l.Deliver(ctx, bad, delivery("evt_1"), t0)),
						"settle":  l.Settle(ctx, bad, delivery("evt_1"), nil),
					} {
						if !errors.Is(err, runlog.ErrInvalidKey) {
							t.Errorf("%s at tenant %q: %v", op, tenant, err)
						}
					}
				}
			})
			t.Run("answers outside slots are recorded once", func(t *testing.T) {
				l := open(t)
				if got, err := l.Recorded(ctx, "we_1", "evt_1"); err != nil || got != nil {
					t.Fatalf("nothing recorded yet: %s %v", got, err)
				}
				for _, answer := range []string{`{"n":1}`, `{"n":2}`} {
					if err := l.Record(ctx, "we_1", "evt_1", json.RawMessage(answer), t0.Add(time.Hour)); err != nil {
						t.Fatal(err)
					}
				}
				if got, err := l.Recorded(ctx, "we_1", "evt_1"); err != nil || string(got) != `{"n":1}` {
					t.Errorf("recorded %s %v, want the first answer", got, err)
				}
			})
		})
	}
}

// TestDeadlinesContract: both stores file due entries by minute in deadline order, page them,
// and move the sweep's cursor only from where it is.
func TestDeadlinesContract(t *testing.T) {
	ctx := context.Background()
	m := time.Date(2026, 11, 30, 9, 5, 0, 0, time.UTC)
	due := func(run string, at time.Duration) runlog.Due {
		return runlog.Due{Tenant: "acme", RunID: run, InterruptID: "int_" + run, Deadline: m.Add(at)}
	}
	for name, open := range logs {
		t.Run(name, func(t *testing.T) {
			l := open(t)
			for _, d := range []runlog.Due{due("c", 50*time.Second), due("a", 10*time.Second), due("b", 30*time.Second), due("b", 30*time.Second), due("next", time.Minute+time.Second)} {
				if err := l.Schedule(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
			got, err := l.Due(ctx, m.Add(20*time.Second), "", 10)
			if err != nil || len(got) != 3 || got[0].RunID != "a" || got[1].RunID != "b" || got[2].RunID != "c" || !got[0].Deadline.Equal(m.Add(10*time.Second)) {
				t.Fatalf("the minute: %+v %v", got, err)
			}
			if page, _ := l.Due(ctx, m, got[0].Position(), 1); len(page) != 1 || page[0].RunID != "b" {
				t.Errorf("a page after a: %+v", page)
			}
			if next, _ := l.Due(ctx, m.Add(time.Minute), "", 10); len(next) != 1 || next[0].RunID != "next" {
				t.Errorf("the next minute: %+v", next)
			}
			c, err := l.SweepCursor(ctx)
			if err != nil || !c.Equal(runlog.SweepCursor{}) {
				t.Fatalf("a cursor before any sweep: %+v %v", c, err)
			}
			to := runlog.SweepCursor{Minute: m, After: got[0].Position(), Done: []string{got[2].Position()}}
			if err := l.MoveSweep(ctx, c, to); err != nil {
				t.Fatal(err)
			}
			if err := l.MoveSweep(ctx, c, runlog.SweepCursor{Minute: m.Add(time.Hour)}); !errors.Is(err, runlog.ErrSeqTaken) {
				t.Errorf("a move from where the cursor no longer is: %v", err)
			}
			moved, err := l.SweepCursor(ctx)
			if err != nil || !moved.Minute.Equal(m) || moved.After != to.After || moved.Version != 1 || !slices.Equal(moved.Done, to.Done) {
				t.Errorf("the cursor moved to %+v %v", moved, err)
			}
		})
	}
}

// TestWaitingContract: both stores file a run's entry over one filed for the same or an
// earlier commit of the run, or for another run of its id, only; remove it only when it was
// filed for an earlier commit of the run, or is the very entry named (its commit and time); list
// a tenant's entries in run id order after a run id; and keep tenants apart.
func TestWaitingContract(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 123456000, time.UTC)
	tally := interrupt.Tally{Approvals: 1, Required: 2}
	entry := func(tenant, id string, seq int64) runlog.Waiting {
		return runlog.Waiting{Key: runlog.Key{Tenant: tenant, RunID: id}, Seq: seq, At: t0.Add(time.Duration(seq) * time.Second), Origin: "first-run",
			Pending: []runlog.Summary{
				{NodeID: "approve", InterruptID: "int_1", Key: "k1", Kind: interrupt.KindApproval, Title: "Invoice ✓", Seq: 1, RequestedAt: t0, Deadline: t0.Add(time.Hour), Tally: &tally},
				{NodeID: "ask", InterruptID: "int_2", Key: "k2", Kind: interrupt.KindClarification, Seq: seq, RequestedAt: t0.Add(time.Second)},
			}}
	}
	for name, open := range logs {
		t.Run(name, func(t *testing.T) {
			l := open(t)
			for _, w := range []runlog.Waiting{
				entry("acme", "r2", 5), entry("acme", "r1", 1), entry("acme", "r3", 9),
				entry("acme", "r2", 3), // a record read late does not move it back
				entry("acme", "r1", 4), entry("evilcorp", "r1", 2),
			} {
				if err := l.FileWaiting(ctx, w); err != nil {
					t.Fatal(err)
				}
			}
			list := func(after string, limit int) []runlog.Waiting {
				t.Helper()
				got, err := l.WaitingRuns(ctx, "acme", after, limit)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			want := []runlog.Waiting{entry("acme", "r1", 4), entry("acme", "r2", 5), entry("acme", "r3", 9)}
			if got := list("", 10); !reflect.DeepEqual(got, want) {
				t.Fatalf("the index: %+v, want %+v", got, want)
			}
			if got := list("r1", 1); !reflect.DeepEqual(got, want[1:2]) {
				t.Errorf("a page after r1: %+v", got)
			}
			for _, w := range []runlog.Waiting{
				entry("acme", "r1", 5),   // as of a commit after r1's entry
				entry("acme", "r2", 5),   // as of r2's entry's own commit
				entry("acme", "r3", 8),   // as of a commit before r3's entry: kept
				entry("acme", "gone", 4), // no entry
			} {
				if err := l.UnfileWaiting(ctx, w); err != nil {
					t.Errorf("removing %+v: %v", w, err)
				}
			}
			if got := list("", 10); !reflect.DeepEqual(got, want[2:]) {
				t.Errorf("after the removals: %+v, want %+v", got, want[2:])
			}
			if got, err := l.WaitingRuns(ctx, "evilcorp", "", 10); err != nil || !reflect.DeepEqual(got, []runlog.Waiting{entry("evilcorp", "r1", 2)}) {
				t.Errorf("the other tenant's index: %+v %v", got, err)
			}
			if err := l.FileWaiting(ctx, entry("acme", "a#b", 1)); !errors.Is(err, runlog.ErrInvalidKey) {
				t.Errorf("a run id that is no key: %v", err)
			}
			// A run id reused after its run expired is another run: its entry replaces the old
			// run's whatever their seqs, its removal takes the old run's (dead) entry, and its
			// own entry goes only as of its own later commits.
			reused := entry("acme", "r3", 3)
			reused.Origin = "second-run"
			if err := l.FileWaiting(ctx, reused); err != nil {
				t.Fatal(err)
			}
			earlier := reused
			earlier.Seq = 2
			if err := l.UnfileWaiting(ctx, earlier); err != nil {
				t.Fatal(err)
			}
			if got := list("", 10); !reflect.DeepEqual(got, []runlog.Waiting{reused}) {
				t.Errorf("after a reused id's request and a removal as of its earlier commit: %+v, want %+v", got, reused)
			}
			if err := l.FileWaiting(ctx, entry("acme", "r4", 9)); err != nil {
				t.Fatal(err)
			}
			again := entry("acme", "r4", 1)
			again.Origin = "second-run"
			if err := l.UnfileWaiting(ctx, again); err != nil {
				t.Fatal(err)
			}
			if got := list("", 10); !reflect.DeepEqual(got, []runlog.Waiting{reused}) {
				t.Errorf("after a reused id's removal of the old run's entry: %+v, want %+v", got, reused)
			}
			// Newer: whether the log holds a commit after a seq.
			k := runlog.Key{Tenant: "acme", RunID: "newer"}
			for seq := int64(1); seq <= 3; seq++ {
				if err := l.Append(ctx, k, commitOf(seq, `{"kind":"custom","key":"k","data":{"customKind":"x"}}`)); err != nil {
					t.Fatal(err)
				}
			}
			// An expired commit counts: the entry's run is gone, or its id taken again.
			if _, err := l.Retain(ctx, k, time.Now().Add(-time.Second), 1000); err != nil {
				t.Fatal(err)
			}
			for seq, want := range map[int64]bool{0: true, 2: true, 3: false, 9: false} {
				if got, err := l.Newer(ctx, k, seq); err != nil || got != want {
					t.Errorf("Newer(%d): %v %v, want %v", seq, got, err, want)
				}
			}
			if got, err := l.Newer(ctx, runlog.Key{Tenant: "acme", RunID: "none"}, 0); err != nil || got {
				t.Errorf("Newer of no run: %v %v", got, err)
			}
		})
	}
}

// TestRetentionContract: both stores give every item of a run (its commits, checkpoint and
// archive) its expiry, budget by budget; read a run whose items expired as no run, and let a new
// run of the same id write over them; a retained run not yet expired reads as before.
func TestRetentionContract(t *testing.T) {
	ctx := context.Background()
	k := runlog.Key{Tenant: "acme", RunID: "r1"}
	later := runlog.Key{Tenant: "acme", RunID: "later"}
	ref := runlog.Ref{Kind: runlog.RefKey, Name: "k1"}
	for name, open := range logs {
		t.Run(name, func(t *testing.T) {
			l := open(t)
			for _, run := range []runlog.Key{k, later} {
				for seq := int64(1); seq <= 3; seq++ {
					if err := l.Append(ctx, run, commitOf(seq, `{}`)); err != nil {
						t.Fatal(err)
					}
				}
				if err := l.Checkpoint(ctx, run, &runlog.Checkpoint{Seq: 2, Commit: "c2", Pending: []runlog.Saved{}, Archived: true}, []runlog.Found{{Ref: ref, Value: json.RawMessage(`"x"`)}}); err != nil {
					t.Fatal(err)
				}
			}
			if more, err := l.Retain(ctx, later, time.Now().Add(time.Hour), 100); err != nil || more {
				t.Fatalf("retain: %v %v", more, err)
			}
			if cp, got, _ := l.Tail(ctx, later); cp == nil || len(got) != 1 {
				t.Fatalf("a retained run before its expiry: %+v and %d commits", cp, len(got))
			}
			past := time.Now().Add(-time.Second)
			if more, err := l.Retain(ctx, k, past, 3); err != nil || !more {
				t.Fatalf("a first budget of 3 of 5 items: more %v, %v", more, err)
			}
			if more, err := l.Retain(ctx, k, past, 3); err != nil || more {
				t.Fatalf("the rest: more %v, %v", more, err)
			}
			if got, _ := l.Read(ctx, k, 0, 0); len(got) != 0 {
				t.Errorf("a run past its expiry reads %d commits", len(got))
			}
			if cp, got, _ := l.Tail(ctx, k); cp != nil || len(got) != 0 {
				t.Errorf("a run past its expiry: checkpoint %+v, %d commits", cp, len(got))
			}
			if found, _ := l.Lookup(ctx, k, []runlog.Ref{ref}); len(found) != 0 {
				t.Errorf("its archive: %+v", found)
			}
			if err := l.Append(ctx, k, commitOf(1, `{"anew":true}`)); err != nil {
				t.Fatalf("a new run over an expired one: %v", err)
			}
			if cp, got, _ := l.Tail(ctx, k); cp != nil || len(got) != 1 || string(got[0].Events[0].Payload) != `{"anew":true}` {
				t.Errorf("the new run reads %+v, %+v", cp, got)
			}
		})
	}
}

// TestCheckpointContract: both stores read a run's newest checkpoint and only the commits after
// it, keep the newest checkpoint whatever the order of writes, answer archive items by ref, leave
// both out of a read of commits, and refuse a checkpoint, or an archive item, they cannot hold
// without changing the checkpoint.
// A writer that died after its archive items and before its checkpoint leaves the older
// checkpoint read with more commits after it.
func TestCheckpointContract(t *testing.T) {
	ctx := context.Background()
	k := runlog.Key{Tenant: "acme", RunID: "r1"}
	at := func(seq int64) *runlog.Checkpoint {
		return &runlog.Checkpoint{Seq: seq, Commit: fmt.Sprintf("c%d", seq), At: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), Pending: []runlog.Saved{}, Open: []string{"conv-1"}, Archived: true}
	}
	kept := runlog.Found{Ref: runlog.Ref{Kind: runlog.RefKey, Name: "a key with any character: #/é"}, Value: json.RawMessage(`{"id":"int_1"}`)}
	idem := runlog.Found{Ref: runlog.Ref{Kind: runlog.RefIdem, Name: "sub:alice\nk1"}, Value: json.RawMessage(`{"Key":"k1"}`)}
	for name, open := range logs {
		t.Run(name, func(t *testing.T) {
			l := open(t)
			for seq := int64(1); seq <= 40; seq++ {
				if err := l.Append(ctx, k, commitOf(seq, `{}`)); err != nil {
					t.Fatal(err)
				}
			}
			if cp, tail, err := l.Tail(ctx, k); err != nil || cp != nil || len(tail) != 40 || tail[0].Seq != 1 || tail[39].Seq != 40 {
				t.Fatalf("a run without a checkpoint: %+v, %d commits, %v", cp, len(tail), err)
			}
			if err := l.Checkpoint(ctx, k, at(32), []runlog.Found{kept}); err != nil {
				t.Fatal(err)
			}
			if err := l.Checkpoint(ctx, k, at(16), []runlog.Found{idem}); err != nil {
				t.Fatal(err) // an older checkpoint written late: its archive stays, it does not
			}
			cp, tail, err := l.Tail(ctx, k)
			if err != nil || cp == nil || cp.Seq != 32 || len(cp.Open) != 1 || len(tail) != 8 || tail[0].Seq != 33 || tail[7].Seq != 40 {
				t.Fatalf("the tail: %+v, %d commits, %v", cp, len(tail), err)
			}
			missing := runlog.Ref{Kind: runlog.RefKey, Name: "never"}
			found, err := l.Lookup(ctx, k, []runlog.Ref{kept.Ref, idem.Ref, missing})
			if err != nil || len(found) != 2 {
				t.Fatalf("lookup: %+v %v", found, err)
			}
			for _, f := range found {
				if want := map[runlog.Ref]string{kept.Ref: string(kept.Value), idem.Ref: string(idem.Value)}[f.Ref]; string(f.Value) != want {
					t.Errorf("%+v holds %s, want %s", f.Ref, f.Value, want)
				}
			}
			if found, _ := l.Lookup(ctx, runlog.Key{Tenant: "evilcorp", RunID: "r1"}, []runlog.Ref{kept.Ref}); len(found) != 0 {
				t.Errorf("another tenant's run reads the archive: %+v", found)
			}
			if all, err := l.Read(ctx, k, 0, 0); err != nil || len(all) != 40 {
				t.Errorf("a read of commits: %d, %v", len(all), err)
			}
			if page, err := l.Read(ctx, k, 30, 5); err != nil || len(page) != 5 || page[0].Seq != 31 {
				t.Errorf("a page of commits: %+v, %v", page, err)
			}
			huge := at(40)
			huge.Open = []string{strings.Repeat("x", 500<<10)}
			var tooLarge *runlog.TooLargeError
			if err := l.Checkpoint(ctx, k, huge, nil); !errors.As(err, &tooLarge) {
				t.Errorf("a checkpoint too large: %v", err)
			}
			hugeItem := runlog.Found{Ref: runlog.Ref{Kind: runlog.RefKey, Name: "huge"}, Value: json.RawMessage(`"` + strings.Repeat("x", 500<<10) + `"`)}
			if err := l.Checkpoint(ctx, k, at(40), []runlog.Found{hugeItem}); !errors.As(err, &tooLarge) {
				t.Errorf("an archive item too large: %v", err)
			}
			if cp, _, _ := l.Tail(ctx, k); cp == nil || cp.Seq != 32 {
				t.Errorf("after a refused checkpoint: %+v", cp)
			}
		})
	}
}
