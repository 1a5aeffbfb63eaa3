package runlog

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Phase is where a run stands, as a tenant's list of runs files and filters it: one word per
// run, so that "what stopped waiting" and "what ended" are one keyed read each.
type Phase string

// The phases of a run. A run that has not ended waits (an interrupt pending), is expired (it
// waits on nothing, and what it last asked expired: someone should look), or runs (it waits on
// nothing, and nothing it asked expired last).
const (
	PhaseWaiting   Phase = "waiting"
	PhaseRunning   Phase = "running"
	PhaseExpired   Phase = "expired"
	PhaseCompleted Phase = "completed"
	PhaseCancelled Phase = "cancelled"
)

// Phases are the phases in the order the console offers them.
var Phases = []Phase{PhaseWaiting, PhaseRunning, PhaseExpired, PhaseCompleted, PhaseCancelled}

// RunEntry is an entry of a tenant's runs index, a read model kept from the table's stream as
// the waiting index is (docs/design.md, "Read models"): run Key as of its commit Seq, last active
// At, in Phase, with the titles of what it asked, so that an operator finds any run, not only one
// that waits. It may lag the log by the stream's delay; a run's page reads the log.
type RunEntry struct {
	Key    Key
	Seq    int64
	At     time.Time
	Origin string
	Phase  Phase
	// Waiting is how many interrupts the run waits on.
	Waiting int
	// Titles are the titles of the interrupts its state holds (runlog.Title), newest first,
	// distinct, at most MaxRunTitles: what the list shows and what ?q= searches.
	Titles []string
	// Expires is when the run's log goes (its end plus the retention), zero while it has not
	// ended: the entry goes with it.
	Expires time.Time
}

// MaxRunTitles bounds the titles an entry keeps, so that it stays a small item however many
// interrupts its run asked.
const MaxRunTitles = 8

// Replaces reports whether e, filed over old, stands instead, as Waiting.Replaces says.
func (e RunEntry) Replaces(old RunEntry) bool { return old.Origin != e.Origin || old.Seq <= e.Seq }

// SortKey orders a tenant's entries by activity, then run id: what the list pages by, newest
// first. Fixed width, so that it sorts as a string in any store.
func (e RunEntry) SortKey() string { return fmt.Sprintf("%016d#%s", e.At.UnixMicro(), e.Key.RunID) }

// Words are the entry's titles as the search reads them: lower case, each word once, between
// spaces (" pay invoice 4471 "), so that "contains ' inv'" is a word that starts so, in any store.
func (e RunEntry) Words() string {
	seen := map[string]bool{}
	var b strings.Builder
	b.WriteString(" ")
	for _, t := range e.Titles {
		for _, w := range SearchWords(t) {
			if !seen[w] {
				seen[w] = true
				b.WriteString(w + " ")
			}
		}
	}
	return b.String()
}

// SearchWords splits s into the words a search matches: runs of letters and digits, lower case.
func SearchWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// RunEntry is the run's entry in the runs index as of s's last commit; expires is when its log
// goes once ended (the caller's retention after its end).
func (s *State) RunEntry(k Key, retention time.Duration) RunEntry {
	e := RunEntry{Key: k, Seq: s.Seq, At: s.LastAt, Origin: s.origin, Phase: PhaseRunning}
	var last *Interrupt
	for _, in := range s.ordered {
		if in.Status == interrupt.StatusPending {
			e.Waiting++
		}
		last = in
	}
	for i := len(s.ordered) - 1; i >= 0 && len(e.Titles) < MaxRunTitles; i-- {
		if t := s.ordered[i].Title(); t != "" && !slices.Contains(e.Titles, t) {
			e.Titles = append(e.Titles, t)
		}
	}
	switch {
	case s.Ended == interrupt.RunCompleted:
		e.Phase, e.Expires = PhaseCompleted, s.LastAt.Add(retention)
	case s.Ended == interrupt.RunCancelled:
		e.Phase, e.Expires = PhaseCancelled, s.LastAt.Add(retention)
	case e.Waiting > 0:
		e.Phase = PhaseWaiting
	case last != nil && last.Status == interrupt.StatusExpired:
		e.Phase = PhaseExpired
	}
	return e
}

// RunQuery asks a tenant's runs index for a page: runs in Phase ("" for any), last active in
// [Since, Until) (zero: unbounded), whose id starts with Prefix, whose titles hold a word
// starting with each of Words (SearchWords), from cursor After ("" for the first page), at most
// Limit of them.
type RunQuery struct {
	Phase        Phase
	Since, Until time.Time
	Prefix       string
	Words        []string
	After        string
	Limit        int
}

// ByID reports whether the page is in run id order (a prefix search: the ids that start so are
// one range of the index) rather than newest activity first.
func (q RunQuery) ByID() bool { return q.Prefix != "" }

// Matches reports whether e is one q asks for, cursor aside.
func (q RunQuery) Matches(e RunEntry) bool {
	if q.Phase != "" && e.Phase != q.Phase {
		return false
	}
	if (!q.Since.IsZero() && e.At.Before(q.Since)) || (!q.Until.IsZero() && !e.At.Before(q.Until)) {
		return false
	}
	if !strings.HasPrefix(e.Key.RunID, q.Prefix) {
		return false
	}
	words := e.Words()
	for _, w := range q.Words {
		if !strings.Contains(words, " "+w) {
			return false
		}
	}
	return true
}

// Cursor is where a page that ended at e goes on: its sort key in activity order, its run id in
// id order.
func (q RunQuery) Cursor(e RunEntry) string {
	if q.ByID() {
		return e.Key.RunID
	}
	return e.SortKey()
}

// RunPage is one page of a tenant's runs index.
type RunPage struct {
	Runs []RunEntry
	// Next is the cursor of the next page (RunQuery.After), "" when none is left.
	Next string
}

// MaxRunsRead bounds the entries a store reads for one page of a filtered or searched list, so
// that a page costs at most that many entries however rare its matches: a page that read as many
// ends there, however few it holds, with a Next.
const MaxRunsRead = 200
