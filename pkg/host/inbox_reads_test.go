package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// logReads counts the reads of runs' logs a store answers: a log's tail, its commits, its
// archive, and the check that a commit follows an entry (Waiting.Newer).
type logReads struct {
	host.Store
	mu    sync.Mutex
	reads int
}

func (l *logReads) count() {
	l.mu.Lock()
	l.reads++
	l.mu.Unlock()
}

func (l *logReads) Tail(ctx context.Context, k runlog.Key) (*runlog.Checkpoint, []runlog.Commit, error) {
	l.count()
	return l.Store.Tail(ctx, k)
}

func (l *logReads) Read(ctx context.Context, k runlog.Key, after int64, limit int) ([]runlog.Commit, error) {
	l.count()
	return l.Store.Read(ctx, k, after, limit)
}

func (l *logReads) Lookup(ctx context.Context, k runlog.Key, refs []runlog.Ref) ([]runlog.Found, error) {
	l.count()
	return l.Store.Lookup(ctx, k, refs)
}

func (l *logReads) Newer(ctx context.Context, k runlog.Key, seq int64) (bool, error) {
	l.count()
	return l.Store.Newer(ctx, k, seq)
}

func (l *logReads) take() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.reads
	l.reads = 0
	return n
}

// refusedInbox is a host over counted in-memory stores with ten runs, each waiting on an
// approval that names alice but binds a second field she does not pass (extra, in the payload's
// data), reindexed.
func refusedInbox(tb testing.TB, extra string) (*host.Host, *logReads) {
	tb.Helper()
	sch, err := schema.Load()
	if err != nil {
		tb.Fatal(err)
	}
	counted := &logReads{Store: inmem.New()}
	h := host.New(host.Env{Stores: host.StoresOf(counted), Schemas: sch}, host.Config{RefKinds: interrupt.DefaultRefKinds})
	engine := interrupt.Principal{Subject: "engine", Tenant: "acme"}
	for i := range 10 {
		run := fmt.Sprintf("r%02d", i)
		payload := fmt.Sprintf(`{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"doc","title":"Approve %d","actions":["accept"],"approversList":["alice","bob"]%s}}`, i, extra)
		if _, _, err := h.RequestInterrupt(context.Background(), engine, run, host.Request{NodeID: "gate", Payload: json.RawMessage(payload)}); err != nil {
			tb.Fatal(err)
		}
		if err := h.Reindex(context.Background(), runlog.Key{Tenant: "acme", RunID: run}); err != nil {
			tb.Fatal(err)
		}
	}
	counted.take()
	return h, counted
}

// TestAnInboxItCannotDecideReadsNoLog: an approver's inbox over ten approvals that name her but
// bind a group or role she does not hold reads no run's log, nor asks any whether it went on:
// the entries keep what of the deciders their inbox does not prove (Assignment.Beyond). The
// holder of the group or role has each listed, a run checked once, and so does everyone where
// the second field would not fit an entry (its reader judged by the log, a read per run).
func TestAnInboxItCannotDecideReadsNoLog(t *testing.T) {
	t.Parallel()
	var roles []string
	for i := range 6 { // 6 refs of 250 bytes: past interrupt.MaxBeyondBytes
		roles = append(roles, fmt.Sprintf("%0250d", i))
	}
	long, _ := json.Marshal(roles)
	for _, tt := range []struct {
		name      string
		extra     string
		who       interrupt.Principal
		items     int
		wantReads int
	}{
		{"a group she is not in", `,"approverGroupRefs":["finance"]`, interrupt.Principal{Subject: "alice", Tenant: "acme", Groups: []string{"sales"}}, 0, 0},
		{"a role she does not hold", `,"approverRoleRefs":["manager"]`, interrupt.Principal{Subject: "alice", Tenant: "acme", Roles: []string{"clerk"}}, 0, 0},
		{"the group's member", `,"approverGroupRefs":["finance"]`, interrupt.Principal{Subject: "alice", Tenant: "acme", Groups: []string{"finance"}}, 10, 10},
		{"roles too long for an entry", `,"approverRoleRefs":` + string(long), interrupt.Principal{Subject: "alice", Tenant: "acme", Roles: []string{"clerk"}}, 0, 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, counted := refusedInbox(t, tt.extra)
			page, err := h.Inbox(context.Background(), tt.who, "", 0)
			if err != nil || len(page.Items) != tt.items {
				t.Fatalf("the inbox: %d items %v, want %d", len(page.Items), err, tt.items)
			}
			if got := counted.take(); got != tt.wantReads {
				t.Errorf("the inbox read runs' logs %d times, want %d", got, tt.wantReads)
			}
		})
	}
}

// BenchmarkInboxItCannotDecide is a page of an approver's inbox over ten approvals that bind a
// group she is not in.
func BenchmarkInboxItCannotDecide(b *testing.B) {
	h, _ := refusedInbox(b, `,"approverGroupRefs":["finance"]`)
	alice := interrupt.Principal{Subject: "alice", Tenant: "acme", Groups: []string{"sales"}}
	b.ReportAllocs()
	for b.Loop() {
		if page, err := h.Inbox(context.Background(), alice, "", 0); err != nil || len(page.Items) != 0 {
			b.Fatal(page, err)
		}
	}
}
