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
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// Log is the storage the host needs: a consistent read of the commits after a seq; an append
// that fails with runlog.ErrSeqTaken when the seq is already committed and with a
// *runlog.TooLargeError when the commit does not fit, writing nothing either way; and the
// ownership of conversation ids (the spec makes a conversationId tenant-unique, so one run of a
// tenant owns each), answering runlog.ErrClaimed with the owner when another run holds one; the
// webhook Inbox; and the due index of Deadlines.
type Log interface {
	Read(ctx context.Context, k runlog.Key, after int64, limit int) ([]runlog.Commit, error)
	Append(ctx context.Context, k runlog.Key, c runlog.Commit) error
	ClaimConversation(ctx context.Context, tenant, id, runID, takeOverFrom string, at time.Time) (runlog.Claim, error)
	Inbox
	Deadlines
}

// Config is the host's behaviour that operators choose.
type Config struct {
	// Capabilities the host advertises; conversation.* kinds need "conversation".
	Capabilities []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxAttempts bounds how often one write re-reads after losing a race before answering 503;
	// 0 means 50.
	MaxAttempts int
	// Keys sign and verify tokens; functions that handle none leave it nil.
	Keys token.Keys
	// RefKinds are the approver ref kinds the host advertises and enforces (principal, group,
	// role); approverGroupRefs and approverRoleRefs bind only when their kind is here.
	RefKinds []string
	// OverridePrincipals may release an approval alone when it sets overrideBypassesQuorum.
	OverridePrincipals []string
	// MaxRunCommits and MaxRunBytes bound what one run's log can hold (every operation reads
	// it whole); 0 means DefaultMaxRunCommits and DefaultMaxRunBytes.
	MaxRunCommits int64
	MaxRunBytes   int
	// Secrets keep webhook endpoints' signing secrets; functions that handle none leave it nil.
	Secrets EndpointSecrets
	// InboxRetention is how long an accepted provider event is kept for interrupts requested
	// after it; 0 means DefaultInboxRetention.
	InboxRetention time.Duration
	// Retention is how long a run's log is kept after the run ended; 0 means DefaultRetention.
	Retention time.Duration
	// EscalationThreshold is the agent confidence below which a decision suspends its node,
	// for runs that configure none; 0 means DefaultEscalationThreshold.
	EscalationThreshold float64
}

// DefaultRetention is the template's RetentionDays default.
const DefaultRetention = 30 * 24 * time.Hour

// DefaultInboxRetention is the template's InboxRetentionDays default.
const DefaultInboxRetention = 7 * 24 * time.Hour

// How much one run may accumulate by default, and how often one principal may ask on one
// approval: without bounds one resolver could grow a log until reading it times out.
const (
	DefaultMaxRunCommits = 1000
	DefaultMaxRunBytes   = 4 << 20
	MaxAsksPerPrincipal  = 10
)

// Host runs the operations. It holds no per-request state and is safe for concurrent use.
type Host struct {
	log       Log
	schemas   *schema.Set
	cfg       Config
	endpoints *endpointCache
}

// New returns a Host over log.
func New(log Log, schemas *schema.Set, cfg Config) *Host {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 50
	}
	if cfg.MaxRunCommits == 0 {
		cfg.MaxRunCommits = DefaultMaxRunCommits
	}
	if cfg.MaxRunBytes == 0 {
		cfg.MaxRunBytes = DefaultMaxRunBytes
	}
	if cfg.InboxRetention == 0 {
		cfg.InboxRetention = DefaultInboxRetention
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.EscalationThreshold == 0 {
		cfg.EscalationThreshold = DefaultEscalationThreshold
	}
	return &Host{log: log, schemas: schemas, cfg: cfg, endpoints: &endpointCache{m: map[string]cachedEndpoint{}}}
}

