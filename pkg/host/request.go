package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// Request is the body of request-interrupt, decoded.
type Request struct {
	NodeID  string
	Payload json.RawMessage
	// Token, when set, asks for a token for the interrupt in the answer.
	Token *TokenRequest
	// Endpoint names the webhook endpoint whose events an external-event interrupt waits for;
	// it may be omitted while the tenant holds at most one (docs/engines.md, "Webhooks from providers").
	Endpoint string
	// Display, when set, is how people are shown the interrupt (interrupt.Display).
	Display *interrupt.Display
	// FollowUp is how it is followed up while it waits: its reminders and escalation, each
	// the deployment's default (Config.FollowUp) when left out.
	FollowUp interrupt.FollowUp
	// ToolCall, when set, is the call an approval asks people to allow (interrupt.ToolCall).
	// Its Policy is the host's to record (Policy below): a caller's is refused.
	ToolCall *interrupt.ToolCall
	// Policy is the tenant's tool policy the payload's who-decides members were taken from
	// (package policy), recorded with the call (interrupt.ToolCall.Policy) so that every
	// surface says whose rule asks; only with a ToolCall.
	Policy *interrupt.PolicyRef
	// OwnRun asks only in a run the caller began (runlog.State.Author), or a new one: a person
	// signed in through the agents' client asks as themself, and another's run, its interrupts
	// and their answers are not theirs to add to or read (docs/design.md, "Who may do what").
	OwnRun bool
	// NamedDeciders refuses an approval whose deciders bind no one by the ref kinds the host
	// enforces: an agent that drops a field, or names a group where only principals bind, must
	// not hand the decision to the whole tenant (the MCP endpoint's requests; engines, the
	// platform's own code, may still leave it to anyone who may respond).
	NamedDeciders bool
	// EndsRun, on a request that makes its run, has the host complete that run once the
	// interrupt is closed and its receipt, if any, redeemed or expired (runlog.Event.EndsRun):
	// the MCP endpoint names a run itself for an agent that gave none, and no one else would
	// ever end it. A request in a run that exists records it only when the run is one the host
	// completes (runlog.State.EndsRun), whoever asks: what more is asked in it is then open too.
	EndsRun bool
}

// InterruptView is the answer of request-interrupt: the interrupt as it stands.
type InterruptView struct {
	RunID       string           `json:"runId"`
	NodeID      string           `json:"nodeId"`
	InterruptID string           `json:"interruptId"`
	Key         string           `json:"key"`
	Kind        interrupt.Kind   `json:"kind"`
	Status      interrupt.Status `json:"status"`
	ResumeValue json.RawMessage  `json:"resumeValue,omitempty"`
	Seq         int64            `json:"seq"`
	Tokens      []TokenView      `json:"tokens"`
	// SamePayload is set on a replay (the key named an interrupt already): whether the payload
	// sent is the one first requested, as JSON values (member order and spacing aside), and
	// its toolCall the call first asked (interrupt.SameCall: the arguments compared in their
	// canonical form, so members reordered are the same call; another name, other arguments,
	// a call added or left out is another request). The replay answers the first either way;
	// false says the engine sent another request under the key, which it should hear of.
	SamePayload *bool `json:"samePayload,omitempty"`
}

// TokenView is a token minted for an interrupt.
type TokenView struct {
	Token     string `json:"token"`
	Intent    string `json:"intent"`
	ExpiresAt string `json:"expiresAt"`
}

// requested is the answer of a request: the interrupt, and whether this request created it.
type requested struct {
	view    InterruptView
	created bool
}

func (r requested) atSeq(seq int64) requested { r.view.Seq = seq; return r }

// RequestInterrupt suspends the run at req.NodeID on req.Payload. created is false when the
// payload's key was already requested in this run: the answer is then that interrupt as it
// stands (with its persisted resumeValue once resolved) and nothing is appended. The key names
// that one interrupt: sent with another node or kind it is CodeKeyReused, since an engine that
// does not repeat itself must hear so, not be handed another step's answer.
//
// A host without its Signer refuses a request that asks for a token (Signer.RequestInterrupt
// mints it).
func (h *Host) RequestInterrupt(ctx context.Context, p interrupt.Principal, runID string, req Request) (view InterruptView, created bool, err error) {
	return h.request(ctx, p, runID, req, nil)
}

