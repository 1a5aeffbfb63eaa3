package runlog

import (
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Assignment is an entry of a decider's inbox, a read model kept from the table's stream as the
// waiting index is (docs/design.md, "The inbox"): the interrupt Summary describes, of run Key as
// of its commit Seq, is filed for whoever Ref names: where Alone is set, they may decide it (but
// its requester), else the interrupt's deciders say. Readers check it against the run's
// log before they trust it, and repair it.
type Assignment struct {
	Key    Key
	Seq    int64
	Origin string
	// Ref is the inbox it is filed in: interrupt.Ref.Inbox, or interrupt.Anyone.
	Ref string
	// Summary is the interrupt as the waiting index lists it; its RequestedBy may not decide it.
	Summary Summary
	// Voters are the principals whose votes an approval counted, and the places delegates'
	// votes filled, so a reader knows it voted (or was voted for).
	Voters []string
	// Alone is set when being read from the inbox admits the reader, but for the requester
	// (interrupt.Deciders.FiledAlone); otherwise the reader asks the interrupt's deciders as
	// its log holds them, or where the entry keeps them by Beyond.
	Alone bool
	// Beyond is, where Alone is unset, what of the interrupt's deciders the inbox does not
	// prove (interrupt.Deciders.Beyond: its rules past the first, its requester and agent), so
	// that the reader is judged by the entry, without reading the run's log; nil in an entry
	// written before it was kept, or whose rules past the first would not fit it: its reader
	// reads the log. The deciders whole are kept once, with the interrupt, never in its
	// entries.
	Beyond *interrupt.Beyond `json:"beyond,omitempty"`
}

// noDeadline orders an interrupt without a deadline after every one with one.
const noDeadline = "9999-12-31T23:59:59.999999Z"

// Place is where a's interrupt is in its inbox, the order an inbox is read in: the nearest
// deadline first (none last), then the oldest request, then run and interrupt ids. It is the
// same in every inbox the interrupt is filed in, and never changes while it is pending.
func (a Assignment) Place() string {
	return Place(a.Summary.Deadline, a.Summary.RequestedAt, a.Key.RunID, a.Summary.InterruptID)
}

// Place is the place of interrupt id of run runID in an inbox (Assignment.Place).
func Place(deadline, requestedAt time.Time, runID, id string) string {
	d := noDeadline
	if !deadline.IsZero() {
		d = deadline.UTC().Format(placeTime)
	}
	return strings.Join([]string{d, requestedAt.UTC().Format(placeTime), runID, id}, "|")
}

// placeTime is fixed-width, so that places sort as their times do.
const placeTime = "2006-01-02T15:04:05.000000Z"

// Voted reports whether principal voted on a's approval.
func (a Assignment) Voted(principal string) bool {
	for _, v := range a.Voters {
		if v == principal {
			return true
		}
	}
	return false
}

// Assignments are the inbox entries of the interrupts run k waits on as of s's last commit:
// one per interrupt and inbox it is filed in, deciders(in) naming the inboxes (none for a kind
// no person decides), in request order.
func (s *State) Assignments(k Key, deciders func(*Interrupt) []string) []Assignment {
	var out []Assignment
	if s.Ended != "" {
		return out
	}
	entry := s.Entry(k)
	for _, sm := range entry.Pending {
		in := s.byID[sm.InterruptID]
		alone, beyond := in.Deciders.FiledAlone(), in.Deciders.Beyond()
		for _, ref := range deciders(in) {
			a := Assignment{Key: k, Seq: s.Seq, Origin: s.origin, Ref: ref, Summary: sm}
			for _, v := range in.Votes {
				a.Voters = append(a.Voters, v.Principal)
				if v.OnBehalfOf != "" {
					a.Voters = append(a.Voters, v.OnBehalfOf) // the place a delegate filled
				}
			}
			a.Alone, a.Beyond = alone, beyond
			out = append(out, a)
		}
	}
	return out
}
