package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// Reindex stands in for the stream's consumer (read-models): it reindexes the runs of p's
// tenant that a step committed to.
func Reindex(t *testing.T, h *host.Host, p interrupt.Principal, runs ...string) {
	t.Helper()
	for _, run := range runs {
		if err := h.Reindex(context.Background(), runlog.Key{Tenant: p.Tenant, RunID: run}); err != nil {
			t.Fatal(err)
		}
	}
}

// Reading counts what a store's waiting reads return: the entries' summaries, encoded, and the
// reads of a run's log (its checkpoint and commits, with their payloads), so that a test sees
// what a list of pending interrupts costs, whatever the store.
type Reading struct {
	host.Store
	mu           sync.Mutex
	summaryBytes int
	// Logs is how many times a run's log was read; Filed how many inbox entries were written.
	Logs  int
	Filed int
}

// WaitingRuns counts the summaries' bytes of the entries read.
func (r *Reading) WaitingRuns(ctx context.Context, tenant, after string, limit int) ([]runlog.Waiting, error) {
	runs, err := r.Store.WaitingRuns(ctx, tenant, after, limit)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range runs {
		b, _ := json.Marshal(w.Pending)
		r.summaryBytes += len(b)
	}
	return runs, err
}

// Assigned counts the entries' bytes of the inbox entries read, as the summaries'.
func (r *Reading) Assigned(ctx context.Context, tenant, ref, after string, limit int) ([]runlog.Assignment, error) {
	found, err := r.Store.Assigned(ctx, tenant, ref, after, limit)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range found {
		b, _ := json.Marshal(a)
		r.summaryBytes += len(b)
	}
	return found, err
}

// Tail counts a read of a run's log.
func (r *Reading) Tail(ctx context.Context, k runlog.Key) (*runlog.Checkpoint, []runlog.Commit, error) {
	r.mu.Lock()
	r.Logs++
	r.mu.Unlock()
	return r.Store.Tail(ctx, k)
}

// PageCost is what a page of pending interrupts read: the entries' summaries (bytes) and the
// runs' logs the store returned, and the read units it consumed where the store counts them.
type PageCost struct {
	SummaryBytes, Logs int
	Units              float64
}

// APageCostsAPage: a page of runs waiting on 100 KB approvals reads what a page of small ones
// does, in the pending list and in an approver's inbox alike: the index's summaries (the inbox's
// entries) and, per run, one check that no commit follows its entry; no run's log, no payload. readUnits, where the store counts them (DynamoDB's request units), is the read
// units consumed so far, and a page of large approvals consumes no more than one of small ones;
// nil counts none. It answers the large page's cost, for what a store's own test checks of it.
func APageCostsAPage(t *testing.T, store host.Store, readUnits func() float64) PageCost {
	ctx := context.Background()
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	units := func() float64 {
		if readUnits == nil {
			return 0
		}
		return readUnits()
	}
	r := &Reading{Store: store}
	h := host.New(host.Env{Stores: host.StoresOf(r), Schemas: sch}, host.Config{})
	costs := map[int]PageCost{}
	for _, size := range []int{100, 100_000} {
		tenant := interrupt.Principal{Subject: "engine", Tenant: fmt.Sprintf("t%d", size)}
		for i := range 16 {
			run := fmt.Sprintf("r%02d", i)
			payload := fmt.Sprintf(`{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"doc","title":"Approve %s","actions":["accept"],"artifactData":{"body":%q}}}`, run, strings.Repeat("x", size))
			if _, _, err := h.RequestInterrupt(ctx, tenant, run, host.Request{NodeID: "approve", Payload: json.RawMessage(payload)}); err != nil {
				t.Fatal(err)
			}
			Reindex(t, h, tenant, run)
		}
		r.summaryBytes, r.Logs = 0, 0
		before := units()
		page, err := h.PendingInterrupts(ctx, tenant, "", 0)
		if err != nil || len(page.Interrupts) != 16 {
			t.Fatalf("page %+v %v", page, err)
		}
		costs[size] = PageCost{r.summaryBytes, r.Logs, units() - before}
		r.summaryBytes, r.Logs = 0, 0
		before = units()
		inbox, err := h.Inbox(ctx, interrupt.Principal{Subject: "alice", Tenant: tenant.Tenant}, "", 0)
		if err != nil || len(inbox.Items) != 16 {
			t.Fatalf("inbox %+v %v", inbox, err)
		}
		costs[-size] = PageCost{r.summaryBytes, r.Logs, units() - before}
	}
	// Summaries differ only in their times' digits; 16 runs' checks read no commit.
	for what, sizes := range map[string][2]int{"pending list": {100, 100_000}, "inbox": {-100, -100_000}} {
		small, large := costs[sizes[0]], costs[sizes[1]]
		if large.Logs != 0 || small.Logs != 0 || large.SummaryBytes > small.SummaryBytes+64 || large.SummaryBytes > 16<<10 || large.Units > small.Units {
			t.Errorf("a page of the %s of 16 runs with 100 KB approvals read %+v, with small ones %+v", what, large, small)
		}
	}
	return costs[100_000]
}

