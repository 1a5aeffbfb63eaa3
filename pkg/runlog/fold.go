package runlog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Interrupt is one interrupt as the log says it stands: Saved, all a checkpoint keeps of it,
// and what is derived from that alone (restore). So what the fold knows of an interrupt is what
// a checkpoint keeps, by construction: a field the fold adds goes into Saved, or is derived.
type Interrupt struct {
	Saved
	// Payload is Raw parsed.
	Payload interrupt.Payload
	// Deadline is zero when the payload sets no timeoutMs.
	Deadline time.Time
	// Deciders is who decides it and whom it is told to (interrupt.NewDeciders), worked out
	// once from its request.
	Deciders interrupt.Deciders
}

// restore is the interrupt sv keeps, with what derives from it; p is sv.Raw parsed, when the
// caller already parsed it.
func restore(sv Saved, p *interrupt.Payload) (*Interrupt, error) {
	in := &Interrupt{Saved: sv}
	if p != nil {
		in.Payload = *p
	} else if err := json.Unmarshal(sv.Raw, &in.Payload); err != nil {
		return nil, fmt.Errorf("runlog: saved interrupt %s: %w", sv.ID, err)
	}
	if in.Payload.TimeoutMs > 0 {
		in.Deadline = in.RequestedAt.Add(time.Duration(in.Payload.TimeoutMs) * time.Millisecond)
	}
	in.Deciders = interrupt.NewDeciders(in.Payload, in.Display, in.RequestedBy, in.RefKinds)
	in.Deciders.Handed = in.Handed
	return in, nil
}

// RequestedIn is interrupt id as commit c requested it, before any later commit: its payload,
// deadline and deciders, as the fold knows them. Nil when c did not request it, or its
// payload cannot be read.
func RequestedIn(c Commit, id string) *Interrupt {
	for _, e := range c.Events {
		if e.Type != interrupt.EventRequested || e.InterruptID != id {
			continue
		}
		in, err := restore(requestedBy(c, e), nil)
		if err != nil {
			return nil
		}
		return in
	}
	return nil
}

// requestedBy is what the request e of commit c records of its interrupt.
func requestedBy(c Commit, e Event) Saved {
	return Saved{
		ID: e.InterruptID, NodeID: e.NodeID, Raw: e.Payload, RequestedSeq: c.Seq, RequestedAt: c.At, RequestedBy: c.By,
		Endpoint: e.Endpoint, Display: e.Display, FollowUp: e.FollowUp, ToolCall: e.ToolCall, RefKinds: e.RefKinds, EndsRun: e.EndsRun,
		Status: interrupt.StatusPending,
	}
}

// Decider is who decided the interrupt, as the host recorded it (ResolvedBy): a principal, or ""
// while it is not resolved, when a machine's event or the host resolved it, and when the bearer
// of a token minted without a principal did (no one in particular: only the decidedBy it sent
// names anyone).
func (i *Interrupt) Decider() string { return person(i.ResolvedBy) }

// Decider is who made commit c, as a person others read about (Interrupt.Decider): "" for the
// host, a machine, or the bearer of a token minted without a principal.
func (c Commit) Decider() string { return person(c.By) }

// person is the principal a commit's author names, if it names one (Commit.By).
func person(by string) string {
	if strings.HasPrefix(by, "token:") {
		return ""
	}
	return by
}

// ApprovedCall is the call people approved (interrupt.ToolCall.Approved): nil unless the
// interrupt asked one and was resolved accepting it.
func (i *Interrupt) ApprovedCall() *interrupt.ApprovedCall {
	if i.ToolCall == nil || i.Status != interrupt.StatusResolved {
		return nil
	}
	return i.ToolCall.Approved(i.ResumeValue)
}

// DecidedAt is when the interrupt was resolved: the host's record, or for one resolved before
// the host kept it, the resume value's decidedAt. Zero while it is not resolved.
func (i *Interrupt) DecidedAt() time.Time {
	if !i.ResolvedAt.IsZero() || i.Status != interrupt.StatusResolved {
		return i.ResolvedAt
	}
	var v struct {
		DecidedAt time.Time `json:"decidedAt"`
	}
	_ = json.Unmarshal(i.ResumeValue, &v)
	return v.DecidedAt
}

// Voted is the vote principal cast on the interrupt, or a delegate cast in their place, if any.
func (i *Interrupt) Voted(principal string) *interrupt.Vote {
	for k := range i.Votes {
		if i.Votes[k].By(principal) {
			return &i.Votes[k]
		}
	}
	return nil
}

