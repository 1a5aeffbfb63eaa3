package host

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// Token lifetimes: the spec's default, and the longest a caller may ask for. Either is capped
// at the interrupt's deadline.
const (
	DefaultTokenTTL = 30 * time.Minute
	MaxTokenTTL     = 30 * 24 * time.Hour
)

// TokenRequest asks for a token to be minted for an interrupt.
type TokenRequest struct {
	Intent string `json:"intent"`
	// TTLMs is the lifetime asked for, from 1 ms to MaxTokenTTL; nil means DefaultTokenTTL.
	TTLMs *interrupt.Integer `json:"ttlMs,omitempty"`
	// Principal, when set, is who the token resolves as.
	Principal string `json:"principal,omitempty"`
}

// Check validates a token request, reporting paths under at.
func (r TokenRequest) Check(at string) []interrupt.FieldError {
	var fields []interrupt.FieldError
	if r.Intent != token.IntentResolve && r.Intent != token.IntentInspect {
		fields = append(fields, interrupt.FieldError{Path: at + "/intent", Message: "must be resolve or inspect"})
	}
	if r.TTLMs != nil && (*r.TTLMs < 1 || int64(*r.TTLMs) > MaxTokenTTL.Milliseconds()) {
		fields = append(fields, interrupt.FieldError{Path: at + "/ttlMs", Message: "must be from 1 to 2592000000 (30 days)"})
	}
	if len(r.Principal) > 256 {
		fields = append(fields, interrupt.FieldError{Path: at + "/principal", Message: "must be at most 256 characters"})
	}
	return fields
}

// Tokens are the token surface's operations over a host: minting tokens, and reading what one
// grants. They need the keyring, which NewSigner requires: a function that serves tokens without
// one does not compile.
type Signer struct {
	h    *Host
	keys token.Keys
}

// NewSigner returns h's token operations, signing and verifying with keys. It panics on nil keys,
// at a function's init: a host that serves tokens must hold a keyring.
func NewSigner(h *Host, keys token.Keys) *Signer {
	if keys == nil {
		panic("host: NewSigner without a keyring")
	}
	return &Signer{h: h, keys: keys}
}

// PendingInterrupts is the host's (Host.PendingInterrupts), so that the tokens' operations
// serve every tool of the MCP endpoint, whose outcomes carry receipts.
func (t *Signer) PendingInterrupts(ctx context.Context, p interrupt.Principal, after string, limit int) (PendingPage, error) {
	return t.h.PendingInterrupts(ctx, p, after, limit)
}

// ApproveByPolicy is the host's, for the MCP endpoint's request_approval of a routine call
// (Host.ApproveByPolicy).
func (t *Signer) ApproveByPolicy(ctx context.Context, p interrupt.Principal, runID, interruptID string, ref interrupt.PolicyRef, m interrupt.StandingMatch) (Resolution, error) {
	return t.h.ApproveByPolicy(ctx, p, runID, interruptID, ref, m)
}

// EndRun and EndOwnRun are the host's, for the MCP endpoint's end_run, as PendingInterrupts.
func (t *Signer) EndRun(ctx context.Context, p interrupt.Principal, runID string, end interrupt.RunStatus, reason string) (RunEnd, error) {
	return t.h.EndRun(ctx, p, runID, end, reason)
}

// EndOwnRun is Host.EndOwnRun (EndRun).
func (t *Signer) EndOwnRun(ctx context.Context, p interrupt.Principal, runID string, end interrupt.RunStatus, reason string) (RunEnd, error) {
	return t.h.EndOwnRun(ctx, p, runID, end, reason)
}

// Host is the host the tokens are of.
func (t *Signer) Host() *Host { return t.h }