// FileAssignment counts an inbox entry written.
func (r *Reading) FileAssignment(ctx context.Context, a runlog.Assignment) error {
	r.mu.Lock()
	r.Filed++
	r.mu.Unlock()
	return r.Store.FileAssignment(ctx, a)
}

// ReadModelsAtABoundedCost is the probe's case (docs/design.md, "Read models"): three approvals
// of about 75 KB whose approversList names 100 refs of U+2028 characters, which JSON escapes to
// six bytes each. Their inboxes are bounded by encoded bytes, so the run's entry stays current:
// a list of the tenant's pending interrupts then reads no run's log and rewrites no inbox entry,
// and an inbox entry carries no approversList. Ten approvals alice is listed on but whose long
// role refs she does not hold cost her inbox no read of their run: each entry keeps the role
// refs its inbox does not prove (runlog.Assignment.Beyond, bounded), and refuses her by them.
func ReadModelsAtABoundedCost(t *testing.T, store host.Store) {
	t.Helper()
	ctx := context.Background()
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	r := &Reading{Store: store}
	h := host.New(host.Env{Stores: host.StoresOf(r), Schemas: sch}, host.Config{RefKinds: interrupt.DefaultRefKinds})
	engine := interrupt.Principal{Subject: "engine", Tenant: "probe"}
	var refs []string
	for i := range 100 {
		refs = append(refs, fmt.Sprintf("%s%03d", strings.Repeat("\u2028", 120), i))
	}
	list, _ := json.Marshal(refs)
	for i := range 3 {
		payload := fmt.Sprintf(`{"kind":"approval","key":"k%d","data":{"artifactId":"a","artifactType":"doc","title":"Approve %d","actions":["accept"],"approversList":%s}}`, i, i, list)
		if _, _, err := h.RequestInterrupt(ctx, engine, "r1", host.Request{NodeID: fmt.Sprint("approve-", i), Payload: json.RawMessage(payload)}); err != nil {
			t.Fatal(err)
		}
	}
	Reindex(t, h, engine, "r1")
	for range 2 {
		r.Logs, r.Filed, r.summaryBytes = 0, 0, 0
		page, err := h.PendingInterrupts(ctx, engine, "", 0)
		if err != nil || len(page.Interrupts) != 3 {
			t.Fatalf("page %+v %v", page, err)
		}
		if r.Logs != 0 || r.Filed != 0 {
			t.Errorf("a list of the probe's run read %d logs and wrote %d inbox entries, want none", r.Logs, r.Filed)
		}
	}
	roles, _ := json.Marshal([]string{strings.Repeat("r", 250), strings.Repeat("s", 250)})
	for i := range 10 {
		payload := fmt.Sprintf(`{"kind":"approval","key":"a%d","data":{"artifactId":"a","artifactType":"doc","title":"Approve %d","actions":["accept"],"approversList":["alice"],"approverRoleRefs":%s}}`, i, i, roles)
		if _, _, err := h.RequestInterrupt(ctx, engine, "r2", host.Request{NodeID: fmt.Sprint("gate-", i), Payload: json.RawMessage(payload)}); err != nil {
			t.Fatal(err)
		}
	}
	Reindex(t, h, engine, "r2")
	r.Logs, r.Filed, r.summaryBytes = 0, 0, 0
	alice := interrupt.Principal{Subject: "alice", Tenant: "probe", Roles: []string{"clerk"}}
	inbox, err := h.Inbox(ctx, alice, "", 0)
	if err != nil || len(inbox.Items) != 0 {
		t.Fatalf("alice's inbox %+v %v, want nothing she may decide", inbox, err)
	}
	if r.Logs != 0 || r.Filed != 0 || r.summaryBytes > 16*1024 {
		t.Errorf("alice's inbox read %d logs, %d bytes of entries, and wrote %d entries; want no log, a few KB, none", r.Logs, r.summaryBytes, r.Filed)
	}
	manager := interrupt.Principal{Subject: "alice", Tenant: "probe", Roles: []string{strings.Repeat("s", 250)}}
	if inbox, err := h.Inbox(ctx, manager, "", 0); err != nil || len(inbox.Items) != 10 {
		t.Fatalf("alice's inbox as the role's holder: %d items, %v; want 10", len(inbox.Items), err)
	}
}