// CountedVotes are the interrupt's votes as clients read them, a copy: the releasing vote with
// the value of the resolution it released, which the log and the state keep once, on the
// resolution (as Commit.Envelopes gives it to the events' readers).
func (i *Interrupt) CountedVotes() []interrupt.Vote {
	votes := slices.Clone(i.Votes)
	if n := len(votes); n > 0 && i.Status == interrupt.StatusResolved && len(votes[n-1].ResumeValue) == 0 {
		votes[n-1].ResumeValue = i.ResumeValue
	}
	return votes
}

// Tally counts the interrupt's votes against its quorum, as the decider model counts them
// (interrupt.Deciders.Tally).
func (i *Interrupt) Tally() interrupt.Tally { return i.Deciders.Tally(i.Votes) }

// Recorded is the interrupt's status as the log records it, deadlines aside: pending until an
// event ends it (interrupt.resolved, interrupt.expired, the run's end).
func (i *Interrupt) Recorded() interrupt.Status { return i.Status }

// StatusAt is the interrupt's status at now: a pending interrupt past its deadline is expired
// for every reader, before the sweep has recorded interrupt.expired.
func (i *Interrupt) StatusAt(now time.Time) interrupt.Status {
	if i.Status == interrupt.StatusPending && !i.Deadline.IsZero() && !now.Before(i.Deadline) {
		return interrupt.StatusExpired
	}
	return i.Status
}

// State is a run folded from its log. The zero value is a run with no commits, which does not
// exist yet.
type State struct {
	// Seq is the last commit applied; the next commit must be Seq+1.
	Seq int64
	// LastAt is the time of the last commit applied.
	LastAt time.Time
	// Threshold is the run's escalation threshold (run.configured), nil until configured, and
	// ThresholdSeq the commit that set it.
	Threshold    *float64
	ThresholdSeq int64
	// decisions maps the key of each agent decision to the commit that recorded it.
	decisions map[string]int64
	// redeemed maps an interrupt id to the one redemption of its approved call's receipt.
	redeemed map[string]*Redemption
	// Ended is RunCancelled or RunCompleted once the run has ended, else "".
	Ended interrupt.RunStatus
	// EndedSeq is the commit that ended the run.
	EndedSeq int64
	// CommitIDs maps the ID of every commit applied (not those a checkpoint stands for) to its
	// seq.
	CommitIDs map[string]int64
	// idem maps each scoped Idempotency-Key to the commit it made.
	idem map[string]*Idem
	// conversations is where each conversation the run requested an interrupt of stands.
	conversations map[string]ConversationState

	// ordered are the interrupts of the state in the order they were requested: those a
	// checkpoint kept and those requested since; byID, byKey and latestAt hold those and any
	// merged from the archive.
	ordered []*Interrupt
	byID    map[string]*Interrupt
	byKey   map[string]*Interrupt
	// latestAt is the last interrupt requested at each node: resolving by node targets it.
	latestAt map[string]*Interrupt

	// archived is set once anything of the run went to the archive (Checkpoint.Archived); looked
	// are the refs looked up there, merged those found, and lastOf the nodes whose last
	// interrupt's key a lookup is under way for, by that key.
	archived bool
	origin   string
	// author is who made the run's first commit (Author).
	author string
	// endsRun is set once an interrupt requested in the run said the host completes it
	// (EndsRun), and receipts are the expiries of the receipts of such a run's accepted calls
	// not redeemed yet, by interrupt (OpenReceipts): both kept in checkpoints, so a closed
	// interrupt a checkpoint archived still counts.
	endsRun  bool
	receipts map[string]time.Time
	lastID   string
	looked   map[Ref]bool
	merged   map[Ref]bool
	lastOf   map[string]string
}

func (s *State) init() {
	s.byID = map[string]*Interrupt{}
	s.byKey = map[string]*Interrupt{}
	s.latestAt = map[string]*Interrupt{}
	s.CommitIDs = map[string]int64{}
	s.idem = map[string]*Idem{}
	s.decisions = map[string]int64{}
	s.redeemed = map[string]*Redemption{}
	s.receipts = map[string]time.Time{}
	s.conversations = map[string]ConversationState{}
	s.looked = map[Ref]bool{}
	s.merged = map[Ref]bool{}
	s.lastOf = map[string]string{}
}

// add makes in one of the state's interrupts, the last requested.
func (s *State) add(in *Interrupt) {
	s.ordered = append(s.ordered, in)
	s.byID[in.ID] = in
	s.byKey[in.Payload.Key] = in
	s.latestAt[in.NodeID] = in
	if !in.Payload.Kind.IsConversation() {
		return
	}
	id := in.Payload.Data.ConversationID
	switch in.Payload.Kind {
	case interrupt.KindConversationStart:
		if s.conversations[id] == ConversationNone {
			s.conversations[id] = ConversationOpen
		}
	case interrupt.KindConversationClose:
		s.conversations[id] = ConversationClosed
	}
}

