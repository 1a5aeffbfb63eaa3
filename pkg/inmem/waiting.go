package inmem

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// FileWaiting files w over an entry it replaces only, answering that entry.
func (l *Store) FileWaiting(_ context.Context, w runlog.Waiting) (runlog.Waiting, bool, error) {
	if !w.Key.Valid() {
		return runlog.Waiting{}, false, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	runs := l.waiting[w.Key.Tenant]
	if runs == nil {
		runs = map[string]runlog.Waiting{}
		l.waiting[w.Key.Tenant] = runs
	}
	filed, ok := runs[w.Key.RunID]
	if ok && !w.Replaces(filed) {
		return runlog.Waiting{}, false, nil
	}
	w.At = w.At.Truncate(time.Microsecond).UTC() // as the table keeps it
	w.Pending = slices.Clone(w.Pending)
	for i := range w.Pending {
		w.Pending[i].RequestedAt = w.Pending[i].RequestedAt.UTC()
		w.Pending[i].Deadline = w.Pending[i].Deadline.UTC()
		w.Pending[i].Inboxes = slices.Clone(w.Pending[i].Inboxes)
	}
	runs[w.Key.RunID] = w
	return filed, true, nil
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

// UnfileWaiting removes w's run's entry if w removes it, answering that entry.
func (l *Store) UnfileWaiting(_ context.Context, w runlog.Waiting) (runlog.Waiting, bool, error) {
	if !w.Key.Valid() {
		return runlog.Waiting{}, false, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	filed, ok := l.waiting[w.Key.Tenant][w.Key.RunID]
	if !ok || !w.Removes(filed) {
		return runlog.Waiting{}, false, nil
	}
	delete(l.waiting[w.Key.Tenant], w.Key.RunID)
	return filed, true, nil
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

// FileAssignment files a at its place in its inbox over an entry it replaces only.
func (l *Store) FileAssignment(_ context.Context, a runlog.Assignment) error {
	if !a.Key.Valid() || a.Ref == "" {
		return runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	box := [2]string{a.Key.Tenant, a.Ref}
	if l.assigned[box] == nil {
		l.assigned[box] = map[string]runlog.Assignment{}
	}
	place := a.Place()
	if filed, ok := l.assigned[box][place]; ok && filed.Origin == a.Origin && filed.Seq > a.Seq {
		return nil
	}
	a.Summary.RequestedAt, a.Summary.Deadline = a.Summary.RequestedAt.UTC(), a.Summary.Deadline.UTC()
	a.Summary.Inboxes = nil // the waiting entry's, not the inbox's
	a.Voters = slices.Clone(a.Voters)
	l.assigned[box][place] = a
	return nil
}

// UnfileAssignment removes the entry at a's place if a removes it.
func (l *Store) UnfileAssignment(_ context.Context, a runlog.Assignment) error {
	if !a.Key.Valid() || a.Ref == "" {
		return runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	box := [2]string{a.Key.Tenant, a.Ref}
	place := a.Place()
	if filed, ok := l.assigned[box][place]; ok && (filed.Origin != a.Origin || filed.Seq <= a.Seq) {
		delete(l.assigned[box], place)
	}
	return nil
}

// Assigned lists the tenant's inbox ref after place after, in place order, at most limit.
func (l *Store) Assigned(_ context.Context, tenant, ref, after string, limit int) ([]runlog.Assignment, error) {
	if !runlog.ValidID(tenant) || ref == "" {
		return nil, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []runlog.Assignment
	for place, a := range l.assigned[[2]string{tenant, ref}] {
		if place > after {
			a.Voters = slices.Clone(a.Voters)
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b runlog.Assignment) int { return strings.Compare(a.Place(), b.Place()) })
	return out[:min(len(out), limit)], nil
}
