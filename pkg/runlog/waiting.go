package runlog

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Waiting is an entry of a tenant's waiting index, a read model kept from the table's stream
// (docs/design.md, "Read models"): run Key waits on the interrupts Pending summarises as of its
// commit Seq, made At, Origin the run's (its first commit's id: a run id reused after its run
// expired names another run). It is written after its commit, by whoever read the run's log up
// to Seq, so it may lag the log or name a run that waits no longer (a batch the stream's
// consumer has yet to take, one it gave up on): readers check it against the run's log before
// they trust it, and repair it.
type Waiting struct {
	Key     Key
	Seq     int64
	At      time.Time
	Origin  string
	Pending []Summary
	// Omitted is set by a store whose item could not hold the summaries (hundreds of interrupts
	// filed in many inboxes each): the entry is current by Seq and Origin all the same, and a
	// reader lists its run from the log without rewriting it.
	Omitted bool
}

// Replaces reports whether an entry w, filed over old, stands instead: an entry of an earlier
// commit of the same run never replaces one of a later (a stream record read late, a list's
// repair racing the consumer); another run's (an expired one's) is always replaced.
func (w Waiting) Replaces(old Waiting) bool { return old.Origin != w.Origin || old.Seq <= w.Seq }

// Removes reports whether removing w takes entry filed: one of another run of the id (an expired
// one's, dead), or of the same run as of w's commit or an earlier one.
func (w Waiting) Removes(filed Waiting) bool { return w.Replaces(filed) }

// Summary is what a list answers of one pending interrupt, read from the index alone: where it
// is, what it asks and since when, until when, and how far its quorum got. Never its payload,
// so that a page of the index costs a page whatever the payloads (docs/engines.md, "The API": GET /interrupts).
type Summary struct {
	NodeID      string         `json:"nodeId"`
	InterruptID string         `json:"interruptId"`
	Key         string         `json:"key"`
	Kind        interrupt.Kind `json:"kind"`
	// Title is the payload's data.title (a clarification's first question), cut to MaxTitle
	// characters; "" for none.
	Title       string    `json:"title,omitempty"`
	Seq         int64     `json:"seq"`
	RequestedAt time.Time `json:"requestedAt"`
	// Deadline is zero for an interrupt without one.
	Deadline time.Time `json:"deadline,omitzero"`
	// Tally is an approval's votes against its quorum; nil for the other kinds.
	Tally *interrupt.Tally `json:"tally,omitempty"`
	// RequestedBy is who requested it (the commit's author), so that a requester can list its
	// own; "" in an entry written before it was kept.
	RequestedBy string `json:"requestedBy,omitempty"`
	// Inboxes are the deciders' inboxes it is filed in (Assignment.Ref), so that the entry that
	// replaces this one can tell which to leave.
	Inboxes []string `json:"inboxes,omitempty"`
}

// MaxTitle bounds a summary's title, so that a run's entry (DefaultMaxPending summaries) stays
// well within one store item whatever its payloads.
const MaxTitle = 200

// Entry is the run's waiting entry as of s's last commit, with a summary of each interrupt
// pending as the log records it, deadlines aside (an interrupt past its deadline waits for the
// sweep to record it expired, and its run stays in the index until then), in request order;
// its Pending is empty when the run waits on nothing.
func (s *State) Entry(k Key) Waiting {
	w := Waiting{Key: k, Seq: s.Seq, At: s.LastAt, Origin: s.origin}
	if s.Ended != "" {
		return w
	}
	for _, in := range s.ordered {
		if in.Status != interrupt.StatusPending {
			continue
		}
		sm := Summary{
			NodeID: in.NodeID, InterruptID: in.ID, Key: in.Payload.Key, Kind: in.Payload.Kind, Title: in.Title(),
			Seq: in.RequestedSeq, RequestedAt: in.RequestedAt, Deadline: in.Deadline, RequestedBy: in.RequestedBy,
		}
		if in.Payload.Kind == interrupt.KindApproval {
			t := in.Tally()
			sm.Tally = &t
		}
		w.Pending = append(w.Pending, sm)
	}
	return w
}

// Title is what the interrupt is called: its display's title (a question's, which its payload
// cannot hold), else its payload's (Title).
func (in *Interrupt) Title() string {
	if in.Display != nil && in.Display.Title != "" {
		return in.Display.Title
	}
	return Title(in.Raw)
}

// Title is a payload's data.title, else its first question's text (a clarification has no
// title: what it asks names it), cut to MaxTitle characters: what the pending list and the
// console call an interrupt.
func Title(raw json.RawMessage) string {
	var p struct {
		Data struct {
			Title     string `json:"title"`
			Questions []struct {
				Question string `json:"question"`
			} `json:"questions"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return ""
	}
	t := p.Data.Title
	if t == "" && len(p.Data.Questions) > 0 {
		t = p.Data.Questions[0].Question
	}
	if utf8.RuneCountInString(t) > MaxTitle {
		t = string([]rune(t)[:MaxTitle])
	}
	return t
}