// mint signs a token for in. Its expiry is the requested lifetime, never past the deadline.
func (t *Signer) mint(ctx context.Context, tenant, runID string, in *runlog.Interrupt, req TokenRequest) (TokenView, error) {
	now := t.h.now()
	ttl := DefaultTokenTTL
	if req.TTLMs != nil {
		ttl = time.Duration(*req.TTLMs) * time.Millisecond
	}
	exp := now.Add(ttl)
	if !in.Deadline.IsZero() && exp.After(in.Deadline) {
		exp = in.Deadline
	}
	s, c, err := token.Mint(ctx, t.keys, token.Claims{
		Tenant: tenant, RunID: runID, NodeID: in.NodeID, InterruptID: in.ID,
		Intent: req.Intent, Sub: req.Principal, ExpiresAt: exp.UnixMilli(),
	}, now)
	if err != nil {
		return TokenView{}, err
	}
	return TokenView{Token: s, Intent: c.Intent, ExpiresAt: time.UnixMilli(c.ExpiresAt).UTC().Format(runlog.TimeFormat)}, nil
}

// MintToken mints a token for the interrupt pending at nodeID.
func (t *Signer) MintToken(ctx context.Context, p interrupt.Principal, runID, nodeID string, req TokenRequest) (TokenView, error) {
	h := t.h
	if fields := req.Check(""); len(fields) > 0 {
		return TokenView{}, interrupt.Invalid("the token request is not acceptable", fields...)
	}
	_, st, err := h.loadRun(ctx, p, runID, runlog.Ref{Kind: runlog.RefNode, Name: nodeID})
	if err != nil {
		return TokenView{}, err
	}
	if !st.Exists() {
		return TokenView{}, interrupt.Errorf(interrupt.CodeNotFound, "no run %s", runID)
	}
	in := st.LatestAt(nodeID)
	if in == nil {
		return TokenView{}, interrupt.Errorf(interrupt.CodeNotFound, "no interrupt at node %s of run %s", nodeID, runID)
	}
	if status := in.StatusAt(h.now()); status != interrupt.StatusPending {
		return TokenView{}, interrupt.Errorf(interrupt.CodeAlreadyResolved, "interrupt %s is %s", in.ID, status)
	}
	if err := h.mayMint(in, p, &req); err != nil {
		return TokenView{}, err
	}
	return t.mint(ctx, p.Tenant, runID, in, req)
}

// mayMint decides whether p may have req minted for in (docs/design.md, "Who may decide"). An
// inspect token only reads, and a resolve token for an interrupt a machine answers is the
// engine's callback: both are anyone's on the route. A resolve token for an interrupt a person
// decides is that person's credential: it is minted for the caller itself (an approver's own
// link; a principal left out means the caller), or by tooling trusted with tokens:delegate, and
// never by or for whoever requested the interrupt, nor for the agent a low-confidence interrupt
// escalates. What the token could not do at resolve time (vote without being eligible, count
// anonymously towards a quorum) is refused now, where the minter can still do something else.
func (h *Host) mayMint(in *runlog.Interrupt, p interrupt.Principal, req *TokenRequest) error {
	if req.Intent != token.IntentResolve || !in.Payload.Kind.DecidedByPerson() {
		return nil
	}
	delegate := p.Holds(interrupt.ScopeTokensDelegate)
	if req.Principal == "" && !delegate {
		req.Principal = p.Subject
	}
	if _, err := in.Deciders.Admit(p); interrupt.ErrorCode(err) == interrupt.CodeForbidden {
		return err // the requester, or the agent escalated, mints nothing that decides it
	}
	who := interrupt.Principal{Subject: req.Principal, Tenant: p.Tenant, Token: "minting"}
	if !delegate && !(p.Holds(interrupt.ScopeApprovalsRespond) && req.Principal == p.Subject) {
		return interrupt.Errorf(interrupt.CodeForbidden,
			"a token that decides interrupt %s (%s) is minted for the caller itself (scope %s) or by tooling holding %s", in.ID, in.Payload.Kind, interrupt.ScopeApprovalsRespond, interrupt.ScopeTokensDelegate)
	}
	if _, err := in.Deciders.Admit(who); err != nil {
		if !in.Deciders.Memberships() || interrupt.ErrorCode(err) != interrupt.CodeNotEligible {
			return err
		}
		return interrupt.Errorf(interrupt.CodeNotEligible,
			"a token carries no group or role memberships, and every eligibility field of approval %s must admit its voter: its approvers sign in on the approval page", in.ID)
	}
	return nil
}

