// Package storetest holds every policy.Store to one behaviour: each store's own tests run
// Exercise (pkg/inmem's and pkg/dynamo's), so the in-memory store the fast tests use answers as
// DynamoDB does.
package storetest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Exercise runs the contract on stores open makes, an empty one each call.
func Exercise(t *testing.T, open func(t *testing.T) policy.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	version := func(tool string, v int, approvers ...string) policy.Policy {
		return policy.Policy{Tool: tool, Version: v, SetBy: "ops", SetAt: t0.Add(time.Duration(v) * time.Minute),
			Rule: policy.Rule{ApproversList: approvers, RequiredApprovals: len(approvers), Actions: []string{"accept", "reject"}, TimeoutMs: 60_000}}
	}
	t.Run("versions append, the latest reads back whole", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		if _, err := st.Policy(ctx, "acme", "issue_refund"); !errors.Is(err, policy.ErrNotFound) {
			t.Fatalf("no policy: %v, want policy.ErrNotFound", err)
		}
		for _, p := range []policy.Policy{version("issue_refund", 1, "alice"), version("issue_refund", 2, "alice", "bob"), version(policy.Default, 1, "carol")} {
			if err := st.PutPolicy(ctx, "acme", p); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.PutPolicy(ctx, "acme", version("issue_refund", 2, "mallory")); !errors.Is(err, policy.ErrVersionTaken) {
			t.Errorf("a version put twice: %v, want policy.ErrVersionTaken", err)
		}
		if got, err := st.Policy(ctx, "acme", "issue_refund"); err != nil || !reflect.DeepEqual(got, version("issue_refund", 2, "alice", "bob")) {
			t.Errorf("latest %+v %v", got, err)
		}
		if _, err := st.Policy(ctx, "acme", "issue"); !errors.Is(err, policy.ErrNotFound) {
			t.Errorf("a tool whose name starts another's: %v, want policy.ErrNotFound", err)
		}
		if _, err := st.Policy(ctx, "globex", "issue_refund"); !errors.Is(err, policy.ErrNotFound) {
			t.Errorf("another tenant's: %v, want policy.ErrNotFound", err)
		}
		all, err := st.Policies(ctx, "acme")
		if err != nil || len(all) != 2 || all[0].Tool != policy.Default || all[1].Version != 2 {
			t.Errorf("list %+v %v, want the default, then issue_refund v2", all, err)
		}
		end := policy.Policy{Tool: "issue_refund", Version: 3, SetBy: "ops", SetAt: t0, Deleted: true}
		if err := st.PutPolicy(ctx, "acme", end); err != nil {
			t.Fatal(err)
		}
		if got, err := st.Policy(ctx, "acme", "issue_refund"); err != nil || !got.Deleted || got.Version != 3 {
			t.Errorf("after its end %+v %v, want version 3, deleted", got, err)
		}
		if all, err := st.Policies(ctx, "acme"); err != nil || len(all) != 1 || all[0].Tool != policy.Default {
			t.Errorf("list after an end %+v %v, want the default alone", all, err)
		}
		if all, err := st.Policies(ctx, "globex"); err != nil || len(all) != 0 {
			t.Errorf("another tenant's list %+v %v", all, err)
		}
	})
	t.Run("two writers of one version: one takes it", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { errs[i] = st.PutPolicy(ctx, "acme", version("deploy", 1, "alice")) })
		}
		wg.Wait()
		took := 0
		for _, err := range errs {
			switch {
			case err == nil:
				took++
			case !errors.Is(err, policy.ErrVersionTaken):
				t.Errorf("a writer that lost: %v, want policy.ErrVersionTaken", err)
			}
		}
		if took != 1 {
			t.Errorf("%d writers took version 1, want one", took)
		}
	})
	t.Run("a tenant that is no id is refused", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		if err := st.PutPolicy(ctx, "acme#x", version("deploy", 1, "alice")); !errors.Is(err, runlog.ErrInvalidKey) {
			t.Errorf("put: %v", err)
		}
		if _, err := st.Policy(ctx, "acme#x", "deploy"); !errors.Is(err, runlog.ErrInvalidKey) {
			t.Errorf("read: %v", err)
		}
		if _, err := st.Policies(ctx, "acme#x"); !errors.Is(err, runlog.ErrInvalidKey) {
			t.Errorf("list: %v", err)
		}
	})
}
