package runlog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// A run's log is read at a cost that does not grow with the run (docs/design.md, "Runs of any
// length"): every CheckpointEvery commits the host writes a checkpoint of the run's live state,
// and a read folds the newest checkpoint and the commits after it. What the live state leaves
// out grows with the run and is never needed whole: interrupts that closed, Idempotency-Key
// records, agent decisions and closed conversations. The checkpoint's writer first moves them
// to an archive of items looked up by key (Ref), then writes the checkpoint; so whatever a
// checkpoint left out is in the archive before anyone can read the checkpoint, and a reader that
// misses a key in the state it folded looks it up there (State.Missing, State.Merge).
//
// Both are derived data: deterministic from the log's prefix, written after the commits they
// come from, never trusted past the commits that follow them (those are folded on top), and
// their absence only costs a longer read.

// CheckpointEvery is how many commits apart a run's checkpoints are.
const CheckpointEvery = 8

// Checkpoint is a run's live state after commit Seq, whose ID is Commit: a reader trusts it only
// beside that very commit, live (not one a run id taken again wrote over, not one retention
// expired while a late checkpoint was written).
type Checkpoint struct {
	Seq          int64               `json:"seq"`
	Commit       string              `json:"commit"`
	At           time.Time           `json:"at"`
	Threshold    *float64            `json:"threshold,omitempty"`
	ThresholdSeq int64               `json:"thresholdSeq,omitempty"`
	Ended        interrupt.RunStatus `json:"ended,omitempty"`
	EndedSeq     int64               `json:"endedSeq,omitempty"`
	// Pending are the interrupts the log records as pending, in the order they were requested.
	Pending []Saved `json:"pending"`
	// Open are the conversations open in the run.
	Open []string `json:"open,omitempty"`
	// Archived is set once anything of the run went to the archive: until then a key missing
	// from the state is missing from the run.
	Archived bool `json:"archived,omitempty"`
	// Origin is the ID of the run's first commit: a run id taken again after its run expired
	// names another run, whose archive items are not this one's.
	Origin string `json:"origin,omitempty"`
	// Author is who made the run's first commit (State.Author).
	Author string `json:"author,omitempty"`
	// EndsRun and Receipts are State.EndsRun and State.OpenReceipts: absent in a checkpoint
	// written before they were kept, whose run then reads as one no one completes (a request
	// made it so only since).
	EndsRun  bool                 `json:"endsRun,omitempty"`
	Receipts map[string]time.Time `json:"receipts,omitempty"`
	// Superseded are the pending interrupts that are not the last requested at their node (one
	// past its deadline, not yet recorded expired, and another requested there since).
	Superseded []string `json:"superseded,omitempty"`
}

