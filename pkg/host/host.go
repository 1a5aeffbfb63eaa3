// Package host implements the operations of the interrupt host over a run log: request an
// interrupt, resolve it, read a run's snapshot and events. Every write follows one pattern (read,
// fold, decide, conditional append, re-read on conflict), which is what makes "resumed exactly
// once" hold under concurrent callers.
package host

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// Runs is the run log; every operation on a run uses it. Every method refuses a key that names
// no one run (runlog.Key.Valid) with runlog.ErrInvalidKey, and reads a run with no live commit
// (none yet, or gone past its retention) as no run: nothing, and no error.
type Runs interface {
	// Read answers the run's commits after seq after, in order, at most limit (0: all), read
	// consistently; none past the last.
	Read(ctx context.Context, k runlog.Key, after int64, limit int) ([]runlog.Commit, error)
	// Append writes c unless a live commit holds its seq (runlog.ErrSeqTaken: another writer
	// won, or c was written already; re-read and decide again) or it does not fit one write
	// (*runlog.TooLargeError); either way it writes nothing. runlog.ErrUnknownOutcome
	// (beside interrupt.ErrUnavailable, and runlog.ErrRefused when the last try was refused
	// unapplied) means the answer was lost: only a read tells whether c was written. c.Seq
	// follows the last commit the caller read; a store need not check that it does (package
	// inmem refuses a gap, package dynamo writes it).
	Append(ctx context.Context, k runlog.Key, c runlog.Commit) error
	// Tail is the run's newest checkpoint (nil if none) and, consistently, the commits after it.
	Tail(ctx context.Context, k runlog.Key) (*runlog.Checkpoint, []runlog.Commit, error)
	// Checkpoint writes the archive items, then cp (unless a newer checkpoint is there: an
	// older or the same one again is no error): a reader never sees a checkpoint without what
	// it left out. A *runlog.TooLargeError means cp or an archive item does not fit: cp is not
	// written, and reads stay longer.
	Checkpoint(ctx context.Context, k runlog.Key, cp *runlog.Checkpoint, archive []runlog.Found) error
	// Lookup answers the archive items of refs that exist, in no order; the others are left out.
	Lookup(ctx context.Context, k runlog.Key, refs []runlog.Ref) ([]runlog.Found, error)
}

// Conversations keep the ownership of conversation ids (the spec makes a conversationId
// tenant-unique, so one run of a tenant owns each). Requesting a conversation.* interrupt uses
// it.
type Conversations interface {
	// ClaimConversation makes c.RunID the owner of c.Tenant's conversation c.ConversationID, at
	// c.At, unless a run other than c.TakeOverFrom ("" for none) owns it: then it answers
	// runlog.ErrClaimed with the owner. A claim already c.RunID's is answered as it stands,
	// unchanged, so claiming again is no error. A tenant that is not an id (runlog.ValidID)
	// answers runlog.ErrInvalidKey.
	ClaimConversation(ctx context.Context, c runlog.ConversationClaim) (runlog.Claim, error)
}

// Stores are the host's ports, each used by the operations its doc comment names. One store
// may keep them all (Store); a host built for some operations may leave out what they never
// use (a nil port is a bug of the caller the first time an operation needs it). Each method's
// doc names the errors it answers by design; beside them, a store that cannot be reached,
// throttles or fails answers an error wrapping interrupt.ErrUnavailable (a retry later may
// succeed), and any other error is a fault: a request the store refuses for what it is, or
// data it cannot read.
type Stores struct {
	Runs          Runs
	Conversations Conversations
	Endpoints     Endpoints
	Correlations  Correlations
	Deadlines     Deadlines
	Waiting       Waiting
	Assignments   Assignments
	RunIndex      RunIndex
	// Delegations are what delegates hold (delegation.Store), read when a caller may not decide
	// in its own right; nil holds none.
	Delegations Delegations
}

// Store keeps everything the host keeps, as package dynamo's table and package inmem do.
type Store interface {
	Runs
	Conversations
	Endpoints
	Correlations
	Deadlines
	Waiting
	Assignments
	RunIndex
	Delegations
}

