package inmem

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Schedule files d under its deadline's minute, in position order.
func (l *Store) Schedule(_ context.Context, d runlog.Due) error {
	if !(runlog.Key{Tenant: d.Tenant, RunID: d.RunID}).Valid() {
		return runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	m := d.Minute()
	i, filed := slices.BinarySearchFunc(l.due[m], d.Position(), byPosition)
	if !filed {
		l.due[m] = slices.Insert(l.due[m], i, d)
	}
	return nil
}

func byPosition(d runlog.Due, position string) int { return strings.Compare(d.Position(), position) }

// Due lists the entries of minute after the position after, at most limit.
func (l *Store) Due(_ context.Context, minute time.Time, after string, limit int) ([]runlog.Due, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	entries := l.due[minute.UTC().Truncate(time.Minute)]
	i, filed := slices.BinarySearchFunc(entries, after, byPosition)
	if filed {
		i++
	}
	return slices.Clone(entries[i:min(len(entries), i+limit)]), nil
}

// SweepCursor is the cursor, zero before the first move.
func (l *Store) SweepCursor(context.Context) (runlog.SweepCursor, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cursor
	c.Done = slices.Clone(c.Done)
	return c, nil
}

// MoveSweep moves the cursor from from to to, unless it is no longer at from.
func (l *Store) MoveSweep(_ context.Context, from, to runlog.SweepCursor) error {
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
