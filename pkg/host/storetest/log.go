package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// logContract: every store appends conditionally on the seq, pages, keeps tenants apart,
// refuses commits it cannot hold without writing, stores payloads byte for byte, gives
// conversations one owner each, refuses keys that name no one run in every port, and reads no
// run as nothing.
func logContract(t *testing.T, open func(t *testing.T) host.Store) {
	ctx := context.Background()
	acme, evil := runlog.Key{Tenant: "acme", RunID: "r1"}, runlog.Key{Tenant: "evilcorp", RunID: "r1"}
	t.Run("append is conditional on the seq", func(t *testing.T) {
		t.Parallel()
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
		t.Parallel()
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
		t.Parallel()
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
		t.Parallel()
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
		t.Parallel()
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
				"file":       third(l.FileWaiting(ctx, w)),
				"unfile":     third(l.UnfileWaiting(ctx, w)),
			} {
				if !errors.Is(err, runlog.ErrInvalidKey) {
					t.Errorf("%s of %+v: %v", op, k, err)
				}
			}
		}
		if _, err := l.ClaimConversation(ctx, runlog.ConversationClaim{Tenant: "acme#conv#x", ConversationID: "c", RunID: "r1", At: time.Now()}); !errors.Is(err, runlog.ErrInvalidKey) {
			t.Errorf("a claim in tenant acme#conv#x: %v", err)
		}
		if _, err := l.WaitingRuns(ctx, "acme#waiting#", "", 10); !errors.Is(err, runlog.ErrInvalidKey) {
			t.Errorf("the waiting runs of tenant acme#waiting#: %v", err)
		}
	})
	t.Run("no run reads as nothing", func(t *testing.T) {
		t.Parallel()
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
		t.Parallel()
		l := open(t)
		t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
		claim := func(run, from string, at time.Time) (runlog.Claim, error) {
			return l.ClaimConversation(ctx, runlog.ConversationClaim{Tenant: "acme", ConversationID: "conv-1", RunID: run, At: at, TakeOverFrom: from})
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
		if c, err := l.ClaimConversation(ctx, runlog.ConversationClaim{Tenant: "evilcorp", ConversationID: "conv-1", RunID: "x", At: t0}); err != nil || c.RunID != "x" {
			t.Errorf("another tenant's conv-1: %+v %v", c, err)
		}
	})
}