// Fold applies commits, in order, to an empty state.
func Fold(commits []Commit) (*State, error) { return Resume(nil, commits) }

// Apply folds one more commit into s. A commit out of sequence or with an unreadable event means
// the log is corrupt or was read wrongly; s is then left unchanged.
func (s *State) Apply(c Commit) error {
	if c.Seq != s.Seq+1 {
		return fmt.Errorf("runlog: commit %d applied after %d", c.Seq, s.Seq)
	}
	if s.byID == nil {
		s.init()
	}
	// Parse before mutating, so that a bad event leaves s as it was.
	type change func()
	changes := make([]change, 0, len(c.Events))
	fresh := map[string]*Interrupt{} // requested by this commit: its later events may name them
	for i, e := range c.Events {
		ch, err := s.change(c, e, fresh)
		if err != nil {
			return fmt.Errorf("runlog: commit %d event %d (%s): %w", c.Seq, i, e.Type, err)
		}
		if ch != nil {
			changes = append(changes, ch)
		}
	}
	for _, ch := range changes {
		ch()
	}
	s.Seq, s.LastAt, s.lastID = c.Seq, c.At, c.ID
	if c.Seq == 1 {
		s.origin, s.author = c.ID, c.By
	}
	if c.ID != "" {
		s.CommitIDs[c.ID] = c.Seq
	}
	if c.Idem != nil {
		rec := *c.Idem
		rec.Value = c.Value()
		s.idem[rec.Key] = &rec
	}
	return nil
}

// Idempotent is the record of the commit a scoped Idempotency-Key made, if any.
func (s *State) Idempotent(key string) *Idem { return s.idem[key] }

// applier is what an event e of commit c does to s: parsed now, applied by the func it answers
// once every event of c has parsed. fresh holds the interrupts c itself requests.
type applier func(s *State, c Commit, e Event, fresh map[string]*Interrupt) (func(), error)

// appliers holds, for each event type the rules read, the method that applies it. The legacy
// aliases repeat interrupt.*, and the other types inform readers, not decisions: they change
// nothing.
var appliers = map[string]applier{
	interrupt.EventRequested:       (*State).requested,
	interrupt.EventResolved:        (*State).resolved,
	interrupt.EventVoted:           (*State).voted,
	interrupt.EventAsked:           (*State).asked,
	interrupt.EventReminded:        (*State).reminded,
	interrupt.EventEscalated:       (*State).escalated,
	interrupt.EventRunConfigured:   (*State).configured,
	interrupt.EventAgentDecided:    (*State).agentDecided,
	interrupt.EventExpired:         (*State).expired,
	interrupt.EventRunCancelled:    (*State).ended,
	interrupt.EventRunCompleted:    (*State).ended,
	interrupt.EventReceiptRedeemed: (*State).receiptRedeemed,
}

func (s *State) change(c Commit, e Event, fresh map[string]*Interrupt) (func(), error) {
	if apply, ok := appliers[e.Type]; ok {
		return apply(s, c, e, fresh)
	}
	return nil, nil
}

// payloadOf is e's payload as its type's Go value: the one it was encoded from when this
// process built it, else parsed.
func payloadOf[T any](e Event) (T, error) {
	if v, ok := e.decoded.(T); ok {
		return v, nil
	}
	var v T
	err := json.Unmarshal(e.Payload, &v)
	return v, err
}

func (s *State) requested(c Commit, e Event, fresh map[string]*Interrupt) (func(), error) {
	p, err := payloadOf[interrupt.Payload](e)
	if err != nil {
		return nil, err
	}
	in, err := restore(requestedBy(c, e), &p)
	if err != nil {
		return nil, err
	}
	fresh[in.ID] = in
	return func() {
		s.add(in)
		s.endsRun = s.endsRun || in.EndsRun
	}, nil
}

func (s *State) resolved(c Commit, e Event, fresh map[string]*Interrupt) (func(), error) {
	r, err := payloadOf[interrupt.Resolved](e)
	if err != nil {
		return nil, err
	}
	in, err := s.known(r.InterruptID, fresh)
	if err != nil {
		return nil, err
	}
	return func() {
		in.Status, in.ResumeValue, in.ResolvedBy, in.ResolvedAt = interrupt.StatusResolved, r.ResumeValue, c.By, c.At
		if in.EndsRun && in.ApprovedCall() != nil && s.redeemed[in.ID] == nil {
			s.receipts[in.ID] = in.DecidedAt().Add(in.ToolCall.ReceiptTTL())
		}
	}, nil
}