// verify checks a token in docs/design.md's order: grammar, alg, kid and MAC (401), then expiry (410).
// The state (404, 409) is the caller's to check against the log.
func (t *Signer) verify(ctx context.Context, raw string) (token.Claims, error) {
	c, err := token.Verify(ctx, t.keys, raw)
	if errors.Is(err, interrupt.ErrUnavailable) {
		return c, err // the keys could not be read: no verdict on the token
	}
	if err != nil {
		return c, interrupt.Errorf(interrupt.CodeTokenInvalid, "the token is not valid")
	}
	if c.Expired(t.h.now()) {
		return c, interrupt.Errorf(interrupt.CodeExpired, "the token expired at %s", time.UnixMilli(c.ExpiresAt).UTC().Format(runlog.TimeFormat))
	}
	return c, nil
}

// tokenTarget finds the interrupt a verified token names, answering as the token surface does:
// 404 when it does not exist, 410 past its deadline, 409 once resolved or its run has ended.
func (h *Host) tokenTarget(st *runlog.State, c token.Claims) (*runlog.Interrupt, error) {
	in, err := tokenInterrupt(st, c)
	if err != nil {
		return nil, err
	}
	return h.pending(in)
}

// tokenInterrupt is the interrupt a token names, at the node it names, whatever its status.
func tokenInterrupt(st *runlog.State, c token.Claims) (*runlog.Interrupt, error) {
	in := st.ByID(c.InterruptID)
	if in == nil || in.NodeID != c.NodeID {
		return nil, interrupt.Errorf(interrupt.CodeNotFound, "the token's interrupt does not exist")
	}
	return in, nil
}

// pending is in if it can be decided now: 410 past its deadline, 409 once resolved or its run
// has ended.
func (h *Host) pending(in *runlog.Interrupt) (*runlog.Interrupt, error) {
	switch status := in.StatusAt(h.now()); status {
	case interrupt.StatusPending:
		return in, nil
	case interrupt.StatusExpired:
		return nil, interrupt.Errorf(interrupt.CodeExpired, "interrupt %s passed its deadline", in.ID)
	default:
		return nil, interrupt.Errorf(interrupt.CodeAlreadyResolved, "interrupt %s is %s", in.ID, status)
	}
}

// TokenCaller is what a verified token says about its bearer: the interrupt it names, for logs
// and for what a page keys on it.
type TokenCaller struct {
	RunID, NodeID, InterruptID string
}

// Inspect answers the InterruptPayload a token names, verbatim. It never writes.
func (t *Signer) Inspect(ctx context.Context, raw string) ([]byte, TokenCaller, error) {
	h := t.h
	c, err := t.verify(ctx, raw)
	if err != nil {
		return nil, TokenCaller{}, err
	}
	who := callerOf(c)
	st, err := h.load(ctx, runlog.Key{Tenant: c.Tenant, RunID: c.RunID}, runlog.Ref{Kind: runlog.RefInterrupt, Name: c.InterruptID})
	if err != nil {
		return nil, who, err
	}
	in, err := h.tokenTarget(st, c)
	if err != nil {
		return nil, who, err
	}
	return in.Raw, who, nil
}

// Grant is a resolve-intent token, verified: what it lets its bearer do, and as whom.
type Grant struct {
	claims token.Claims
	// Caller names the run and node the token is for, for logs.
	Caller TokenCaller
}

func callerOf(c token.Claims) TokenCaller {
	return TokenCaller{RunID: c.RunID, NodeID: c.NodeID, InterruptID: c.InterruptID}
}

// Verify verifies a token, 401 and 410 as Authorize answers them, whatever its intent: for a
// page that answers an inspect token's decision with the interrupt it names (CastByToken).
func (t *Signer) Verify(ctx context.Context, raw string) (Grant, error) {
	c, err := t.verify(ctx, raw)
	if err != nil {
		return Grant{}, err
	}
	return Grant{claims: c, Caller: callerOf(c)}, nil
}

