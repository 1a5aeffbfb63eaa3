package host

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Assignments are the deciders' inboxes, a read model kept from the table's stream beside the
// waiting index (docs/design.md, "The inbox"): one entry per pending interrupt and inbox it is
// filed in, at its place (runlog.Assignment.Place).
type Assignments interface {
	// FileAssignment files a at its place in its inbox, unless the entry there reflects a later
	// commit of the same run (runlog.Waiting.Replaces, by seq and origin): that entry stays, and
	// that is no error.
	FileAssignment(ctx context.Context, a runlog.Assignment) error
	// UnfileAssignment removes the entry at a's place in a's inbox if it is of another run of
	// the id, or of a's commit or an earlier one; none there, or one a keeps, is no error.
	UnfileAssignment(ctx context.Context, a runlog.Assignment) error
	// Assigned lists the tenant's inbox ref in place order, after place after ("" for the
	// first), at most limit (at least 1); none when none is left.
	Assigned(ctx context.Context, tenant, ref, after string, limit int) ([]runlog.Assignment, error)
}

// deciders are the inboxes interrupt in is filed in (interrupt.Deciders.Inboxes); none for
// no interrupt.
func deciders(in *runlog.Interrupt) []string {
	if in == nil {
		return nil
	}
	return in.Deciders.Inboxes()
}

// entry is run k's waiting entry as of st, each summary naming the inboxes its interrupt is
// filed in, so that the next entry can tell which to leave.
func (h *Host) entry(k runlog.Key, st *runlog.State) runlog.Waiting {
	w := st.Entry(k)
	for i, sm := range w.Pending {
		w.Pending[i].Inboxes = deciders(st.ByID(sm.InterruptID))
	}
	return w
}

// reassign brings run k's inbox entries up to w, its waiting entry as of st, which replaced
// prior: every pending interrupt filed in its inboxes, and the entries prior filed that w does
// not hold (an interrupt closed, or the run id taken again) removed, each write conditional as
// the waiting entry's is.
func (h *Host) reassign(ctx context.Context, k runlog.Key, st *runlog.State, prior, w runlog.Waiting) error {
	if h.assignments == nil {
		return nil
	}
	now := st.Assignments(k, deciders)
	filed := map[[2]string]bool{}
	var errs []error
	for _, a := range now {
		filed[[2]string{a.Summary.InterruptID, a.Ref}] = true
		errs = append(errs, h.assignments.FileAssignment(ctx, a))
	}
	for _, sm := range prior.Pending {
		for _, ref := range sm.Inboxes {
			if prior.Origin == w.Origin && filed[[2]string{sm.InterruptID, ref}] {
				continue
			}
			gone := runlog.Assignment{Key: k, Seq: w.Seq, Origin: w.Origin, Ref: ref, Summary: sm}
			errs = append(errs, h.assignments.UnfileAssignment(ctx, gone))
		}
	}
	return errors.Join(errs...)
}

// Bounds of a page of the inbox: DefaultInboxLimit interrupts unless the caller asks for up to
// MaxInboxLimit; at most maxCallerInboxes inboxes read for one caller (its principal, groups,
// roles and Anyone); inboxRounds rounds of reads for one page, however many entries the log
// shows stale.
const (
	DefaultInboxLimit = 25
	MaxInboxLimit     = 100
	maxCallerInboxes  = 34
	inboxRounds       = 4
)

// InboxPage is one page of what waits for a caller.
type InboxPage struct {
	Items []InboxItem `json:"items"`
	// Next is the cursor of the next page (its after), "" on the last.
	Next string `json:"next,omitempty"`
}

// InboxItem is one interrupt the caller may decide now.
type InboxItem struct {
	RunID       string         `json:"runId"`
	NodeID      string         `json:"nodeId"`
	InterruptID string         `json:"interruptId"`
	Kind        interrupt.Kind `json:"kind"`
	Title       string         `json:"title,omitempty"`
	RequestedAt string         `json:"requestedAt"`
	ExpiresAt   string         `json:"expiresAt,omitempty"`
	// Tally is an approval's votes so far against its quorum.
	Tally *interrupt.Tally `json:"tally,omitempty"`
	// Voted is true once the caller's vote is counted; the item stays until the interrupt
	// closes.
	Voted bool `json:"voted"`
	// URL is the approval page of the interrupt, which signs the caller in (set by the API).
	URL string `json:"url,omitempty"`
	// For is whose place the caller decides it in, when it waits on a principal whose
	// delegation the caller holds: listed for them, and Voted is theirs.
	For *InboxFor `json:"for,omitempty"`
}