// Saved is an interrupt as a checkpoint or the archive keeps it: everything the fold records
// of it (Interrupt embeds it), and nothing derived.
type Saved struct {
	ID     string `json:"id"`
	NodeID string `json:"nodeId"`
	// Raw is the InterruptPayload exactly as requested.
	Raw          json.RawMessage `json:"payload"`
	RequestedSeq int64           `json:"requestedSeq"`
	RequestedAt  time.Time       `json:"requestedAt"`
	// RequestedBy is who requested it (Commit.By): never the one who decides it.
	RequestedBy string `json:"requestedBy,omitempty"`
	// Endpoint is the webhook endpoint an external-event interrupt waits on (Event.Endpoint).
	Endpoint string `json:"endpoint,omitempty"`
	// Display is how people are shown it, as requested (Event.Display); nil for nothing given.
	Display *interrupt.Display `json:"display,omitempty"`
	// FollowUp is how it is followed up while it waits (Event.FollowUp); Reminded counts the
	// reminders recorded, Escalated whether its escalation was.
	FollowUp  *interrupt.FollowUp `json:"followUp,omitempty"`
	Reminded  int                 `json:"reminded,omitempty"`
	Escalated bool                `json:"escalated,omitempty"`
	// Handed are the approvers' places its escalation handed on (interrupt.Escalated.Handed),
	// which its deciders judge (interrupt.Deciders.Handed).
	Handed []interrupt.Handing `json:"handed,omitempty"`
	// ToolCall is the call an approval asks people to allow (Event.ToolCall); nil for none.
	ToolCall *interrupt.ToolCall `json:"toolCall,omitempty"`
	// RefKinds are the ref kinds its host enforced when it was requested (Event.RefKinds).
	RefKinds []string `json:"refKinds,omitempty"`
	// EndsRun is set when the run was made for the interrupt (Event.EndsRun).
	EndsRun bool `json:"endsRun,omitempty"`
	// Status is as the log records it, deadlines aside: read it through StatusAt.
	Status      interrupt.Status `json:"status"`
	ResumeValue json.RawMessage  `json:"resumeValue,omitempty"`
	// ResolvedBy is who resolved it (the resolving commit's author, Commit.By): the host's own
	// record, where the resume value's decidedBy is what the decider sent. "" until resolved,
	// and in a checkpoint written before it was kept.
	ResolvedBy string `json:"resolvedBy,omitempty"`
	// ResolvedAt is when the host recorded the resolution (the commit's time): zero until
	// resolved, and in a checkpoint written before it was kept.
	ResolvedAt time.Time `json:"resolvedAt,omitzero"`
	// Votes are the approval's counted votes, in order, with the eligibility decided when each
	// was cast.
	Votes []interrupt.Vote `json:"votes,omitempty"`
	// Asks counts each principal's asks (approval action ask), which record without exiting;
	// Asked holds them, in order, for the approvers to read.
	Asks  map[string]int  `json:"asks,omitempty"`
	Asked []interrupt.Ask `json:"asked,omitempty"`
}

// RefKind is what an archive item is looked up by.
type RefKind byte

// The archive's items, by what names them.
const (
	// RefKey: a re-entry key; the item is the closed interrupt requested with it (Saved).
	RefKey RefKind = 'k'
	// RefInterrupt: an interrupt id; the item is its re-entry key.
	RefInterrupt RefKind = 'i'
	// RefNode: a node; the item is the re-entry key of the last interrupt requested there, once
	// closed.
	RefNode RefKind = 'n'
	// RefIdem: a scoped Idempotency-Key; the item is its record (archivedIdem).
	RefIdem RefKind = 'm'
	// RefDecision: an agent decision's key; the item is the seq of the commit that recorded it.
	RefDecision RefKind = 'd'
	// RefConversation: a conversation id; the item says it was closed.
	RefConversation RefKind = 'c'
	// RefReceipt: an interrupt id; the item is the redemption of its approved call's receipt.
	RefReceipt RefKind = 'r'
)

// Ref names one archive item of a run.
type Ref struct {
	Kind RefKind
	Name string
}

// Found is an archive item: what Ref names, encoded. Origin is the run's (Checkpoint.Origin);
// Seq, when set, orders the values an item takes (a node's last interrupt): a store keeps the
// highest.
type Found struct {
	Ref
	Value  json.RawMessage
	Origin string
	Seq    int64
}

// archivedIdem is an Idempotency-Key's record with the resume value its commit held.
type archivedIdem struct {
	Idem
	Value json.RawMessage `json:"value,omitempty"`
}