func (s *State) voted(_ Commit, e Event, fresh map[string]*Interrupt) (func(), error) {
	v, err := payloadOf[interrupt.Vote](e)
	if err != nil {
		return nil, err
	}
	in, err := s.known(v.InterruptID, fresh)
	if err != nil {
		return nil, err
	}
	return func() { in.Votes = append(in.Votes, v) }, nil
}

func (s *State) asked(c Commit, e Event, fresh map[string]*Interrupt) (func(), error) {
	a, err := payloadOf[interrupt.Asked](e)
	if err != nil {
		return nil, err
	}
	in, err := s.known(a.InterruptID, fresh)
	if err != nil {
		return nil, err
	}
	var value struct {
		Feedback string `json:"feedback"`
	}
	_ = json.Unmarshal(a.ResumeValue, &value) // an ask is checked to carry it when recorded
	return func() {
		if in.Asks == nil {
			in.Asks = map[string]int{}
		}
		in.Asks[a.Principal]++
		in.Asked = append(in.Asked, interrupt.Ask{Principal: a.Principal, At: c.At, Question: value.Feedback})
	}, nil
}

func (s *State) reminded(_ Commit, e Event, fresh map[string]*Interrupt) (func(), error) {
	r, err := payloadOf[interrupt.Reminded](e)
	if err != nil {
		return nil, err
	}
	in, err := s.known(r.InterruptID, fresh)
	if err != nil {
		return nil, err
	}
	return func() { in.Reminded = max(in.Reminded, r.Reminder) }, nil
}

func (s *State) escalated(_ Commit, e Event, fresh map[string]*Interrupt) (func(), error) {
	x, err := payloadOf[interrupt.Escalated](e)
	if err != nil {
		return nil, err
	}
	in, err := s.known(x.InterruptID, fresh)
	if err != nil {
		return nil, err
	}
	return func() {
		in.Escalated = true
		in.Handed = append(in.Handed, x.Handed...)
		in.Deciders.Handed = in.Handed
	}, nil
}

func (s *State) configured(c Commit, e Event, _ map[string]*Interrupt) (func(), error) {
	cfg, err := payloadOf[interrupt.Configured](e)
	if err != nil {
		return nil, err
	}
	return func() { s.Threshold, s.ThresholdSeq = &cfg.EscalationThreshold, c.Seq }, nil
}

func (s *State) agentDecided(c Commit, e Event, _ map[string]*Interrupt) (func(), error) {
	d, err := payloadOf[interrupt.AgentDecided](e)
	if err != nil {
		return nil, err
	}
	return func() {
		if d.Key != "" {
			s.decisions[d.Key] = c.Seq
		}
	}, nil
}

func (s *State) expired(_ Commit, e Event, fresh map[string]*Interrupt) (func(), error) {
	in, err := s.known(e.InterruptID, fresh)
	if err != nil {
		return nil, err
	}
	return func() { in.Status = interrupt.StatusExpired }, nil
}

func (s *State) ended(c Commit, e Event, _ map[string]*Interrupt) (func(), error) {
	ended := interrupt.RunCancelled
	if e.Type == interrupt.EventRunCompleted {
		ended = interrupt.RunCompleted
	}
	return func() {
		s.Ended, s.EndedSeq = ended, c.Seq
		for _, in := range s.ordered {
			if in.Status == interrupt.StatusPending {
				in.Status = interrupt.StatusCancelled
			}
		}
	}, nil
}

func (s *State) known(id string, fresh map[string]*Interrupt) (*Interrupt, error) {
	if in, ok := fresh[id]; ok {
		return in, nil
	}
	in, ok := s.byID[id]
	if !ok {
		return nil, fmt.Errorf("unknown interrupt %q", id)
	}
	return in, nil
}

// Redemption is the one redemption of an interrupt's receipt: the commit that recorded it, when,
// by whom (Commit.By), for the call whose digest it names.
type Redemption struct {
	Seq             int64     `json:"seq"`
	At              time.Time `json:"at"`
	By              string    `json:"by"`
	ArgumentsDigest string    `json:"argumentsDigest"`
}

// receiptRedeemed records a redemption; the interrupt need not be loaded (a closed one is in
// the archive), since the redemption is kept on its own (RefReceipt).
func (s *State) receiptRedeemed(c Commit, e Event, _ map[string]*Interrupt) (func(), error) {
	r, err := payloadOf[interrupt.Redeemed](e)
	if err != nil {
		return nil, err
	}
	return func() {
		if s.redeemed[r.InterruptID] == nil {
			s.redeemed[r.InterruptID] = &Redemption{Seq: c.Seq, At: c.At, By: c.By, ArgumentsDigest: r.ArgumentsDigest}
		}
		delete(s.receipts, r.InterruptID)
	}, nil
}

