package inmem

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// FileRun files e over an entry it replaces only.
func (l *Store) FileRun(_ context.Context, e runlog.RunEntry) (bool, error) {
	if !e.Key.Valid() {
		return false, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	runs := l.runIndex[e.Key.Tenant]
	if runs == nil {
		runs = map[string]runlog.RunEntry{}
		l.runIndex[e.Key.Tenant] = runs
	}
	if filed, ok := runs[e.Key.RunID]; ok && !expired(filed.Expires) && !e.Replaces(filed) {
		return false, nil
	}
	e.At = e.At.Truncate(time.Microsecond).UTC() // as the table keeps it
	e.Expires = e.Expires.Truncate(time.Second).UTC()
	e.Titles = slices.Clone(e.Titles)
	runs[e.Key.RunID] = e
	return true, nil
}

// Runs answers a page of the tenant's entries q matches, reading at most runlog.MaxRunsRead, as
// the table's index does.
func (l *Store) Runs(_ context.Context, tenant string, q runlog.RunQuery) (runlog.RunPage, error) {
	if !runlog.ValidID(tenant) {
		return runlog.RunPage{}, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	var all []runlog.RunEntry
	for _, e := range l.runIndex[tenant] {
		if !expired(e.Expires) {
			all = append(all, e)
		}
	}
	l.mu.Unlock()
	if q.ByID() {
		slices.SortFunc(all, func(a, b runlog.RunEntry) int { return strings.Compare(a.Key.RunID, b.Key.RunID) })
		all = slices.DeleteFunc(all, func(e runlog.RunEntry) bool {
			return !strings.HasPrefix(e.Key.RunID, q.Prefix) || (q.After != "" && e.Key.RunID <= q.After)
		})
	} else {
		slices.SortFunc(all, func(a, b runlog.RunEntry) int { return strings.Compare(b.SortKey(), a.SortKey()) })
		all = slices.DeleteFunc(all, func(e runlog.RunEntry) bool {
			return (q.After != "" && e.SortKey() >= q.After) || (!q.Until.IsZero() && !e.At.Before(q.Until)) || (!q.Since.IsZero() && e.At.Before(q.Since))
		})
	}
	page := runlog.RunPage{Runs: []runlog.RunEntry{}}
	for read, e := range all {
		if read == runlog.MaxRunsRead {
			page.Next = q.Cursor(all[read-1])
			return page, nil
		}
		if !q.Matches(e) {
			continue
		}
		page.Runs = append(page.Runs, e)
		if len(page.Runs) == q.Limit {
			if read < len(all)-1 {
				page.Next = q.Cursor(e)
			}
			return page, nil
		}
	}
	return page, nil
}
