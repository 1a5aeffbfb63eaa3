package interrupt

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FollowUp is how an interrupt a person decides is followed up while it waits: reminders to
// those who have not decided yet, and an escalation to others. Host members of a request
// (beside token), else the deployment's defaults; they stop when the interrupt closes, and never
// widen who may decide (eligibility is the payload's).
type FollowUp struct {
	Reminders  *Reminders  `json:"reminders,omitempty"`
	Escalation *Escalation `json:"escalation,omitempty"`
}

// Reminders are Count reminders, the first AfterMs after the request, then one every EveryMs.
type Reminders struct {
	AfterMs int64 `json:"afterMs"`
	EveryMs int64 `json:"everyMs,omitempty"`
	Count   int   `json:"count"`
}

// Escalation notifies To once, AfterMs after the request, if it is still pending.
type Escalation struct {
	AfterMs int64 `json:"afterMs"`
	To      []Ref `json:"to"`
	// Delegate hands the decision on: from the escalation, each principal it goes to decides
	// in the place of each approver named in approversList who has not voted (Escalated.Handed).
	// Without it escalation tells, and decides nothing.
	Delegate bool `json:"delegate,omitempty"`
}

// Ref is a principal, group or role people are reached by (its contact), as an approval names
// its eligibility refs.
type Ref struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
}

// String is the ref as the inbox and waitingOn name it: "group:finance".
func (r Ref) String() string { return r.Kind + ":" + r.Ref }

// Follow-up bounds: a first nudge a second after the request at the soonest and thirty days at
// the latest; at most ten reminders, a second apart at the closest; at most twenty refs to
// escalate to.
const (
	MinFollowUpMs    = 1000
	MaxFollowUpMs    = 30 * 24 * 3600 * 1000
	MaxReminders     = 10
	MaxEscalationTo  = 20
	maxFollowUpRef   = 256
	followUpRefKinds = "principal group role"
)

// Check says what is wrong with f at the JSON Pointer at (its members are host members of the
// request: at is "", and they sit at /reminders and /escalation).
func (f FollowUp) Check(at string) []FieldError {
	var out []FieldError
	bad := func(path, msg string) { out = append(out, FieldError{Path: at + path, Message: msg}) }
	inRange := func(ms int64) bool { return ms >= MinFollowUpMs && ms <= MaxFollowUpMs }
	span := fmt.Sprintf("must be from %d to %d milliseconds", MinFollowUpMs, MaxFollowUpMs)
	if r := f.Reminders; r != nil {
		if !inRange(r.AfterMs) {
			bad("/reminders/afterMs", span)
		}
		if r.Count < 1 || r.Count > MaxReminders {
			bad("/reminders/count", fmt.Sprintf("must be from 1 to %d", MaxReminders))
		}
		if r.Count > 1 && !inRange(r.EveryMs) {
			bad("/reminders/everyMs", span+" when count is more than 1")
		}
	}
	if e := f.Escalation; e != nil {
		if !inRange(e.AfterMs) {
			bad("/escalation/afterMs", span)
		}
		if len(e.To) < 1 || len(e.To) > MaxEscalationTo {
			bad("/escalation/to", fmt.Sprintf("must name from 1 to %d refs", MaxEscalationTo))
		}
		if e.Delegate && !slices.ContainsFunc(e.To, func(r Ref) bool { return r.Kind == RefPrincipal }) {
			bad("/escalation/delegate", "hands the decision to principals: /escalation/to names none")
		}
		for i, r := range e.To {
			if !slices.Contains(strings.Fields(followUpRefKinds), r.Kind) || r.Ref == "" || utf8.RuneCountInString(r.Ref) > maxFollowUpRef || strings.ContainsFunc(r.Ref, unicode.IsControl) {
				bad(fmt.Sprintf("/escalation/to/%d", i), fmt.Sprintf("must be a principal, group or role ref of 1 to %d characters", maxFollowUpRef))
			}
		}
	}
	return out
}

// Reminded is the payload of interrupt.reminded: reminder number Reminder (from 1) of the
// interrupt, to the recipients who had not decided it.
type Reminded struct {
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
	Reminder    int    `json:"reminder"`
	Recipients  []Ref  `json:"recipients"`
}

// Escalated is the payload of interrupt.escalated: the interrupt, still pending, told to To.
type Escalated struct {
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
	To          []Ref  `json:"to"`
	// Handed are the places the escalation handed on, when its request asked it to delegate:
	// who decides in whose place, from when.
	Handed []Handing `json:"handed,omitempty"`
}