// StoresOf is every port of the host, kept by s.
func StoresOf(s Store) Stores {
	return Stores{Runs: s, Conversations: s, Endpoints: s, Correlations: s, Deadlines: s, Waiting: s, Assignments: s, RunIndex: s, Delegations: s}
}

// Config is the host's behaviour that operators choose: policy, and nothing the host runs with
// (that is Env's). What only some operations need is taken by the service that needs it: the
// keyring by NewSigner, the endpoints' secrets by NewWebhooks, so a function that lacks one does
// not compile.
type Config struct {
	// Capabilities the host advertises; conversation.* kinds need "conversation".
	Capabilities []string
	// MaxAttempts bounds how often one write re-reads after losing a race before answering 503;
	// 0 means 50.
	MaxAttempts int
	// RefKinds are the approver ref kinds the host advertises and enforces (principal, group,
	// role); approverGroupRefs and approverRoleRefs bind only when their kind is here.
	RefKinds []string
	// OverridePrincipals may release an approval alone when it sets overrideBypassesQuorum.
	OverridePrincipals []string
	// MaxPending bounds the interrupts pending at once in one run, which every read of the run
	// folds (they are its checkpoint); 0 means DefaultMaxPending.
	MaxPending int
	// InboxRetention is how long an accepted provider event is kept for interrupts requested
	// after it; 0 means DefaultInboxRetention.
	InboxRetention time.Duration
	// Retention is how long a run's log is kept after the run ended; 0 means DefaultRetention.
	Retention time.Duration
	// EscalationThreshold is the agent confidence below which a decision suspends its node,
	// for runs that configure none; nil means DefaultEscalationThreshold, and 0 suspends none.
	EscalationThreshold *float64
	// FollowUp is how an interrupt a person decides is followed up when its request says
	// nothing of it: each member (reminders, escalation) the request leaves out is this one's.
	// The zero FollowUp follows up nothing.
	FollowUp interrupt.FollowUp
}

