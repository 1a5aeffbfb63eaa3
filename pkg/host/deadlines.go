package host

import (
	"context"
	"time"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Deadlines is the storage of the expiry sweep (README, "Deadlines"): the due index, filed by
// deadline minute, and the sweep's cursor.
type Deadlines interface {
	// Schedule files d under its deadline's minute.
	Schedule(ctx context.Context, d runlog.Due) error
	// Due lists the entries filed under minute, in position order, after the position after
	// ("" for the first), at most limit.
	Due(ctx context.Context, minute time.Time, after string, limit int) ([]runlog.Due, error)
	// SweepCursor is the cursor; the zero cursor when no sweep has moved it yet.
	SweepCursor(ctx context.Context) (runlog.SweepCursor, error)
	// MoveSweep moves the cursor from from to to, unless another sweep moved it from from first
	// (runlog.ErrSeqTaken).
	MoveSweep(ctx context.Context, from, to runlog.SweepCursor) error
	// Retain gives the run's items that have no expiry yet (its commits, checkpoint and
	// archive) the expiry (the table's TTL), at most budget of them; more tells whether some are
	// left for another call. A store reads a run whose commits have expired as no run, and lets a
	// new run of the same id write over them.
	Retain(ctx context.Context, k runlog.Key, expires time.Time, budget int) (more bool, err error)
}