// Redeemed is the redemption of interrupt id's receipt, nil while none is recorded.
func (s *State) Redeemed(id string) *Redemption { return s.redeemed[id] }

// Decided is the commit that recorded the agent decision of key, 0 if none did.
func (s *State) Decided(key string) int64 { return s.decisions[key] }

// Exists reports whether the run has any commit.
func (s *State) Exists() bool { return s.Seq > 0 }

// Author is who made the run's first commit: a run an agent's person began is theirs to ask in
// and end, and no one else's run is (host.Request.OwnRun). "" for a run checkpointed before it
// was kept, which is then no one's.
func (s *State) Author() string { return s.author }

// HasConversation reports whether the run has opened the conversation (a conversation.exchange
// or conversation.close is refused unless it did).
func (s *State) HasConversation(id string) bool { return s.conversations[id] != ConversationNone }

// ConversationState is where a conversation stands in a run: conversation.start opens it,
// conversation.close closes it, for good.
type ConversationState int

// Conversation states.
const (
	ConversationNone ConversationState = iota
	ConversationOpen
	ConversationClosed
)

// Conversation is where conversation id stands in the run, by the interrupts it requested.
func (s *State) Conversation(id string) ConversationState { return s.conversations[id] }

// ByID is the interrupt with id, if any.
func (s *State) ByID(id string) *Interrupt { return s.byID[id] }

// ByKey is the interrupt requested with re-entry key k, if any.
func (s *State) ByKey(k string) *Interrupt { return s.byKey[k] }

// LatestAt is the last interrupt requested at node, if any.
func (s *State) LatestAt(node string) *Interrupt { return s.latestAt[node] }

// Held is every interrupt the state holds, in no order: those requested since its checkpoint,
// those the checkpoint kept pending, and those merged from the archive. A rule over the whole
// run (a run the host completes once nothing of it is open) reads them; one closed and archived
// is not among them unless it was looked up.
func (s *State) Held() []*Interrupt {
	out := make([]*Interrupt, 0, len(s.byID))
	for _, in := range s.byID {
		out = append(out, in)
	}
	return out
}

// EndsRun reports whether the run is one the host completes once nothing of it is open
// (Event.EndsRun): an interrupt requested in it said so, however long ago.
func (s *State) EndsRun() bool { return s.endsRun }

// OpenReceipts are the expiries of the receipts of the accepted calls of a run the host
// completes (EndsRun) not redeemed yet, by interrupt, expired or not: what of the run may still
// be open once every interrupt is closed, even one a checkpoint archived.
func (s *State) OpenReceipts() map[string]time.Time { return s.receipts }

// Pending lists the interrupts pending at now, in the order they were requested.
func (s *State) Pending(now time.Time) []*Interrupt {
	var out []*Interrupt
	for _, in := range s.ordered {
		if in.StatusAt(now) == interrupt.StatusPending {
			out = append(out, in)
		}
	}
	return out
}

// Snapshot is the RunSnapshot body of get-run.
type Snapshot struct {
	RunID         string              `json:"runId"`
	Status        interrupt.RunStatus `json:"status"`
	CurrentNodeID string              `json:"currentNodeId,omitempty"`
	Pending       []PendingRef        `json:"pending"`
	LastSeq       int64               `json:"lastSeq"`
}

// PendingRef names one pending interrupt in a Snapshot.
type PendingRef struct {
	NodeID      string         `json:"nodeId"`
	InterruptID string         `json:"interruptId"`
	Kind        interrupt.Kind `json:"kind"`
}

// Snapshot summarises the run at now. With several interrupts pending, the oldest decides the
// status and currentNodeId: it is the one the run has waited on longest.
func (s *State) Snapshot(runID string, now time.Time) Snapshot {
	snap := Snapshot{RunID: runID, Status: interrupt.RunRunning, Pending: []PendingRef{}, LastSeq: s.Seq}
	for _, in := range s.Pending(now) {
		snap.Pending = append(snap.Pending, PendingRef{NodeID: in.NodeID, InterruptID: in.ID, Kind: in.Payload.Kind})
	}
	switch {
	case s.Ended != "":
		snap.Status = s.Ended
	case len(snap.Pending) > 0:
		first := snap.Pending[0]
		snap.Status, snap.CurrentNodeID = first.Kind.WaitingStatus(), first.NodeID
	}
	return snap
}