// Env is what every host runs with: its stores and schemas, and what it reports to.
type Env struct {
	Stores  Stores
	Schemas *schema.Set
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Metrics counts the interrupts committed by kind and the writes that lost a race (package
	// metrics); nil counts nothing.
	Metrics *metrics.Log
	// OnCheckpointError hears of a checkpoint not written (the operation succeeded anyway),
	// for the function's log; nil ignores it.
	OnCheckpointError func(k runlog.Key, seq int64, err error)
}

// DefaultRetention is the template's RetentionDays default.
const DefaultRetention = 30 * 24 * time.Hour

// DefaultInboxRetention is the template's InboxRetentionDays default.
const DefaultInboxRetention = 7 * 24 * time.Hour

// A run's log has no bound on its length (its reads cost the same at any length: docs/design.md,
// "Runs of any length"); what every read folds does: the interrupts pending at once, with their
// votes, and how often one principal may ask on one approval.
const (
	DefaultMaxPending   = 200
	MaxAsksPerPrincipal = 10
	// MaxPendingBytes bounds the payloads and vote values of a run's pending interrupts
	// (runlog.State.PendingBytes), which its checkpoint carries: with DefaultMaxPending
	// interrupts' ids, times and tallies beside them, the checkpoint stays within one store
	// item (400 KB), so a run's reads stay constant whatever its payloads (docs/design.md,
	// "Runs of any length").
	MaxPendingBytes = 300_000
)

// Host runs the operations. It holds no per-request state and is safe for concurrent use.
type Host struct {
	runs          Runs
	conversations Conversations
	endpointStore Endpoints
	correlations  Correlations
	deadlines     Deadlines
	waiting       Waiting
	assignments   Assignments
	runIndex      RunIndex
	delegations   Delegations
	schemas       *schema.Set
	cfg           Config
	now           func() time.Time
	metrics       *metrics.Log
	onCheckpoint  func(k runlog.Key, seq int64, err error)
	endpoints     *endpointCache
}

// New returns a Host that runs with env, configured by cfg.
func New(env Env, cfg Config) *Host {
	if env.Now == nil {
		env.Now = time.Now
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 50
	}
	if cfg.MaxPending == 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.InboxRetention == 0 {
		cfg.InboxRetention = DefaultInboxRetention
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.EscalationThreshold == nil {
		t := DefaultEscalationThreshold
		cfg.EscalationThreshold = &t
	}
	st := env.Stores
	return &Host{
		runs: st.Runs, conversations: st.Conversations, endpointStore: st.Endpoints, correlations: st.Correlations, deadlines: st.Deadlines, waiting: st.Waiting, assignments: st.Assignments, runIndex: st.RunIndex, delegations: st.Delegations,
		schemas: env.Schemas, cfg: cfg, now: env.Now, metrics: env.Metrics, onCheckpoint: env.OnCheckpointError,
		endpoints: &endpointCache{m: map[string]cachedEndpoint{}},
	}
}

// Discovery is what the host advertises at /.well-known/interrupt-host: read from the same
// configuration the operations enforce.
type Discovery struct {
	Capabilities []string `json:"capabilities"`
	Interrupt    Facet    `json:"interrupt"`
	// Implementation is which release of this host answers, for operators and bug reports; the
	// protocol's own version is the OpenAPI document's.
	Implementation Implementation `json:"implementation"`
}

// Facet is the interrupt facet (schemas/v2/facets/interrupt.schema.json).
type Facet struct {
	TokenAlgs []string `json:"tokenAlgs"`
	RefKinds  []string `json:"refKinds"`
}

// DiscoveryOf is the discovery document of a host configured with cfg: what it advertises is
// what it enforces.
func DiscoveryOf(cfg Config) Discovery {
	return Discovery{
		Capabilities:   append([]string{}, cfg.Capabilities...),
		Interrupt:      Facet{TokenAlgs: append([]string{}, token.Algs...), RefKinds: append([]string{}, cfg.RefKinds...)},
		Implementation: Implementation{Name: "interrupthost", Version: Version},
	}
}

// CheckConfig refuses a configuration the host cannot honour, so a misconfigured function fails
// at init rather than on a request.
func CheckConfig(cfg Config) error {
	for _, k := range cfg.RefKinds {
		if k != interrupt.RefPrincipal && k != interrupt.RefGroup && k != interrupt.RefRole {
			return fmt.Errorf("host: ref kind %q is not principal, group or role", k)
		}
	}
	return nil
}

// HasCapability reports whether the host advertises capability c.
func (h *Host) HasCapability(c string) bool { return slices.Contains(h.cfg.Capabilities, c) }

// Now is the host's clock: what a page decided at now records as decidedAt.
func (h *Host) Now() time.Time { return h.now() }

// key names the caller's run, refusing a run id that could name none (as no such run).
func key(p interrupt.Principal, runID string) (runlog.Key, error) {
	k := runlog.Key{Tenant: p.Tenant, RunID: runID}
	if !k.Valid() {
		return k, interrupt.Errorf(interrupt.CodeNotFound, "no run %q", runID)
	}
	return k, nil
}

// loadRun folds the log of the caller's run runID, refusing a run id that could name none; refs
// are what the operation looks up in the run by key, from the archive when the state has not
// got them.
func (h *Host) loadRun(ctx context.Context, p interrupt.Principal, runID string, refs ...runlog.Ref) (runlog.Key, *runlog.State, error) {
	k, err := key(p, runID)
	if err != nil {
		return k, nil, err
	}
	st, err := h.load(ctx, k, refs...)
	return k, st, err
}

// load folds a run from its newest checkpoint and the commits after it, and merges from the
// archive what refs name and the state does not hold: the archive holds what a checkpoint left
// out before the checkpoint exists, so a read after the fold finds it (runlog.Checkpoint). A
// log without a checkpoint that does not start at commit 1 is a run past its retention whose
// commits DynamoDB is deleting one by one: no run, as when they are all gone.
func (h *Host) load(ctx context.Context, k runlog.Key, refs ...runlog.Ref) (*runlog.State, error) {
	cp, commits, err := h.runs.Tail(ctx, k)
	if err != nil {
		return nil, err
	}
	if cp == nil && len(commits) > 0 && commits[0].Seq != 1 {
		return runlog.Fold(nil)
	}
	st, err := runlog.Resume(cp, commits)
	if err != nil {
		return nil, err
	}
	return st, h.lookUp(ctx, k, st, refs...)
}

// lookUp merges into st what the archive holds for the refs st misses.
func (h *Host) lookUp(ctx context.Context, k runlog.Key, st *runlog.State, refs ...runlog.Ref) error {
	for missing := st.Missing(refs...); len(missing) > 0; {
		found, err := h.runs.Lookup(ctx, k, missing)
		if err != nil {
			return err
		}
		if missing, err = st.Merge(missing, found); err != nil {
			return err
		}
	}
	return nil
}

// checkpoint writes the run's checkpoint once its log reached a multiple of
// runlog.CheckpointEvery, with what it archives. A failure only leaves the next reads longer
// (until the next checkpoint), so it is not the operation's: nothing the operation answers
// depends on it. An ended run is not checkpointed: it takes no more commits, and its items
// are being given their retention.
func (h *Host) checkpoint(ctx context.Context, k runlog.Key, st *runlog.State) {
	if st.Seq%runlog.CheckpointEvery != 0 || st.Ended != "" {
		return
	}
	cp, archive, err := st.Checkpoint()
	if err == nil {
		err = h.runs.Checkpoint(ctx, k, cp, archive)
	}
	if err != nil && h.onCheckpoint != nil {
		h.onCheckpoint(k, st.Seq, err)
	}
}

// answer is what an operation answers. A decision's answer is complete but for the seq of the
// commit it is about to write, which atSeq stamps on it once written.
type answer[T any] interface {
	atSeq(seq int64) T
}

// decision is what an operation concludes from the state: the events to commit (none when the
// answer needs no write) and the answer.
type decision[T answer[T]] struct {
	events []runlog.Event
	answer T
	// idem, when set, is recorded with the commit, its Response filled with the answer.
	idem *runlog.Idem
	// prepare writes what must exist before the commit does (a conversation's claim, a
	// waiter's registration, a due entry), given the commit's time; it runs only once the events
	// are decided, so a refused request writes nothing, and it may complete the decision with
	// what it found (an early event resolves the interrupt in its own commit).
	prepare []func(ctx context.Context, d *decision[T], at time.Time) error
	// ends is set for the commit that ends the run: a run can always be ended, however large.
	ends bool
}

// commit is the one write path. decide sees the state folded up to the newest commit it knows
// of; if its events lose the race for seq+1, the commits that won are folded in and decide runs
// again, so every answer is consistent with the log as it stands after the write. On return st
// includes the commit written. by is who makes the commit (runlog.Commit.By).
func commit[T answer[T]](ctx context.Context, h *Host, k runlog.Key, st *runlog.State, by string, decide func(*runlog.State) (decision[T], error)) (T, error) {
	var zero T
	for range h.cfg.MaxAttempts {
		d, err := decide(st)
		if err != nil {
			return zero, err
		}
		if len(d.events) == 0 {
			return d.answer, nil
		}
		if err := finish(h, k, st, &d); err != nil {
			return zero, err
		}
		if !d.ends {
			if err := h.fits(st, d.events); err != nil {
				return zero, err
			}
		}
		at := h.now().UTC()
		for _, prepare := range d.prepare {
			if err := prepare(ctx, &d, at); err != nil {
				return zero, err
			}
		}
		c := runlog.Commit{Seq: st.Seq + 1, ID: rand.Text(), At: at, Events: d.events, By: by}
		if d.idem != nil {
			rec := *d.idem
			if rec.Response, err = idemResponse(d.answer.atSeq(c.Seq)); err != nil {
				return zero, err
			}
			c.Idem = &rec
		}
		seq, err := h.settle(ctx, k, st, c)
		switch {
		case err == nil:
			h.counted(st, d.events)
			h.endedBy(ctx, k, st)
			h.checkpoint(ctx, k, st)
			return d.answer.atSeq(seq), nil
		case !errors.Is(err, runlog.ErrSeqTaken):
			return zero, err
		}
		h.metrics.Count(metrics.WriteRaces)
	}
	return zero, fmt.Errorf("host: %d attempts lost the race for the next commit: %w", h.cfg.MaxAttempts, interrupt.ErrUnavailable)
}

// counted publishes the interrupts a commit requested, resolved or expired, by kind, and how
// long each one resolved had waited; st includes the commit.
func (h *Host) counted(st *runlog.State, events []runlog.Event) {
	for _, e := range events {
		var name metrics.Name
		switch e.Type {
		case interrupt.EventRequested:
			name = metrics.Requested
		case interrupt.EventResolved:
			name = metrics.Resolved
		case interrupt.EventExpired:
			name = metrics.Expired
		default:
			continue
		}
		if in := st.ByID(e.InterruptID); in != nil {
			kind := metrics.Dim{Name: metrics.DimKind, Value: string(in.Payload.Kind)}
			h.metrics.Count(name, kind)
			if name == metrics.Resolved {
				h.metrics.Duration(metrics.DecisionTime, st.LastAt.Sub(in.RequestedAt), kind)
			}
		}
	}
}

// nearDeadline reports whether ctx ends too soon for another put and read: an answer of
// outcome_unknown is better than the invocation's timeout.
func nearDeadline(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return ok && time.Until(deadline) < 3*time.Second
}

// CommitHorizon bounds how long after its time (runlog.Commit.At, taken before the commit's due
// entries are filed) a commit may still be put: past it, no put of it is sent, and one in flight
// is cancelled. The expiry sweep stands on it: an entry whose interrupt the log does not hold
// SweepGrace past the entry's deadline (never before its commit's time) names a commit that can
// no longer land, and only then is it passed over. SweepGrace-CommitHorizon is left for a put
// already received to be applied, and for the functions' clocks to disagree.
const CommitHorizon = 20 * time.Second

// unknownRetries bounds how often settle puts a commit again whose outcome was unknown and which
// a read then did not find.
const unknownRetries = 3

// settle appends c and finds out what became of it. It answers the seq c was committed at (st
// then includes it), or runlog.ErrSeqTaken when another writer's commit took its seq (st then
// includes the winners'), or an error after which c was not written, but for
// interrupt.ErrOutcomeUnknown: a put failed or lost its race, and no read could say whose commit
// holds the seq.
//
// A put whose answer is lost may have been applied, and the SDK's retries of it then find the
// seq taken, by itself: so every failed put is followed by a read for the commit's own id. If
// the read finds the seq still free, the same commit is put again: whether the first put lands
// late or never, the seq's condition lets exactly one of them be written, and a read finds it.
// A put refused before it was applied (runlog.ErrRefused) whose seq a read finds free wrote
// nothing: that is the one failed put answered as unavailable.
//
// Every put of c is sent within CommitHorizon of c.At, and cancelled at it: past it, c is not
// put again, and the answer is unavailable if no put of it was sent, outcome_unknown otherwise.
func (h *Host) settle(ctx context.Context, k runlog.Key, st *runlog.State, c runlog.Commit) (int64, error) {
	sentUnknown := false // a put of c was sent whose outcome no read has settled
	until := c.At.Add(CommitHorizon)
	for attempt := 0; ; attempt++ {
		left := until.Sub(h.now())
		switch {
		case left <= 0 && sentUnknown:
			return 0, fmt.Errorf("host: commit %d: %w (past its horizon, %s after its time)", c.Seq, interrupt.ErrOutcomeUnknown, CommitHorizon)
		case left <= 0:
			return 0, fmt.Errorf("host: commit %d not put within %s of its time: %w", c.Seq, CommitHorizon, interrupt.ErrUnavailable)
		}
		err := h.put(ctx, k, c, left)
		if err == nil {
			return c.Seq, st.Apply(c)
		}
		if tooLarge := (*runlog.TooLargeError)(nil); errors.As(err, &tooLarge) {
			return 0, interrupt.Errorf(interrupt.CodePayloadTooLarge,
				"the commit would take %d bytes; the run log holds at most %d in one commit", tooLarge.Size, tooLarge.Limit)
		}
		unknown := errors.Is(err, runlog.ErrUnknownOutcome)
		if !unknown && !errors.Is(err, runlog.ErrSeqTaken) {
			return 0, err
		}
		newer, rerr := h.runs.Read(ctx, k, st.Seq, 0)
		if rerr != nil {
			// Even "seq taken" may be the SDK's retry finding the put it sent first. Only the
			// outcome's being unknown is wrapped: "seq taken" or "unavailable" would say more.
			return 0, fmt.Errorf("host: commit %d: %w (the put: %v; reading for it: %v)", c.Seq, interrupt.ErrOutcomeUnknown, err, rerr)
		}
		for _, n := range newer {
			if err := st.Apply(n); err != nil {
				return 0, err
			}
		}
		if seq, ok := st.CommitIDs[c.ID]; ok {
			return seq, nil
		}
		switch {
		case len(newer) > 0 || !unknown:
			return 0, runlog.ErrSeqTaken
		case errors.Is(err, runlog.ErrRefused) && !sentUnknown:
			return 0, err // refused, and no earlier attempt landed: nothing was written
		case attempt == unknownRetries || nearDeadline(ctx):
			return 0, fmt.Errorf("host: commit %d: %w (the put: %v)", c.Seq, interrupt.ErrOutcomeUnknown, err)
		}
		if !errors.Is(err, runlog.ErrRefused) {
			sentUnknown = true
		}
	}
}

// put appends c, cancelling the put once left has passed.
func (h *Host) put(ctx context.Context, k runlog.Key, c runlog.Commit, left time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	return h.runs.Append(ctx, k, c)
}

// endedBy files a retention entry for a run that its last commit ended, so that the sweep gives
// all its commits the retention expiry (an ended run takes no more commits). A failure is left
// alone: without the entry the commits keep no expiry, and nothing is deleted too early.
func (h *Host) endedBy(ctx context.Context, k runlog.Key, st *runlog.State) {
	if st.Ended != "" && st.EndedSeq == st.Seq {
		_ = h.deadlines.Schedule(ctx, runlog.Due{Tenant: k.Tenant, RunID: k.RunID, Seq: st.Seq, Deadline: st.LastAt})
	}
}

// fits refuses a commit that would take the run past the interrupts it may hold pending.
//
// A commit that adds to what its pending interrupts hold (a request, a vote that releases
// nothing) must also leave them within MaxPendingBytes; one that closes an interrupt only
// shrinks them, so a decision can always be recorded.
func (h *Host) fits(st *runlog.State, events []runlog.Event) error {
	requested, added, closes := 0, 0, false
	for _, e := range events {
		switch e.Type {
		case interrupt.EventRequested:
			requested++
			added += len(e.Payload)
		case interrupt.EventVoted:
			added += len(e.Payload)
		case interrupt.EventResolved, interrupt.EventExpired:
			closes = true
		}
	}
	if requested > 0 {
		if pending := len(st.Pending(h.now())); pending+requested > h.cfg.MaxPending {
			return interrupt.Errorf(interrupt.CodeConflict, "the run has %d interrupts pending, as many as one run may; resolve or cancel some first", pending)
		}
	}
	if added == 0 || closes {
		return nil
	}
	if held := st.PendingBytes(); held+added > MaxPendingBytes {
		return interrupt.Errorf(interrupt.CodePayloadTooLarge,
			"the run's pending interrupts hold %d bytes of payloads and votes, and this would add %d: a run holds at most %d pending at once (its checkpoint is one store item); resolve or cancel some first", held, added, MaxPendingBytes)
	}
	return nil
}

func newInterruptID() string { return "int_" + rand.Text() }