// Authorize verifies a token for resolving, in docs/design.md's order (401, 410, then 403 for an
// inspect-only token), before anything of the request's body is read: a bad token is refused
// as such whatever the body.
func (t *Signer) Authorize(ctx context.Context, raw string) (Grant, error) {
	c, err := t.verify(ctx, raw)
	if err != nil {
		return Grant{}, err
	}
	g := Grant{claims: c, Caller: callerOf(c)}
	if c.Intent != token.IntentResolve {
		return g, interrupt.Errorf(interrupt.CodeForbidden, "an inspect token cannot resolve")
	}
	return g, nil
}

// ResolveByToken resolves the interrupt a grant names, as the token's principal.
func (h *Host) ResolveByToken(ctx context.Context, g Grant, value []byte, idem *Idempotency) (Resolution, error) {
	c := g.claims
	p := interrupt.Principal{Subject: c.Sub, Tenant: c.Tenant, Token: c.JTI, Via: interrupt.ViaLink}
	return h.resolve(ctx, p, resolveAim{
		runID: c.RunID, ref: runlog.Ref{Kind: runlog.RefInterrupt, Name: c.InterruptID},
		find: func(st *runlog.State) (*runlog.Interrupt, error) { return h.tokenTarget(st, c) },
	}, idem, value)
}

// Opened is what a token shows its bearer of the interrupt it names: what the approval page
// renders. Reading it never writes.
type Opened struct {
	RunID, NodeID, InterruptID string
	// Raw is the InterruptPayload as requested; Payload the host's view of it.
	Raw     json.RawMessage
	Payload interrupt.Payload
	// Status is the interrupt's now: only a pending one can be decided.
	Status interrupt.Status
	// Principal is who the token resolves as; "" for a token minted without one.
	Principal string
	// CanResolve is false for an inspect token.
	CanResolve bool
	// Deadline is zero when the interrupt has none; ExpiresAt is the token's expiry.
	Deadline, ExpiresAt time.Time
	// Tally is an approval's count so far; Voted is the principal's counted vote, if any.
	Tally interrupt.Tally
	Voted *interrupt.Vote
	// RequestedBy is who asked (the requesting principal), and RequestedAt when.
	RequestedBy string
	RequestedAt time.Time
	// Outcome is the resume value once the interrupt is resolved: what was decided, by whom,
	// when, with what comment. Votes are an approval's counted votes, in order.
	Outcome json.RawMessage
	// DecidedBy is who decided it, the host's own record (runlog.Interrupt.Decider); the
	// outcome's decidedBy is the decider's label beside it.
	DecidedBy string
	// Deciders is who may decide it and whom it is told to.
	Deciders interrupt.Deciders
	Votes    []interrupt.Vote
	// Asked are the approvers' questions on an approval, in order, shown to every approver.
	Asked []interrupt.Ask
	// Display is how the request asked people to be shown it; nil for nothing given.
	Display *interrupt.Display
	// ToolCall is the call an approval asks people to allow; nil for none.
	ToolCall *interrupt.ToolCall
	// For is the delegation by which the principal decides it, when it decides in another's
	// place (their vote fills that place); nil when it decides as itself.
	For *interrupt.Delegated
	// Refused is why the signed-in principal could not decide the interrupt now (not an
	// eligible approver, its own request); nil when it could. OpenAs sets it.
	Refused error
}

// opened is what a page shows of interrupt in of run runID at now, whoever opens it.
func opened(runID string, in *runlog.Interrupt, now time.Time) Opened {
	return Opened{
		RunID: runID, NodeID: in.NodeID, InterruptID: in.ID, Raw: in.Raw, Payload: in.Payload, Deciders: in.Deciders,
		Status: in.StatusAt(now), Deadline: in.Deadline, Tally: in.Tally(), Outcome: in.ResumeValue, DecidedBy: in.Decider(),
		Votes: in.CountedVotes(), Asked: slices.Clone(in.Asked), Display: in.Display, RequestedBy: in.RequestedBy, RequestedAt: in.RequestedAt,
		ToolCall: in.ToolCall,
	}
}

