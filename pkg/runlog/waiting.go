package runlog

import (
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Waiting is an entry of a tenant's waiting index: run Key waits on an interrupt since the commit
// Seq, the one its entry was filed for, At the time of that commit, Origin the run's (its first
// commit's id: a run id reused after its run expired names another run). The entry is written
// before that commit and removed after the commit that leaves the run waiting on nothing, so it
// may name a run that waits no longer (a request that never committed, a removal that failed,
// a run long gone): readers re-validate it against the run's log, as they do a due entry.
type Waiting struct {
	Key    Key
	Seq    int64
	At     time.Time
	Origin string
}

// Replaces reports whether an entry w, filed over old, stands instead: an entry filed for an
// earlier commit of the same run never replaces one filed for a later; another run's (an
// expired one's) is always replaced.
func (w Waiting) Replaces(old Waiting) bool { return old.Origin != w.Origin || old.Seq <= w.Seq }

// Removes reports whether removing w takes entry filed, of the same run only: an entry filed
// for a commit before w's, or w itself (the same commit and time: a request filing for the same
// commit again, later, files another entry, which this removal keeps).
func (w Waiting) Removes(filed Waiting) bool {
	return filed.Origin == w.Origin && (filed.Seq < w.Seq || filed.Seq == w.Seq && filed.At.Equal(w.At))
}

// Origin is the run's first commit's id: what tells it from another run of the same id.
func (s *State) Origin() string { return s.origin }

// Waiting reports whether the log leaves the run waiting on an interrupt: one of them is pending
// as the log records it, deadlines aside (an interrupt past its deadline waits for the sweep to
// record it expired, and its run stays in the index until then).
func (s *State) Waiting() bool {
	if s.Ended != "" {
		return false
	}
	for _, in := range s.ordered {
		if in.status == interrupt.StatusPending {
			return true
		}
	}
	return false
}