// RequestInterrupt is Host.RequestInterrupt, minting the token the request asks for.
func (t *Signer) RequestInterrupt(ctx context.Context, p interrupt.Principal, runID string, req Request) (view InterruptView, created bool, err error) {
	return t.h.request(ctx, p, runID, req, t)
}

// request is RequestInterrupt, minting with tokens.
func (h *Host) request(ctx context.Context, p interrupt.Principal, runID string, req Request, tokens *Signer) (view InterruptView, created bool, err error) {
	payload, err := h.checkPayload(req.Payload)
	if err != nil {
		return InterruptView{}, false, err
	}
	if req.Token != nil && tokens == nil {
		return InterruptView{}, false, errors.New("host: a request for a token needs the host's Signer (NewSigner)")
	}
	if req.Token != nil {
		if fields := req.Token.Check("/token"); len(fields) > 0 {
			return InterruptView{}, false, interrupt.Invalid("the token request is not acceptable", fields...)
		}
		if req.Token.Intent == token.IntentResolve && payload.Kind.DecidedByPerson() {
			return InterruptView{}, false, interrupt.Errorf(interrupt.CodeForbidden,
				"the caller that requests an interrupt a person decides (%s) cannot hold a token that decides it: its deciders sign in on the approval page, or mint their own", payload.Kind)
		}
	}
	if !runlog.ValidID(req.NodeID) {
		return InterruptView{}, false, interrupt.Invalid("nodeId is not a valid id",
			interrupt.FieldError{Path: "/nodeId", Message: "must match ^[A-Za-z0-9._:-]{1,128}$"})
	}
	if req.Display != nil {
		if fields := req.Display.Check("/display"); len(fields) > 0 {
			return InterruptView{}, false, interrupt.Invalid("display is not acceptable", fields...)
		}
		if len(req.Display.Audience) > 0 && (payload.Kind == interrupt.KindApproval || !payload.Kind.DecidedByPerson()) {
			return InterruptView{}, false, interrupt.Invalid("display.audience names whom to ask of a kind a person decides whose payload names no audience",
				interrupt.FieldError{Path: "/display/audience", Message: "must be omitted for a " + string(payload.Kind) + " interrupt (an approval names its audience in its payload)"})
		}
		if (req.Display.Title != "" || req.Display.Description != "") && payload.Kind == interrupt.KindApproval {
			return InterruptView{}, false, interrupt.Invalid("display.title and display.description are for a kind whose payload has neither",
				interrupt.FieldError{Path: "/display/title", Message: "must be omitted for an approval: its payload's data has its title and description"})
		}
	}
	deciders := interrupt.NewDeciders(payload, req.Display, p.Voter(), h.refKinds())
	if why := deciders.Undecidable(); why.Path != "" {
		return InterruptView{}, false, interrupt.Invalid("no one could ever decide this approval", why)
	}
	if req.NamedDeciders && payload.Kind == interrupt.KindApproval && len(deciders.Rules) == 0 {
		return InterruptView{}, false, interrupt.Invalid("name who decides: an approval nobody is named for could be granted by anyone of the tenant",
			interrupt.FieldError{Path: "/payload/data/approversList", Message: "name at least one principal, or groups or roles where the host binds them (refKinds " + strings.Join(h.refKinds(), ", ") + ")"})
	}
	if req.ToolCall != nil {
		fields := req.ToolCall.Check("/toolCall")
		if payload.Kind != interrupt.KindApproval {
			fields = append(fields, interrupt.FieldError{Path: "/toolCall", Message: "must be omitted for a " + string(payload.Kind) + " interrupt: only an approval allows a call"})
		}
		if req.ToolCall.Policy != nil {
			fields = append(fields, interrupt.FieldError{Path: "/toolCall/policy", Message: "is the host's to record: the policy an approval was asked under is never the caller's to say"})
		}
		if len(fields) > 0 {
			return InterruptView{}, false, interrupt.Invalid("toolCall is not acceptable", fields...)
		}
	}
	switch {
	case req.Policy != nil && req.ToolCall == nil:
		return InterruptView{}, false, errors.New("host: a request under a policy needs its tool call")
	case req.Policy != nil:
		tc := *req.ToolCall
		tc.Policy = req.Policy
		req.ToolCall = &tc
	}
	followUp, err := h.followUp(payload, req.FollowUp)
	if err != nil {
		return InterruptView{}, false, err
	}
	if req.Endpoint != "" && payload.Kind != interrupt.KindExternalEvent {
		return InterruptView{}, false, interrupt.Invalid("only an external-event interrupt waits on a webhook endpoint",
			interrupt.FieldError{Path: "/endpoint", Message: "must be omitted for a " + string(payload.Kind) + " interrupt"})
	}
	refs := []runlog.Ref{{Kind: runlog.RefKey, Name: payload.Key}}
	if payload.Kind.IsConversation() {
		refs = append(refs, runlog.Ref{Kind: runlog.RefConversation, Name: payload.Data.ConversationID})
	}
	k, st, err := h.loadRun(ctx, p, runID, refs...)
	if err != nil {
		return InterruptView{}, false, err
	}
	id := newInterruptID()
	source := sync.OnceValues(func() (string, error) { return h.sourceOf(ctx, p.Tenant, req.Endpoint) })
	res, err := commit(ctx, h, k, st, p.Voter(), func(st *runlog.State) (decision[requested], error) {
		now := h.now()
		if req.OwnRun && (st.Exists() && st.Author() != p.Voter() || !st.Exists() && !strings.HasPrefix(runID, AgentRunPrefix)) {
			return decision[requested]{}, errNotYourRun(runID)
		}
		if prior := st.ByKey(payload.Key); prior != nil {
			if prior.NodeID != req.NodeID || prior.Payload.Kind != payload.Kind {
				return decision[requested]{}, interrupt.Errorf(interrupt.CodeKeyReused,
					"key %q names interrupt %s, %s %s interrupt at node %s: a re-entry key names one interrupt, and answers only a request at its node for its kind",
					payload.Key, prior.ID, article(string(prior.Payload.Kind)), prior.Payload.Kind, prior.NodeID)
			}
			view := h.view(runID, prior, now)
			same := sameJSON(prior.Raw, req.Payload) && interrupt.SameCall(prior.ToolCall, req.ToolCall)
			view.SamePayload = &same
			return decision[requested]{answer: requested{view: view}}, nil
		}
		if st.Ended != "" {
			return decision[requested]{}, interrupt.Errorf(interrupt.CodeConflict, "run %s is %s", runID, st.Ended)
		}
		if err := conversationRule(st, payload); err != nil {
			return decision[requested]{}, err
		}
		if busy := st.LatestAt(req.NodeID); busy != nil && busy.StatusAt(now) == interrupt.StatusPending {
			return decision[requested]{}, interrupt.Errorf(interrupt.CodeConflict,
				"node %s already waits on interrupt %s (key %q)", req.NodeID, busy.ID, busy.Payload.Key)
		}
		var endpoint string
		if payload.Kind == interrupt.KindExternalEvent {
			bound, err := source()
			if err != nil {
				return decision[requested]{}, err
			}
			endpoint = bound
		}
		events, err := requestEvents(req.NodeID, id, runlog.With{
			Endpoint: endpoint, Display: req.Display, FollowUp: followUp, ToolCall: req.ToolCall, RefKinds: h.refKinds(), EndsRun: req.EndsRun && !st.Exists() || st.EndsRun(),
		}, payload, req.Payload)
		if err != nil {
			return decision[requested]{}, err
		}
		d := decision[requested]{events: events, answer: requested{created: true, view: InterruptView{
			RunID: runID, NodeID: req.NodeID, InterruptID: id, Key: payload.Key, Kind: payload.Kind,
			Status: interrupt.StatusPending, Tokens: []TokenView{},
		}}}
		if payload.TimeoutMs > 0 {
			d.prepare = append(d.prepare, func(ctx context.Context, _ *decision[requested], at time.Time) error {
				return h.deadlines.Schedule(ctx, runlog.Due{Tenant: p.Tenant, RunID: runID, InterruptID: id, Deadline: at.Add(time.Duration(payload.TimeoutMs) * time.Millisecond)})
			})
		}
		if followUp != nil {
			d.prepare = append(d.prepare, func(ctx context.Context, _ *decision[requested], at time.Time) error {
				return h.scheduleFollowUps(ctx, runlog.Key{Tenant: p.Tenant, RunID: runID}, id, int64(payload.TimeoutMs), *followUp, at)
			})
		}
		switch {
		case payload.Kind.IsConversation():
			d.prepare = append(d.prepare, func(ctx context.Context, _ *decision[requested], _ time.Time) error {
				return h.claimConversation(ctx, p.Tenant, payload.Data.ConversationID, runID)
			})
		case endpoint != "":
			d.prepare = append(d.prepare, func(ctx context.Context, d *decision[requested], _ time.Time) error {
				return h.await(ctx, p, runID, &runlog.Interrupt{Saved: runlog.Saved{ID: id, NodeID: req.NodeID, Endpoint: endpoint}, Payload: payload}, d)
			})
		}
		return d, nil
	})
	// An external event's waiter is confirmed after its commit, by the request that made it or,
	// if that one failed to, by any repeat of it: the log holds the interrupt either way, so a
	// failure here is no "nothing written", and the repeat repairs the join.
	if in := st.ByKey(payload.Key); err == nil && in != nil && in.Endpoint != "" && res.view.Status == interrupt.StatusPending {
		if res.view, err = h.confirm(ctx, p, res.view, in); err != nil {
			err = fmt.Errorf("host: interrupt %s is requested, its waiter not confirmed (%v); a repeat of the request confirms it: %w", in.ID, err, interrupt.ErrOutcomeUnknown)
		}
	}
	if err != nil || req.Token == nil || res.view.Status != interrupt.StatusPending {
		return res.view, res.created, err
	}
	tv, err := tokens.mint(ctx, p.Tenant, runID, st.ByKey(payload.Key), *req.Token)
	if err != nil {
		// The interrupt is in the log; a repeat of the request answers it and mints again.
		return InterruptView{}, false, fmt.Errorf("host: interrupt %s is requested, its token not minted (%v): %w", res.view.InterruptID, err, interrupt.ErrOutcomeUnknown)
	}
	res.view.Tokens = append(res.view.Tokens, tv)
	return res.view, res.created, nil
}

