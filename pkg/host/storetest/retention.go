package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// retentionContract: every store gives every item of a run (its commits, checkpoint and
// archive) its expiry, budget by budget; reads a run whose items expired as no run, and lets a new
// run of the same id write over them; a retained run not yet expired reads as before.
func retentionContract(t *testing.T, open func(t *testing.T) host.Store) {
	ctx := context.Background()
	k := runlog.Key{Tenant: "acme", RunID: "r1"}
	later := runlog.Key{Tenant: "acme", RunID: "later"}
	ref := runlog.Ref{Kind: runlog.RefKey, Name: "k1"}
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
}