// InboxFor is the delegator an inbox item is listed for, away until Until.
type InboxFor struct {
	Principal string `json:"principal"`
	Until     string `json:"until"`
}

// Inbox lists the interrupts of p's tenant that p may decide now, nearest deadline first, then
// oldest request: those filed in the inboxes of p's principal, groups and roles and Anyone that
// the one rule admits p to (interrupt.Deciders: never one p requested), none past its deadline.
// It answers from the entries, each checked against its run's log first (Waiting.Newer: one
// read unit per run, no payload, when the entry is as new as its log); an entry its log has
// gone past is answered from the log, and its run reindexed. An entry that refuses p by what it
// keeps (Assignment.Alone, Assignment.Beyond) costs no read at all; a run with an entry that
// keeps too little to judge p is read, and p judged by Deciders.Admit as its log holds them.
// after is the cursor of a page's Next.
func (h *Host) Inbox(ctx context.Context, p interrupt.Principal, after string, limit int) (InboxPage, error) {
	if limit <= 0 {
		limit = DefaultInboxLimit
	}
	page := InboxPage{Items: []InboxItem{}}
	if !runlog.ValidID(p.Tenant) || p.Subject == "" || h.assignments == nil {
		return page, nil
	}
	inboxes := callerInboxes(p)
	away, err := h.awayInboxes(ctx, p, &inboxes)
	if err != nil {
		return InboxPage{}, err
	}
	for range inboxRounds {
		found, more, err := h.assigned(ctx, p.Tenant, inboxes, after, limit-len(page.Items))
		if err != nil {
			return InboxPage{}, err
		}
		checked, err := h.checked(ctx, p, found, away)
		if err != nil {
			return InboxPage{}, err
		}
		page.Items = append(page.Items, checked...)
		if !more {
			return page, nil
		}
		after = found[len(found)-1].Place()
		if len(page.Items) >= limit {
			page.Next = after
			return page, nil
		}
	}
	page.Next = after
	return page, nil
}

// awayInboxes adds to inboxes those of the delegators whose delegations p holds in force now
// (one Query), each but Anyone's and p's own, within maxCallerInboxes, and answers whom
// each added inbox is read as: the delegator, with the memberships the delegation recorded.
func (h *Host) awayInboxes(ctx context.Context, p interrupt.Principal, inboxes *[]string) (map[string]interrupt.Delegated, error) {
	if h.delegations == nil {
		return nil, nil
	}
	held, err := delegation.Held(ctx, h.delegations, p.Tenant, p.Subject, h.now())
	if err != nil || len(held) == 0 {
		return nil, err
	}
	away := map[string]interrupt.Delegated{}
	for _, d := range held {
		for _, ref := range callerInboxes(interrupt.Principal{Subject: d.Delegator, Groups: d.Groups, Roles: d.Roles}) {
			if ref != interrupt.Anyone && !slices.Contains(*inboxes, ref) && len(*inboxes) < maxCallerInboxes {
				*inboxes = append(*inboxes, ref)
				away[ref] = d
			}
		}
	}
	return away, nil
}

// callerInboxes are the inboxes p reads: its principal's, anyone's, then its groups' and roles',
// each once (an identity provider may repeat a claim), at most maxCallerInboxes.
func callerInboxes(p interrupt.Principal) []string {
	inboxes := []string{interrupt.Ref{Kind: interrupt.RefPrincipal, Ref: p.Subject}.Inbox(), interrupt.Anyone}
	add := func(kind string, refs []string) {
		for _, r := range refs {
			if ref := (interrupt.Ref{Kind: kind, Ref: r}).Inbox(); r != "" && !slices.Contains(inboxes, ref) && len(inboxes) < maxCallerInboxes {
				inboxes = append(inboxes, ref)
			}
		}
	}
	add(interrupt.RefGroup, p.Groups)
	add(interrupt.RefRole, p.Roles)
	return inboxes
}