func (h *Host) view(runID string, in *runlog.Interrupt, now time.Time) InterruptView {
	return InterruptView{
		RunID: runID, NodeID: in.NodeID, InterruptID: in.ID, Key: in.Payload.Key, Kind: in.Payload.Kind,
		Status: in.StatusAt(now), ResumeValue: in.ResumeValue, Seq: in.RequestedSeq, Tokens: []TokenView{},
	}
}

// requestEvents are the commit of a new interrupt: interrupt.requested with the payload verbatim
// (readers see its legacy alias beside it), and for low-confidence the agent decision that
// caused the suspension.
func requestEvents(nodeID, id string, with runlog.With, p interrupt.Payload, raw json.RawMessage) ([]runlog.Event, error) {
	var events []runlog.Event
	if p.Kind == interrupt.KindLowConfidence {
		var err error
		events, err = lowConfidence(interrupt.AgentDecided{NodeID: nodeID, AgentID: p.Data.AgentID, Confidence: *p.Data.Observed, Threshold: *p.Data.Threshold}, id)
		if err != nil {
			return nil, err
		}
	}
	return append(events, runlog.Requested(nodeID, id, with, p, raw)), nil
}

// checkPayload validates an InterruptPayload before anything is read or written: the schema, the
// inline schemas it declares (they must compile now, not fail at resolve time), and the rules a
// schema cannot express.
func (h *Host) checkPayload(raw json.RawMessage) (interrupt.Payload, error) {
	var p interrupt.Payload
	if fields := h.schemas.Validate(schema.SuspendRequest, raw, "/payload"); len(fields) > 0 {
		return p, interrupt.Invalid("payload does not match the InterruptPayload schema", fields...)
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, interrupt.Invalid("payload is not a valid InterruptPayload", interrupt.FieldError{Path: "/payload", Message: "does not match the InterruptPayload schema"})
	}
	var fields []interrupt.FieldError
	type inline struct {
		path   string
		schema json.RawMessage
	}
	inlines := []inline{{"/payload/resumeSchema", p.ResumeSchema}, {"/payload/data/outcomeSchema", p.Data.OutcomeSchema}}
	for i, q := range p.Data.Questions {
		inlines = append(inlines, inline{fmt.Sprintf("/payload/data/questions/%d/schema", i), q.Schema})
	}
	for _, in := range inlines {
		if len(in.schema) == 0 {
			continue
		}
		if _, err := h.schemas.Compile(in.schema); err != nil {
			fields = append(fields, schemaField(in.path, err))
		}
	}
	switch {
	case p.Kind.IsConversation() && !h.HasCapability("conversation"):
		fields = append(fields, interrupt.FieldError{Path: "/payload/kind", Message: "this host does not advertise the conversation capability"})
	case p.Kind == interrupt.KindLowConfidence && *p.Data.Observed >= *p.Data.Threshold:
		fields = append(fields, interrupt.FieldError{Path: "/payload/data/observed", Message: "must be below threshold for a low-confidence interrupt"})
	case p.Kind == interrupt.KindClarification:
		seen := map[string]bool{}
		for i, q := range p.Data.Questions {
			if seen[q.ID] {
				fields = append(fields, interrupt.FieldError{Path: fmt.Sprintf("/payload/data/questions/%d/id", i), Message: "duplicates an earlier question id"})
			}
			seen[q.ID] = true
		}
	}
	if len(fields) > 0 {
		return p, interrupt.Invalid("payload is not acceptable", fields...)
	}
	return p, nil
}

