package host

import (
	"context"
	"encoding/json"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// A Ballot is one decision a surface brings to an interrupt it names by id: the page's confirm,
// a chat click. What the surface needs of the interrupt to make its decision (who the proof
// names, the value its form or button makes) it learns from the one read Cast makes, so a
// decision reads the run's log once and answers the interrupt as the decision left it.
type Ballot struct {
	// Principal decides: its tenant always, its subject and Via as the proof names them.
	Principal          interrupt.Principal
	RunID, InterruptID string
	// Identify, for a proof of an account rather than of a principal (a chat click proves a
	// chat member), names the principal from the interrupt as read, which says whom it may be.
	// Its error is Cast's, and nothing is written.
	Identify func(ctx context.Context, o Opened) (string, error)
	// Value makes the resume value from the interrupt as read and the principal deciding
	// (a form's fields, a button's action). Its error is Cast's, and nothing is written.
	Value func(o Opened) (json.RawMessage, error)
	// Idem, when set, makes a repeat of the ballot answer the first one's resolution.
	Idem *Idempotency
}

// Cast is what became of a ballot: the resolution it recorded (zero when refused) and the
// interrupt as it now stands, for the surface to show.
type Cast struct {
	Resolution Resolution
	// Interrupt is the interrupt after the decision, or as read when it was refused (a refusal
	// says what it is now: decided by whom, expired). Not found when the run holds no such
	// interrupt.
	Interrupt Opened
}

// Cast reads the ballot's run once, makes the decision under the one rule and commits it: of
// two concurrent ballots of one principal, one counts and the other is already_voted; of an
// interrupt no longer pending, none. Another tenant's run, and an interrupt the run does not
// hold, answer 404 with nothing of the interrupt.
func (h *Host) Cast(ctx context.Context, b Ballot) (Cast, error) {
	return h.cast(ctx, b, ballotAim{
		find: func(st *runlog.State) (*runlog.Interrupt, error) {
			if in := st.ByID(b.InterruptID); in != nil {
				return in, nil
			}
			return nil, interrupt.Errorf(interrupt.CodeNotFound, "no interrupt %s in run %s", b.InterruptID, b.RunID)
		},
		show: func(o *Opened, p interrupt.Principal) { o.Principal, o.CanResolve = p.Subject, true },
	})
}

// CastByToken is Cast for the bearer of a verified token (Signer.Verify): the run and interrupt
// are the token's, the principal its subject proven by a signed link, and the answers the token
// surface's: 404 when the token's interrupt does not exist, 403 with the interrupt for an
// inspect token, then 410 and 409 as a resolve by token answers them. b's principal, run and
// interrupt are ignored.
func (h *Host) CastByToken(ctx context.Context, g Grant, b Ballot) (Cast, error) {
	c := g.claims
	b.Principal = interrupt.Principal{Subject: c.Sub, Tenant: c.Tenant, Token: c.JTI, Via: interrupt.ViaLink}
	b.RunID, b.InterruptID = c.RunID, c.InterruptID
	return h.cast(ctx, b, ballotAim{
		find: func(st *runlog.State) (*runlog.Interrupt, error) { return tokenInterrupt(st, c) },
		show: func(o *Opened, _ interrupt.Principal) {
			o.Principal, o.CanResolve, o.ExpiresAt = c.Sub, c.Intent == token.IntentResolve, time.UnixMilli(c.ExpiresAt).UTC()
		},
		gate: func() error {
			if c.Intent != token.IntentResolve {
				return interrupt.Errorf(interrupt.CodeForbidden, "an inspect token cannot resolve")
			}
			return nil
		},
	})
}

// ballotAim is how a cast finds its interrupt in the run (find: the interrupt, whatever its
// status, or why there is none), what its answer says of the caller (show), and what refuses
// the caller before anything is judged (gate, if any).
type ballotAim struct {
	find func(*runlog.State) (*runlog.Interrupt, error)
	show func(*Opened, interrupt.Principal)
	gate func() error
}

// cast is Cast's and CastByToken's one read and one decision.
func (h *Host) cast(ctx context.Context, b Ballot, aim ballotAim) (Cast, error) {
	p := b.Principal
	record, refs := scope(p, b.Idem, runlog.Ref{Kind: runlog.RefInterrupt, Name: b.InterruptID})
	k, st, err := h.loadRun(ctx, p, b.RunID, refs...)
	if err != nil {
		return Cast{}, err
	}
	in, err := aim.find(st)
	if err != nil {
		return Cast{}, err
	}
	var out Cast
	standing := func() {
		now, err := aim.find(st)
		if err != nil {
			return
		}
		out.Interrupt = opened(b.RunID, now, h.now())
		aim.show(&out.Interrupt, p)
		if p.Subject != "" {
			out.Interrupt.Voted = now.Voted(p.Voter())
		}
		if _, err := h.pending(now); err == nil {
			out.Interrupt.For, out.Interrupt.Refused = h.admitted(ctx, now, &p)
			if f := out.Interrupt.For; f != nil && out.Interrupt.Voted == nil {
				out.Interrupt.Voted = now.Voted(f.Delegator)
			}
		}
	}
	standing()
	if aim.gate != nil {
		if err := aim.gate(); err != nil {
			return out, err
		}
	}
	if record != nil {
		if d, seen, err := replay(st, record); seen {
			out.Resolution = d.answer
			return out, err
		}
	}
	if _, err := h.pending(in); err != nil {
		return out, err
	}
	if b.Identify != nil {
		if p.Subject, err = b.Identify(ctx, out.Interrupt); err != nil {
			return out, err
		}
		standing()
	}
	value, err := b.Value(out.Interrupt)
	if err != nil {
		return out, err
	}
	out.Resolution, err = h.resolveIn(ctx, p, runRead{key: k, state: st, record: record}, func(st *runlog.State) (*runlog.Interrupt, error) {
		in, err := aim.find(st)
		if err != nil {
			return nil, err
		}
		return h.pending(in)
	}, value)
	standing()
	return out, err
}
