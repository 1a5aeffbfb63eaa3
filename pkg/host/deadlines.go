package host

import (
	"context"
	"time"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Deadlines is the storage of the expiry sweep (docs/engines.md, "Deadlines"): the due index, filed by
// deadline minute, and the sweep's cursor.
type Deadlines interface {
	// Schedule files d under its deadline's minute; filing it again is no error (it is one
	// entry). A run key that is not valid (runlog.Key.Valid) answers runlog.ErrInvalidKey.
	Schedule(ctx context.Context, d runlog.Due) error
	// Due lists the entries filed under minute, in position order, after the position after
	// ("" for the first), at most limit (at least 1); none when none is left.
	Due(ctx context.Context, minute time.Time, after string, limit int) ([]runlog.Due, error)
	// SweepCursor is the cursor; the zero cursor when no sweep has moved it yet.
	SweepCursor(ctx context.Context) (runlog.SweepCursor, error)
	// MoveSweep moves the cursor from from to to, unless it is no longer at from
	// (runlog.ErrSeqTaken, moving nothing): another sweep moved it first, or this move was
	// applied already.
	MoveSweep(ctx context.Context, from, to runlog.SweepCursor) error
	// Retain gives the run's items that have no expiry yet (its commits, checkpoint and
	// archive) the expiry (the table's TTL), at most budget of them; more tells whether some are
	// left for another call (false for a run with none left, or no run). A store reads a run
	// whose commits have expired as no run, and lets a new run of the same id write over them. A
	// key that is not valid answers runlog.ErrInvalidKey.
	Retain(ctx context.Context, k runlog.Key, expires time.Time, budget int) (more bool, err error)
}