// Found reports whether the token named an interrupt that exists (Open may answer it with an
// error that says it is no longer pending).
func (o Opened) Found() bool { return o.InterruptID != "" }

// Open verifies a token and reads the interrupt it names, answering as the token surface does:
// 401 and 410 for the token, 404 when the interrupt does not exist, then 410 past its deadline
// and 409 once resolved or its run ended, with the interrupt filled in. The grant is the
// verified token's, for ResolveByToken when Opened.CanResolve: one verification serves both.
func (t *Signer) Open(ctx context.Context, raw string) (Opened, Grant, error) {
	h := t.h
	c, err := t.verify(ctx, raw)
	if err != nil {
		return Opened{}, Grant{}, err
	}
	g := Grant{claims: c, Caller: callerOf(c)}
	st, err := h.load(ctx, runlog.Key{Tenant: c.Tenant, RunID: c.RunID}, runlog.Ref{Kind: runlog.RefInterrupt, Name: c.InterruptID})
	if err != nil {
		return Opened{}, g, err
	}
	in, err := tokenInterrupt(st, c)
	if err != nil {
		return Opened{}, g, err
	}
	o := opened(c.RunID, in, h.now())
	o.Principal, o.CanResolve, o.ExpiresAt = c.Sub, c.Intent == token.IntentResolve, time.UnixMilli(c.ExpiresAt).UTC()
	if c.Sub != "" {
		o.Voted = in.Voted(c.Sub)
	}
	_, err = h.pending(in)
	return o, g, err
}

// OpenAs reads the interrupt interruptID of the caller's run for the page of a signed-in
// approver: what it shows, and whether p could decide it now. Reading it never writes. Another
// tenant's run, and an interrupt the run does not hold, answer 404.
func (h *Host) OpenAs(ctx context.Context, p interrupt.Principal, runID, interruptID string) (Opened, error) {
	_, st, err := h.loadRun(ctx, p, runID, runlog.Ref{Kind: runlog.RefInterrupt, Name: interruptID})
	if err != nil {
		return Opened{}, err
	}
	in := st.ByID(interruptID)
	if in == nil {
		return Opened{}, interrupt.Errorf(interrupt.CodeNotFound, "no interrupt %s in run %s", interruptID, runID)
	}
	o := opened(runID, in, h.now())
	o.Principal, o.CanResolve, o.Voted = p.Subject, true, in.Voted(p.Voter())
	if _, err := h.pending(in); err != nil {
		return o, err
	}
	o.For, o.Refused = h.admitted(ctx, in, &p)
	if o.For != nil && o.Voted == nil {
		o.Voted = in.Voted(o.For.Delegator)
	}
	return o, nil
}

// ResolveInterrupt resolves the interrupt interruptID of the caller's run as p: the approval
// page's decision of a signed-in approver, under the rules of the run surface.
func (h *Host) ResolveInterrupt(ctx context.Context, p interrupt.Principal, runID, interruptID string, value []byte, idem *Idempotency) (Resolution, error) {
	return h.resolve(ctx, p, resolveAim{runID: runID, ref: runlog.Ref{Kind: runlog.RefInterrupt, Name: interruptID}, find: func(st *runlog.State) (*runlog.Interrupt, error) {
		in := st.ByID(interruptID)
		if in == nil {
			return nil, interrupt.Errorf(interrupt.CodeNotFound, "no interrupt %s in run %s", interruptID, runID)
		}
		return h.pending(in)
	}}, idem, value)
}

// OpenedOf is what a page shows of interrupt in of run runID at now, whoever opens it: for a
// channel that redraws its message of the interrupt from the run's state (Teams' card,
// updated in place as votes come in), as a page would show it.
func OpenedOf(runID string, in *runlog.Interrupt, now time.Time) Opened {
	return opened(runID, in, now)
}