// Resume is the state after cp and then commits, which must follow cp in order.
func Resume(cp *Checkpoint, commits []Commit) (*State, error) {
	s := &State{}
	s.init()
	if cp != nil {
		s.Seq, s.LastAt, s.Threshold, s.ThresholdSeq, s.Ended, s.EndedSeq = cp.Seq, cp.At, cp.Threshold, cp.ThresholdSeq, cp.Ended, cp.EndedSeq
		s.archived, s.origin, s.author, s.lastID, s.endsRun = cp.Archived, cp.Origin, cp.Author, cp.Commit, cp.EndsRun
		maps.Copy(s.receipts, cp.Receipts)
		for _, sv := range cp.Pending {
			in, err := restore(sv, nil)
			if err != nil {
				return nil, err
			}
			s.add(in)
			if slices.Contains(cp.Superseded, in.ID) {
				delete(s.latestAt, in.NodeID) // the last there is closed, and archived
			}
		}
		for _, id := range cp.Open {
			s.conversations[id] = ConversationOpen
		}
	}
	for _, c := range commits {
		if err := s.Apply(c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Archived reports whether anything of the run went to the archive: only then can a key the
// state does not hold be the run's.
func (s *State) Archived() bool { return s.archived }

// PendingBytes is what grows a checkpoint with its payloads: the bytes of the payloads of the
// interrupts the log records as pending, and of their votes' values. The host bounds it
// (host.MaxPendingBytes) so that a checkpoint always fits one store item.
func (s *State) PendingBytes() int {
	n := 0
	for _, in := range s.ordered {
		if in.Status != interrupt.StatusPending {
			continue
		}
		n += len(in.Raw)
		for _, v := range in.Votes {
			n += len(v.ResumeValue)
		}
	}
	return n
}

// Checkpoint is s's live state, and the archive items that must be written before it: the
// interrupts that closed, every Idempotency-Key record, agent decision and closed conversation
// the state holds, but for those it was given from the archive.
func (s *State) Checkpoint() (*Checkpoint, []Found, error) {
	cp := &Checkpoint{
		Seq: s.Seq, Commit: s.lastID, At: s.LastAt, Threshold: s.Threshold, ThresholdSeq: s.ThresholdSeq,
		Ended: s.Ended, EndedSeq: s.EndedSeq, Pending: []Saved{}, Origin: s.origin, Author: s.author,
		EndsRun: s.endsRun, Receipts: maps.Clone(s.receipts),
	}
	if len(cp.Receipts) == 0 {
		cp.Receipts = nil
	}
	var archive []Found
	var err error
	add := func(kind RefKind, name string, v any, seq int64) {
		if err != nil || s.merged[Ref{kind, name}] {
			return
		}
		var raw json.RawMessage
		if raw, err = Marshal(v); err == nil {
			archive = append(archive, Found{Ref: Ref{kind, name}, Value: raw, Origin: s.origin, Seq: seq})
		}
	}
	for _, in := range s.ordered {
		if in.Status == interrupt.StatusPending {
			cp.Pending = append(cp.Pending, in.Saved)
			if s.latestAt[in.NodeID] != in {
				cp.Superseded = append(cp.Superseded, in.ID)
			}
			continue
		}
		// A closed interrupt is archived without its votes and asks, which no rule reads once
		// it closed: so its item holds its payload and value, each within a request's bound,
		// and fits the store's.
		closed := in.Saved
		closed.Votes, closed.Asks, closed.Asked = nil, nil, nil
		add(RefKey, in.Payload.Key, closed, 0)
		add(RefInterrupt, in.ID, in.Payload.Key, 0)
		if s.latestAt[in.NodeID] == in {
			add(RefNode, in.NodeID, in.Payload.Key, in.RequestedSeq)
		}
	}
	for key, rec := range s.idem {
		add(RefIdem, key, archivedIdem{Idem: *rec, Value: rec.Value}, 0)
	}
	for key, seq := range s.decisions {
		add(RefDecision, key, seq, 0)
	}
	for id, r := range s.redeemed {
		add(RefReceipt, id, r, 0)
	}
	for id, state := range s.conversations {
		switch state {
		case ConversationOpen:
			cp.Open = append(cp.Open, id)
		case ConversationClosed:
			add(RefConversation, id, true, 0)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(cp.Open)
	slices.SortFunc(archive, func(a, b Found) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), strings.Compare(a.Name, b.Name))
	})
	cp.Archived = s.archived || len(archive) > 0
	return cp, archive, nil
}

// Missing are the refs whose keys s does not hold, and so must be looked up in the archive; none
// when nothing of the run was archived.
func (s *State) Missing(refs ...Ref) []Ref {
	if !s.archived {
		return nil
	}
	var out []Ref
	for _, r := range refs {
		if r.Name == "" || s.looked[r] {
			continue
		}
		var held bool
		switch r.Kind {
		case RefKey:
			held = s.byKey[r.Name] != nil
		case RefInterrupt:
			held = s.byID[r.Name] != nil
		case RefNode:
			held = s.latestAt[r.Name] != nil
		case RefIdem:
			held = s.idem[r.Name] != nil
		case RefDecision:
			held = s.decisions[r.Name] > 0
		case RefReceipt:
			held = s.redeemed[r.Name] != nil
		case RefConversation:
			held = s.conversations[r.Name] != ConversationNone
		}
		if !held {
			out = append(out, r)
		}
	}
	return out
}

// Merge adds to s what the archive holds for refs (found, as looked up), and answers the refs
// that must be looked up next: an interrupt id or a node names a re-entry key.
func (s *State) Merge(refs []Ref, found []Found) ([]Ref, error) {
	var next []Ref
	for _, r := range refs {
		s.looked[r] = true
	}
	for _, f := range found {
		if f.Origin != s.origin {
			continue // an earlier run of the same id, expired
		}
		s.merged[f.Ref] = true
		switch f.Kind {
		case RefKey:
			var sv Saved
			if err := json.Unmarshal(f.Value, &sv); err != nil {
				return nil, fmt.Errorf("runlog: archived %q: %w", f.Name, err)
			}
			if s.byKey[f.Name] != nil {
				continue
			}
			in, err := restore(sv, nil)
			if err != nil {
				return nil, err
			}
			s.byKey[f.Name], s.byID[in.ID] = in, in
			if node, ok := s.lastOf[f.Name]; ok && s.latestAt[node] == nil {
				s.latestAt[node] = in
			}
		case RefInterrupt, RefNode:
			var key string
			if err := json.Unmarshal(f.Value, &key); err != nil {
				return nil, fmt.Errorf("runlog: archived %q: %w", f.Name, err)
			}
			in := s.byKey[key]
			switch {
			case in != nil && f.Kind == RefNode && s.latestAt[f.Name] == nil:
				s.latestAt[f.Name] = in
			case in == nil:
				if f.Kind == RefNode {
					s.lastOf[key] = f.Name
				}
				if r := (Ref{RefKey, key}); !s.looked[r] && !slices.Contains(next, r) {
					next = append(next, r)
				}
			}
		case RefIdem:
			var rec archivedIdem
			if err := json.Unmarshal(f.Value, &rec); err != nil {
				return nil, fmt.Errorf("runlog: archived %q: %w", f.Name, err)
			}
			if s.idem[f.Name] == nil {
				rec.Idem.Value = rec.Value
				s.idem[f.Name] = &rec.Idem
			}
		case RefDecision:
			var seq int64
			if err := json.Unmarshal(f.Value, &seq); err != nil {
				return nil, fmt.Errorf("runlog: archived %q: %w", f.Name, err)
			}
			if s.decisions[f.Name] == 0 {
				s.decisions[f.Name] = seq
			}
		case RefConversation:
			if s.conversations[f.Name] == ConversationNone {
				s.conversations[f.Name] = ConversationClosed
			}
		case RefReceipt:
			var r Redemption
			if err := json.Unmarshal(f.Value, &r); err != nil {
				return nil, fmt.Errorf("runlog: archived %q: %w", f.Name, err)
			}
			if s.redeemed[f.Name] == nil {
				s.redeemed[f.Name] = &r
			}
		}
	}
	return next, nil
}
