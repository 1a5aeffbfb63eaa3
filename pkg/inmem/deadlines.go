package inmem

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Schedule files d under its deadline's minute.
func (l *RunLog) Schedule(_ context.Context, d runlog.Due) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := d.Minute()
	if !slices.Contains(l.due[m], d) {
		l.due[m] = append(l.due[m], d)
		slices.SortFunc(l.due[m], func(a, b runlog.Due) int { return strings.Compare(a.Position(), b.Position()) })
	}
	return nil
}

// Due lists the entries of minute after the position after, at most limit.
func (l *RunLog) Due(_ context.Context, minute time.Time, after string, limit int) ([]runlog.Due, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []runlog.Due
	for _, d := range l.due[minute.UTC().Truncate(time.Minute)] {
		if d.Position() > after && len(out) < limit {
			out = append(out, d)
		}
	}
	return out, nil
}

// SweepCursor is the cursor, zero before the first move.
func (l *RunLog) SweepCursor(context.Context) (runlog.SweepCursor, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cursor
	c.Done = slices.Clone(c.Done)
	return c, nil
}

// MoveSweep moves the cursor from from to to, unless it is no longer at from.
func (l *RunLog) MoveSweep(_ context.Context, from, to runlog.SweepCursor) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cursor.Version != from.Version {
		return runlog.ErrSeqTaken
	}
	to.Version = from.Version + 1
	to.Done = slices.Clone(to.Done)
	l.cursor = to
	return nil
}
