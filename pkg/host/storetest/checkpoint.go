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

// checkpointContract: every store reads a run's newest checkpoint and only the commits after
// it, keeps the newest checkpoint whatever the order of writes, answers archive items by ref,
// leaves both out of a read of commits, and refuses a checkpoint, or an archive item, it cannot
// hold without changing the checkpoint.
// A writer that died after its archive items and before its checkpoint leaves the older
// checkpoint read with more commits after it.
func checkpointContract(t *testing.T, open func(t *testing.T) host.Store) {
	ctx := context.Background()
	k := runlog.Key{Tenant: "acme", RunID: "r1"}
	at := func(seq int64) *runlog.Checkpoint {
		return &runlog.Checkpoint{Seq: seq, Commit: fmt.Sprintf("c%d", seq), At: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), Pending: []runlog.Saved{}, Open: []string{"conv-1"}, Archived: true}
	}
	kept := runlog.Found{Ref: runlog.Ref{Kind: runlog.RefKey, Name: "a key with any character: #/é"}, Value: json.RawMessage(`{"id":"int_1"}`)}
	idem := runlog.Found{Ref: runlog.Ref{Kind: runlog.RefIdem, Name: "sub:alice\nk1"}, Value: json.RawMessage(`{"Key":"k1"}`)}
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
}