// assigned reads up to limit entries after place after from each inbox, at once, and answers
// the first limit of them in place order, each interrupt once, and whether any inbox holds more.
func (h *Host) assigned(ctx context.Context, tenant string, inboxes []string, after string, limit int) ([]runlog.Assignment, bool, error) {
	lists := make([][]runlog.Assignment, len(inboxes))
	errs := make([]error, len(inboxes))
	var wg sync.WaitGroup
	for i, ref := range inboxes {
		wg.Go(func() { lists[i], errs[i] = h.assignments.Assigned(ctx, tenant, ref, after, limit) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, false, err
	}
	var all []runlog.Assignment
	more := false
	for _, l := range lists {
		all = append(all, l...)
		more = more || len(l) == limit
	}
	slices.SortStableFunc(all, func(a, b runlog.Assignment) int { return cmpPlace(a.Place(), b.Place()) })
	all = slices.CompactFunc(all, func(a, b runlog.Assignment) bool { return a.Place() == b.Place() })
	if len(all) > limit {
		all, more = all[:limit], true
	}
	return all, more, nil
}

func cmpPlace(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checked are the entries p may decide now, as their runs' logs stand. An entry that refuses p
// by itself (its inbox alone decides, or it keeps the rest of its deciders: Assignment.Beyond)
// is left out first, reading nothing: the deciders of an interrupt never change, so a stale
// entry would refuse p all the same. Each run of the others is asked once whether its log went
// past its entries (at most pendingReads at once), and one that did read and reindexed. A run
// with an entry that cannot judge p (neither Alone nor Beyond) is read too, and p judged by the
// interrupt's deciders as its log holds them.
//
// An entry of a delegator's inbox (away, by inbox) is judged as the delegator, of a kind the
// delegation reaches and not requested by p, and is listed as theirs (InboxItem.For).
func (h *Host) checked(ctx context.Context, p interrupt.Principal, found []runlog.Assignment, away map[string]interrupt.Delegated) ([]InboxItem, error) {
	type state struct {
		newer, judge bool
		st           *runlog.State
		err          error
	}
	as := func(a runlog.Assignment) (interrupt.Principal, *interrupt.Delegated) {
		d, ok := away[a.Ref]
		if !ok {
			return p, nil
		}
		return interrupt.Principal{Subject: d.Delegator, Tenant: p.Tenant, Groups: d.Groups, Roles: d.Roles, Via: p.Via}, &d
	}
	found = slices.DeleteFunc(slices.Clone(found), func(a runlog.Assignment) bool {
		who, d := as(a)
		if d != nil && (a.Summary.RequestedBy == p.Subject || (len(d.Kinds) > 0 && !slices.Contains(d.Kinds, a.Summary.Kind))) {
			return true
		}
		judged, ok := admitsByEntry(a, who)
		return judged && !ok
	})
	byRun := map[runlog.Key]*state{}
	var runs []runlog.Key
	for _, a := range found {
		if byRun[a.Key] == nil {
			byRun[a.Key] = &state{}
			runs = append(runs, a.Key)
		}
		who, _ := as(a)
		_, judged := admitsByEntry(a, who)
		byRun[a.Key].judge = byRun[a.Key].judge || !judged
	}
	sem := make(chan struct{}, pendingReads)
	var wg sync.WaitGroup
	for _, k := range runs {
		s := byRun[k]
		seq := int64(0)
		for _, a := range found {
			if a.Key == k && (seq == 0 || a.Seq < seq) {
				seq = a.Seq
			}
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if !s.judge {
				if s.newer, s.err = h.waiting.Newer(ctx, k, seq); s.err != nil || !s.newer {
					return
				}
			}
			if s.st, s.err = h.load(ctx, k); s.err != nil {
				return
			}
			// A run read to judge its entries is past them when its log went on, or is gone.
			s.newer = s.newer || s.st.Seq == 0 || s.st.Seq > seq
			if s.newer && s.st.Seq > 0 {
				_ = h.reindexed(ctx, k, s.st) // a failed repair is the consumer's or the next reader's
			}
		})
	}
	wg.Wait()
	now := h.now()
	var out []InboxItem
	for _, a := range found {
		s := byRun[a.Key]
		if s.err != nil {
			return nil, s.err
		}
		if s.newer {
			fresh, ok := runlog.Assignment{}, false
			if s.st != nil && s.st.Seq > 0 {
				fresh, ok = freshAssignment(s.st, a, deciders)
			}
			if !ok {
				// Its interrupt closed, or is filed elsewhere now, or its run is gone: the entry
				// goes, as of the log read (a failed removal is the next reader's to do).
				_ = h.assignments.UnfileAssignment(ctx, stale(a, s.st))
				continue
			}
			a = fresh
		}
		who, d := as(a)
		if !admits(a, s.st, who) || (!a.Summary.Deadline.IsZero() && !now.Before(a.Summary.Deadline)) {
			continue
		}
		it := inboxItem(a, who)
		if d != nil {
			it.For = &InboxFor{Principal: d.Delegator, Until: d.Until.UTC().Format(runlog.TimeFormat)}
		}
		out = append(out, it)
	}
	return out, nil
}

// stale is entry a to remove as of st, the log read: of st's last commit and origin, which a
// removal's condition lets take any entry of an earlier commit or another run; with no run, a
// itself.
func stale(a runlog.Assignment, st *runlog.State) runlog.Assignment {
	if st == nil || st.Seq == 0 {
		return a
	}
	w := st.Entry(a.Key)
	a.Seq, a.Origin = w.Seq, w.Origin
	return a
}

// freshAssignment is entry a as st shows it: the interrupt still pending and filed in a's inbox.
func freshAssignment(st *runlog.State, a runlog.Assignment, deciders func(*runlog.Interrupt) []string) (runlog.Assignment, bool) {
	for _, fresh := range st.Assignments(a.Key, deciders) {
		if fresh.Summary.InterruptID == a.Summary.InterruptID && fresh.Ref == a.Ref {
			return fresh, true
		}
	}
	return runlog.Assignment{}, false
}

// admitsByEntry judges p, who read a from one of its own inboxes, by the entry alone, as a
// resolve would: by the inbox and the requester where the inbox alone decides
// (Assignment.Alone), by the deciders the entry keeps past the inbox where it keeps them
// (Assignment.Beyond). judged is false for an entry that keeps neither: the log judges.
func admitsByEntry(a runlog.Assignment, p interrupt.Principal) (judged, ok bool) {
	switch {
	case a.Alone:
		return true, interrupt.AdmitFiled(a.Summary.RequestedBy, p)
	case a.Beyond != nil:
		return true, a.Beyond.Admit(p)
	}
	return false, false
}

// admits reports whether p, who read a from one of its own inboxes, may decide a's interrupt as
// a resolve would judge it: by the entry where it can (admitsByEntry), else by the interrupt's
// deciders in st, its run's log as read.
func admits(a runlog.Assignment, st *runlog.State, p interrupt.Principal) bool {
	if judged, ok := admitsByEntry(a, p); judged {
		return ok
	}
	in := st.ByID(a.Summary.InterruptID)
	if in == nil {
		return false
	}
	_, err := in.Deciders.Admit(p)
	return err == nil
}

func inboxItem(a runlog.Assignment, p interrupt.Principal) InboxItem {
	sm := a.Summary
	it := InboxItem{
		RunID: a.Key.RunID, NodeID: sm.NodeID, InterruptID: sm.InterruptID, Kind: sm.Kind, Title: sm.Title,
		RequestedAt: sm.RequestedAt.UTC().Format(runlog.TimeFormat), Tally: sm.Tally, Voted: a.Voted(p.Voter()),
	}
	if !sm.Deadline.IsZero() {
		it.ExpiresAt = sm.Deadline.UTC().Format(runlog.TimeFormat)
	}
	return it
}