// Discovery is what the host advertises at /.well-known/interrupt-host: read from the same
// configuration the operations enforce.
type Discovery struct {
	Capabilities []string `json:"capabilities"`
	Interrupt    Facet    `json:"interrupt"`
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
		Capabilities: append([]string{}, cfg.Capabilities...),
		Interrupt:    Facet{TokenAlgs: append([]string{}, token.Algs...), RefKinds: append([]string{}, cfg.RefKinds...)},
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
func (h *Host) Now() time.Time { return h.cfg.Now() }

// key names the caller's run, refusing a run id that could name none (as no such run).
func key(p interrupt.Principal, runID string) (runlog.Key, error) {
	k := runlog.Key{Tenant: p.Tenant, RunID: runID}
	if !k.Valid() {
		return k, interrupt.Errorf(interrupt.CodeNotFound, "no run %q", runID)
	}
	return k, nil
}

// loadRun folds the log of the caller's run runID, refusing a run id that could name none.
func (h *Host) loadRun(ctx context.Context, p interrupt.Principal, runID string) (runlog.Key, *runlog.State, error) {
	k, err := key(p, runID)
	if err != nil {
		return k, nil, err
	}
	st, err := h.load(ctx, k)
	return k, st, err
}

// load folds the whole log of a run. A log that does not start at commit 1 is a run past its
// retention whose commits DynamoDB is deleting one by one: no run, as when they are all gone.
func (h *Host) load(ctx context.Context, k runlog.Key) (*runlog.State, error) {
	commits, err := h.log.Read(ctx, k, 0, 0)
	if err != nil {
		return nil, err
	}
	if len(commits) > 0 && commits[0].Seq != 1 {
		return runlog.Fold(nil)
	}
	return runlog.Fold(commits)
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
		if !d.ends {
			if err := h.fits(st, runlog.Commit{Seq: st.Seq + 1, Events: d.events}); err != nil {
				return zero, err
			}
		}
		at := h.cfg.Now().UTC()
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
			h.endedBy(ctx, k, st)
			return d.answer.atSeq(seq), nil
		case !errors.Is(err, runlog.ErrSeqTaken):
			return zero, err
		}
	}
	return zero, fmt.Errorf("host: %d attempts lost the race for the next commit: %w", h.cfg.MaxAttempts, interrupt.ErrUnavailable)
}

// nearDeadline reports whether ctx ends too soon for another put and read: an answer of
// outcome_unknown is better than the invocation's timeout.
func nearDeadline(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return ok && time.Until(deadline) < 3*time.Second
}

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
func (h *Host) settle(ctx context.Context, k runlog.Key, st *runlog.State, c runlog.Commit) (int64, error) {
	sentUnknown := false // a put of c was sent whose outcome no read has settled
	for attempt := 0; ; attempt++ {
		err := h.log.Append(ctx, k, c)
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
		newer, rerr := h.log.Read(ctx, k, st.Seq, 0)
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

// endedBy files a retention entry for a run that its last commit ended, so that the sweep gives
// all its commits the retention expiry (an ended run takes no more commits). A failure is left
// alone: without the entry the commits keep no expiry, and nothing is deleted too early.
func (h *Host) endedBy(ctx context.Context, k runlog.Key, st *runlog.State) {
	if st.Ended != "" && st.EndedSeq == st.Seq {
		_ = h.log.Schedule(ctx, runlog.Due{Tenant: k.Tenant, RunID: k.RunID, Seq: st.Seq, Deadline: st.LastAt})
	}
}

// fits refuses a commit that would take the run past the bounds of its log.
func (h *Host) fits(st *runlog.State, c runlog.Commit) error {
	if c.Seq > h.cfg.MaxRunCommits {
		return interrupt.Errorf(interrupt.CodeConflict, "the run holds %d commits, as many as one run may; end it and start another", st.Seq)
	}
	if size := st.Bytes + c.Size(); size > h.cfg.MaxRunBytes {
		return interrupt.Errorf(interrupt.CodePayloadTooLarge, "the run's log would grow to %d bytes; one run holds at most %d", size, h.cfg.MaxRunBytes)
	}
	return nil
}

func newInterruptID() string { return "int_" + rand.Text() }
