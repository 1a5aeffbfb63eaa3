package inmem

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// FileWaiting files w over an entry it replaces only.
func (l *Store) FileWaiting(_ context.Context, w runlog.Waiting) error {
	if !w.Key.Valid() {
		return runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	runs := l.waiting[w.Key.Tenant]
	if runs == nil {
		runs = map[string]runlog.Waiting{}
		l.waiting[w.Key.Tenant] = runs
	}
	if filed, ok := runs[w.Key.RunID]; !ok || w.Replaces(filed) {
		w.At = w.At.Truncate(time.Microsecond).UTC() // as the table keeps it
		w.Pending = slices.Clone(w.Pending)
		for i := range w.Pending {
			w.Pending[i].RequestedAt = w.Pending[i].RequestedAt.UTC()
			w.Pending[i].Deadline = w.Pending[i].Deadline.UTC()
		}
		runs[w.Key.RunID] = w
	}
	return nil
}

// Newer reports whether the log of run k holds a commit after seq, live or expired.
func (l *Store) Newer(_ context.Context, k runlog.Key, seq int64) (bool, error) {
	if !k.Valid() {
		return false, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return seq < int64(len(l.commits[k])), nil
}

// UnfileWaiting removes w's run's entry if w removes it.
func (l *Store) UnfileWaiting(_ context.Context, w runlog.Waiting) error {
	if !w.Key.Valid() {
		return runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if filed, ok := l.waiting[w.Key.Tenant][w.Key.RunID]; ok && w.Removes(filed) {
		delete(l.waiting[w.Key.Tenant], w.Key.RunID)
	}
	return nil
}

// WaitingRuns lists the tenant's entries after run id after, in run id order, at most limit.
func (l *Store) WaitingRuns(_ context.Context, tenant, after string, limit int) ([]runlog.Waiting, error) {
	if !runlog.ValidID(tenant) {
		return nil, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []runlog.Waiting
	for id, w := range l.waiting[tenant] {
		if id > after {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b runlog.Waiting) int { return strings.Compare(a.Key.RunID, b.Key.RunID) })
	return out[:min(len(out), limit)], nil
}
