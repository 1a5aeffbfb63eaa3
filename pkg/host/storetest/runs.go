package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// runsContract: every store files a run's entry over one of the same or an earlier commit of the
// run, or of another run of its id, only; lists a tenant's entries newest activity first, or in
// run id order for a prefix, filtered by phase, time and words of titles, paged by cursor with
// no entry twice and none left out; reads at most runlog.MaxRunsRead entries for a page; leaves
// an entry past its expiry out; and keeps tenants apart.
func runsContract(t *testing.T, open func(t *testing.T) host.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 123456000, time.UTC)
	entry := func(tenant, id string, seq int64, ph runlog.Phase, titles ...string) runlog.RunEntry {
		e := runlog.RunEntry{Key: runlog.Key{Tenant: tenant, RunID: id}, Seq: seq, At: t0.Add(time.Duration(seq) * time.Minute), Origin: "o-" + id,
			Phase: ph, Titles: titles}
		if ph == runlog.PhaseWaiting {
			e.Waiting = 1
		}
		if ph == runlog.PhaseCompleted || ph == runlog.PhaseCancelled {
			e.Expires = time.Now().Add(24 * time.Hour).Truncate(time.Second).UTC()
		}
		return e
	}
	l := open(t)
	file := func(e runlog.RunEntry) bool {
		t.Helper()
		filed, err := l.FileRun(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		return filed
	}
	all := []runlog.RunEntry{
		entry("acme", "pay-1", 3, runlog.PhaseWaiting, "Pay invoice 4471", "Which cost centre?"),
		entry("acme", "pay-2", 5, runlog.PhaseCancelled, "Pay invoice 4472"),
		entry("acme", "ship-1", 7, runlog.PhaseCompleted, "Ship order 7"),
		entry("acme", "ship-2", 2, runlog.PhaseExpired, "Ship order 8 to Zürich"),
		entry("acme", "idle", 4, runlog.PhaseRunning),
	}
	for _, e := range all {
		if !file(e) {
			t.Fatalf("filing %s first: not filed", e.Key.RunID)
		}
	}
	if file(entry("acme", "pay-2", 4, runlog.PhaseWaiting, "Pay invoice 4472")) {
		t.Error("an entry of an earlier commit was filed over a later one")
	}
	if !file(all[1]) {
		t.Error("the same entry again was not filed")
	}
	if !file(entry("evilcorp", "pay-1", 9, runlog.PhaseWaiting, "Pay invoice 4471")) {
		t.Error("another tenant's run of the same id was not filed")
	}
	list := func(q runlog.RunQuery) []runlog.RunEntry {
		t.Helper()
		var got []runlog.RunEntry
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatalf("%+v: more than 20 pages", q)
			}
			page, err := l.Runs(ctx, "acme", q)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Runs) > q.Limit {
				t.Fatalf("%+v: a page of %d", q, len(page.Runs))
			}
			got = append(got, page.Runs...)
			if page.Next == "" {
				return got
			}
			q.After = page.Next
		}
	}
	ids := func(es []runlog.RunEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Key.RunID)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		q    runlog.RunQuery
		want []string
	}{
		{"every run, newest activity first", runlog.RunQuery{}, []string{"ship-1", "pay-2", "idle", "pay-1", "ship-2"}},
		{"of a phase", runlog.RunQuery{Phase: runlog.PhaseCancelled}, []string{"pay-2"}},
		{"expired", runlog.RunQuery{Phase: runlog.PhaseExpired}, []string{"ship-2"}},
		{"active since", runlog.RunQuery{Since: t0.Add(4 * time.Minute)}, []string{"ship-1", "pay-2", "idle"}},
		{"active until, not included", runlog.RunQuery{Until: t0.Add(4 * time.Minute)}, []string{"pay-1", "ship-2"}},
		{"within a range, of a phase", runlog.RunQuery{Since: t0, Until: t0.Add(6 * time.Minute), Phase: runlog.PhaseWaiting}, []string{"pay-1"}},
		{"a word", runlog.RunQuery{Words: []string{"invoice"}}, []string{"pay-2", "pay-1"}},
		{"a word's start, any title", runlog.RunQuery{Words: []string{"cost"}}, []string{"pay-1"}},
		{"every word", runlog.RunQuery{Words: []string{"ship", "zür"}}, []string{"ship-2"}},
		{"no word inside another", runlog.RunQuery{Words: []string{"voice"}}, nil},
		{"a prefix, in id order", runlog.RunQuery{Prefix: "pay-"}, []string{"pay-1", "pay-2"}},
		{"a prefix and a phase", runlog.RunQuery{Prefix: "ship", Phase: runlog.PhaseCompleted}, []string{"ship-1"}},
		{"a prefix of none", runlog.RunQuery{Prefix: "zzz"}, nil},
	} {
		for _, limit := range []int{1, 2, 50} {
			q := tt.q
			q.Limit = limit
			if got := ids(list(q)); !slices.Equal(got, tt.want) {
				t.Errorf("%s, pages of %d: %v, want %v", tt.name, limit, got, tt.want)
			}
		}
	}
	got := list(runlog.RunQuery{Prefix: "pay-1", Limit: 10})
	if want := []runlog.RunEntry{all[0]}; !reflect.DeepEqual(got, want) {
		t.Errorf("pay-1 reads back as\n%+v, want\n%+v", got, want)
	}
	if got := list(runlog.RunQuery{Prefix: "pay-2", Limit: 10}); len(got) != 1 || !got[0].Expires.Equal(all[1].Expires) {
		t.Errorf("pay-2 reads back as %+v, want its expiry %v", got, all[1].Expires)
	}
	gone := entry("acme", "gone", 20, runlog.PhaseCompleted, "Pay invoice 1")
	gone.Expires = time.Now().Add(-time.Minute).Truncate(time.Second)
	file(gone)
	if got := ids(list(runlog.RunQuery{Limit: 50})); slices.Contains(got, "gone") {
		t.Errorf("an entry past its expiry was listed: %v", got)
	}
	if _, err := l.FileRun(ctx, entry("acme", "no/id", 1, runlog.PhaseRunning)); !errors.Is(err, runlog.ErrInvalidKey) {
		t.Errorf("filing a run id that is no id: %v, want runlog.ErrInvalidKey", err)
	}
	if _, err := l.Runs(ctx, "no tenant", runlog.RunQuery{Limit: 1}); !errors.Is(err, runlog.ErrInvalidKey) {
		t.Errorf("listing a tenant that is no id: %v, want runlog.ErrInvalidKey", err)
	}

	// A page reads at most MaxRunsRead entries: a word only the oldest run's titles hold is found
	// over pages that end with a Next, none of them reading the whole index.
	bulk := open(t)
	n := runlog.MaxRunsRead + 50
	for i := range n {
		title := "Routine check"
		if i == 0 {
			title = "Rare audit"
		}
		e := entry("bulk", fmt.Sprintf("r%04d", i), int64(i+1), runlog.PhaseRunning, title)
		if _, err := bulk.FileRun(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	q := runlog.RunQuery{Words: []string{"rare"}, Limit: 10}
	page, err := bulk.Runs(ctx, "bulk", q)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 0 || page.Next == "" {
		t.Fatalf("the first page of a rare word: %d runs, next %q; want none, with a next (it reads at most %d)", len(page.Runs), page.Next, runlog.MaxRunsRead)
	}
	q.After = page.Next
	if page, err = bulk.Runs(ctx, "bulk", q); err != nil || len(page.Runs) != 1 || page.Runs[0].Key.RunID != "r0000" {
		t.Fatalf("the second page of a rare word: %+v %v, want r0000", page, err)
	}
}