// CheckApproval checks an approval payload as a request of it is checked, writing nothing: its
// schema and inline schemas, that someone could ever decide it, and that it names whom it binds
// (as an agent's request must, Request.NamedDeciders): what a tenant's tool policy is held to
// (package policy), with a request's problems.
func (h *Host) CheckApproval(raw json.RawMessage) error {
	payload, err := h.checkPayload(raw)
	if err != nil {
		return err
	}
	if payload.Kind != interrupt.KindApproval {
		return interrupt.Invalid("payload is not an approval", interrupt.FieldError{Path: "/payload/kind", Message: "must be approval"})
	}
	deciders := interrupt.NewDeciders(payload, nil, "", h.refKinds())
	if why := deciders.Undecidable(); why.Path != "" {
		return interrupt.Invalid("no one could ever decide this approval", why)
	}
	if len(deciders.Rules) == 0 {
		return interrupt.Invalid("name who decides: an approval nobody is named for could be granted by anyone of the tenant",
			interrupt.FieldError{Path: "/payload/data/approversList", Message: "name at least one principal, or groups or roles where the host binds them (refKinds " + strings.Join(h.refKinds(), ", ") + ")"})
	}
	return nil
}

// schemaField says why an inline schema at path is refused, pointing into the schema where it can.
func schemaField(path string, err error) interrupt.FieldError {
	if refused := (*schema.Error)(nil); errors.As(err, &refused) {
		return interrupt.FieldError{Path: path + refused.Pointer, Message: refused.Message}
	}
	return interrupt.FieldError{Path: path, Message: "is not a usable JSON Schema: " + err.Error()}
}

// conversationRule says whether the run may request a conversation.* interrupt now:
// conversation.start opens a conversation this run has not opened, and never one it closed;
// conversation.exchange and conversation.close need one it opened and has not closed.
func conversationRule(st *runlog.State, p interrupt.Payload) error {
	if !p.Kind.IsConversation() {
		return nil
	}
	id := p.Data.ConversationID
	switch state := st.Conversation(id); {
	case p.Kind == interrupt.KindConversationStart && state == runlog.ConversationClosed:
		return interrupt.Errorf(interrupt.CodeConflict, "conversation %s was closed; a closed conversation is never opened again", id)
	case p.Kind == interrupt.KindConversationStart && state == runlog.ConversationOpen:
		return interrupt.Errorf(interrupt.CodeConflict, "conversation %s is open already", id)
	case p.Kind != interrupt.KindConversationStart && state != runlog.ConversationOpen:
		return interrupt.Errorf(interrupt.CodeConflict, "%s needs conversation %s open in this run (conversation.start, and no conversation.close)", p.Kind, id)
	}
	return nil
}

// sameJSON reports whether a and b are the same JSON value: members in any order, numbers by
// their literal text.
func sameJSON(a, b json.RawMessage) bool {
	decode := func(raw json.RawMessage) (any, bool) {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		return v, d.Decode(&v) == nil
	}
	va, okA := decode(a)
	vb, okB := decode(b)
	return okA && okB && reflect.DeepEqual(va, vb)
}

// article is the indefinite article before word: "an approval", "a custom".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// AgentRunPrefix begins the ids of the runs the MCP endpoint makes, random past it: the only
// new runs a caller that acts only in its own runs (Request.OwnRun) may begin, so that it cannot
// take an id an engine will use (order-42) and become its run's author.
const AgentRunPrefix = "mcp-"

// errNotYourRun refuses a caller that may act only in runs it began (Request.OwnRun) any other
// run, existing or not, in the same words: it learns nothing of another's runs.
func errNotYourRun(runID string) error {
	return interrupt.Errorf(interrupt.CodeNotFound, "no run %s that you began: leave runId out to begin one", runID)
}
