package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// Resolution is the answer of a resolve: status resolved when this call exited the suspend,
// pending when it was recorded without exiting (an ask, a vote short of the quorum).
type Resolution struct {
	RunID       string           `json:"runId"`
	NodeID      string           `json:"nodeId"`
	InterruptID string           `json:"interruptId"`
	Status      interrupt.Status `json:"status"`
	Seq         int64            `json:"seq"`
	// Tally is an approval's count after this call.
	Tally *interrupt.Tally `json:"tally,omitempty"`
	// ResumeValue comes last, so that the answer is its idempotency record (which leaves the
	// value to the commit) with the value appended: a replay is the answer's bytes.
	ResumeValue json.RawMessage `json:"resumeValue,omitempty"`
	// Replay, on an answer recorded for an earlier request with the same Idempotency-Key, is
	// that answer's JSON exactly as first given.
	Replay json.RawMessage `json:"-"`
}

// Exited reports whether the resolve released the run.
func (r Resolution) Exited() bool { return r.Status == interrupt.StatusResolved }

func (r Resolution) atSeq(seq int64) Resolution { r.Seq = seq; return r }

// Resolve resumes the interrupt pending at nodeID with resumeValue. Of two concurrent resolves
// exactly one commits; the other re-reads, finds the interrupt resolved and fails with
// interrupt_already_resolved.
func (h *Host) Resolve(ctx context.Context, p interrupt.Principal, runID, nodeID string, resumeValue json.RawMessage, idem *Idempotency) (Resolution, error) {
	return h.resolve(ctx, p, resolveAim{runID: runID, ref: runlog.Ref{Kind: runlog.RefNode, Name: nodeID}, find: func(st *runlog.State) (*runlog.Interrupt, error) {
		in := st.LatestAt(nodeID)
		if in == nil {
			return nil, interrupt.Errorf(interrupt.CodeNotFound, "no interrupt at node %s of run %s", nodeID, runID)
		}
		if status := in.StatusAt(h.now()); status != interrupt.StatusPending {
			return nil, interrupt.Errorf(interrupt.CodeAlreadyResolved, "interrupt %s is %s", in.ID, status)
		}
		return in, nil
	}}, idem, resumeValue)
}

// checked is a resume value judged against one interrupt: who may give it and what it is.
type checked struct {
	interruptID string
	eligibility interrupt.Eligibility
	value       json.RawMessage
	action      interrupt.Action
	err         error
}

// resolveAim is the interrupt a resolve is for: its run, what the read of the run looks it up by
// (ref), and find, which finds the pending interrupt in the run's state (or says why there is
// none) and runs again whenever the state moves on.
type resolveAim struct {
	runID string
	ref   runlog.Ref
	find  func(*runlog.State) (*runlog.Interrupt, error)
}

// resolve is the write both resolve surfaces share. The value is judged once per interrupt: a
// lost race that finds the same interrupt does not validate again.
func (h *Host) resolve(ctx context.Context, p interrupt.Principal, aim resolveAim, idem *Idempotency, resumeValue json.RawMessage) (Resolution, error) {
	record, refs := scope(p, idem, aim.ref)
	k, st, err := h.loadRun(ctx, p, aim.runID, refs...)
	if err != nil {
		return Resolution{}, err
	}
	if !st.Exists() {
		return Resolution{}, interrupt.Errorf(interrupt.CodeNotFound, "no run %s", aim.runID)
	}
	return h.resolveIn(ctx, p, runRead{key: k, state: st, record: record}, aim.find, resumeValue)
}

// scope is the idempotency record a resolve keeps under p's credential, if any, and the refs
// its read of the run names: the interrupt's and the record's.
func scope(p interrupt.Principal, idem *Idempotency, ref runlog.Ref) (*runlog.Idem, []runlog.Ref) {
	if idem == nil {
		return nil, []runlog.Ref{ref}
	}
	record := idem.scoped(p.Credential())
	return record, []runlog.Ref{ref, {Kind: runlog.RefIdem, Name: record.Key}}
}

// runRead is a run as a resolve read it: its key, its state (which the resolve moves on to the
// state after its commit, or after the commits that beat it) and the idempotency record the
// resolve keeps under the caller's credential, if any (scope), which the read looked up too.
type runRead struct {
	key    runlog.Key
	state  *runlog.State
	record *runlog.Idem
}

// resolveIn is resolve on a run already read; target finds the pending interrupt in the run's
// state as resolveAim.find does.
func (h *Host) resolveIn(ctx context.Context, p interrupt.Principal, run runRead, target func(*runlog.State) (*runlog.Interrupt, error), resumeValue json.RawMessage) (Resolution, error) {
	runID, record := run.key.RunID, run.record
	var judged checked
	return commit(ctx, h, run.key, run.state, p.Voter(), func(st *runlog.State) (decision[Resolution], error) {
		if record != nil {
			if d, seen, err := replay(st, record); seen {
				return d, err
			}
		}
		in, err := target(st)
		if err != nil {
			return decision[Resolution]{}, err
		}
		if judged.interruptID != in.ID {
			judged = h.judge(ctx, in, &p, resumeValue)
		}
		if judged.err != nil {
			return decision[Resolution]{}, judged.err
		}
		var d decision[Resolution]
		if in.Payload.Kind == interrupt.KindApproval {
			d, err = vote(in, p, judged.eligibility, judged.action, judged.value, h.cfg.OverridePrincipals)
		} else {
			var resolved runlog.Event
			resolved, err = resolveEvent(in, judged.value)
			d = decision[Resolution]{
				events: []runlog.Event{resolved},
				answer: Resolution{NodeID: in.NodeID, InterruptID: in.ID, ResumeValue: judged.value, Status: interrupt.StatusResolved},
			}
		}
		d.answer.RunID, d.idem = runID, record
		return d, err
	})
}

// judge decides whether p may resolve in with value, and what value is recorded; p learns the
// delegations it holds if they were read (admit).
func (h *Host) judge(ctx context.Context, in *runlog.Interrupt, p *interrupt.Principal, value json.RawMessage) checked {
	c := checked{interruptID: in.ID}
	if c.eligibility, c.err = h.admit(ctx, in, p); c.err != nil {
		return c
	}
	c.value, c.action, c.err = h.checkResume(in, *p, value)
	return c
}

// resolveEvent is the event that exits the suspend; readers see its legacy alias beside it.
func resolveEvent(in *runlog.Interrupt, value json.RawMessage) (runlog.Event, error) {
	return runlog.NewEvent(interrupt.EventResolved, in.NodeID, in.ID, interrupt.Resolved{NodeID: in.NodeID, InterruptID: in.ID, Kind: in.Payload.Kind, ResumeValue: value})
}

// checkResume validates a resume value against everything the interrupt declares and returns
// the value to persist (an approval without decidedBy records the caller) and, for approvals, its
// action. The value is parsed once, for every schema and rule that reads it.
func (h *Host) checkResume(in *runlog.Interrupt, p interrupt.Principal, value json.RawMessage) (json.RawMessage, interrupt.Action, error) {
	const at = "/resumeValue"
	doc, err := schema.Parse(value)
	if err != nil {
		return nil, "", interrupt.Invalid("resumeValue is not acceptable for this interrupt", interrupt.FieldError{Path: at, Message: "is not valid JSON"})
	}
	var fields []interrupt.FieldError
	check := func(s json.RawMessage) {
		if len(s) == 0 {
			return
		}
		compiled, err := h.schemas.Compile(s)
		if err != nil { // refused when requested; a log written by another version may still hold one
			fields = append(fields, interrupt.FieldError{Path: at, Message: "the interrupt's schema cannot be used"})
			return
		}
		fields = append(fields, compiled.Validate(doc, at)...)
	}
	check(in.Payload.ResumeSchema)
	var action interrupt.Action
	switch in.Payload.Kind {
	case interrupt.KindConversationExchange:
		check(in.Payload.Data.OutcomeSchema)
	case interrupt.KindClarification:
		fields = append(fields, h.checkAnswers(in.Payload.Data.Questions, doc)...)
	case interrupt.KindApproval:
		var errs []interrupt.FieldError
		action, errs = checkApproval(h.schemas, in.Payload.Data.Actions, doc)
		fields = append(fields, errs...)
		if action == interrupt.ActionEditAccept && in.ToolCall != nil {
			fields = append(fields, checkEditedCall(in, value, at)...)
		}
	}
	if len(fields) > 0 {
		return nil, "", interrupt.Invalid("resumeValue is not acceptable for this interrupt", fields...)
	}
	switch in.Payload.Kind {
	case interrupt.KindApproval:
		if value, err = decidedBy(h.schemas, in.Payload.ResumeSchema, p, value, doc); err != nil {
			return nil, "", err
		}
	case interrupt.KindClarification:
		value = answeredBy(h.schemas, in.Payload.ResumeSchema, p, value, doc, h.now())
	}
	return value, action, nil
}

// answeredBy is the clarification's answers as recorded: with decidedBy and decidedAt, as an
// approval's, so that whoever reads the resume value learns who answered and when. The caller's
// decidedBy and decidedAt are kept as sent; an authenticated caller who left decidedBy out is
// filled in (a token minted without a principal has no one to fill in, and nothing is), and
// decidedAt is now when left out. Neither is filled where the interrupt's resumeSchema would
// refuse it.
func answeredBy(schemas *schema.Set, resumeSchema json.RawMessage, p interrupt.Principal, value json.RawMessage, doc *schema.Doc, now time.Time) json.RawMessage {
	members, _ := doc.Object()
	if _, given := members["decidedBy"]; !given && p.Subject != "" {
		value = withDecidedBy(schemas, resumeSchema, p, value)
	}
	if _, given := members["decidedAt"]; !given {
		at, _ := runlog.Marshal(now.UTC().Format(runlog.TimeFormat))
		value = withMember(schemas, resumeSchema, value, "decidedAt", at)
	}
	return value
}

// decidedBy is the approval decision as recorded. decidedBy is the caller's opaque string (the
// spec: every consumer treats it as one), kept as sent: a display name, an e-mail address, a
// principal of another system. An authenticated caller (or a token minted for a principal) may
// leave it out, and the host fills in the caller. A token minted without a principal has no one
// to fill in: its bearer must send it. Who actually decided is never read from it: the vote's
// principal and the commit's author are the host's own record of that.
func decidedBy(schemas *schema.Set, resumeSchema json.RawMessage, p interrupt.Principal, value json.RawMessage, doc *schema.Doc) (json.RawMessage, error) {
	members, _ := doc.Object()
	if _, given := members["decidedBy"]; given {
		return value, nil
	}
	if p.Subject == "" {
		// "decidedBy MAY be omitted by an authenticated caller": a token minted without a
		// principal is not one, and only its bearer can say who decided.
		return nil, interrupt.Invalid("resumeValue is not acceptable for this interrupt",
			interrupt.FieldError{Path: "/resumeValue/decidedBy", Message: "is required from a token minted without a principal"})
	}
	return withDecidedBy(schemas, resumeSchema, p, value), nil
}

// withDecidedBy is value with the caller filled in as decidedBy, unless the interrupt's own
// resumeSchema would then refuse it: a recorded resume value always holds to the schema it was
// validated against, and an authenticated caller may leave decidedBy out (the spec).
func withDecidedBy(schemas *schema.Set, resumeSchema json.RawMessage, p interrupt.Principal, value json.RawMessage) json.RawMessage {
	sub, _ := runlog.Marshal(p.Subject)
	return withMember(schemas, resumeSchema, value, "decidedBy", sub)
}

// withMember is value with member name set to v, unless resumeSchema would then refuse it.
func withMember(schemas *schema.Set, resumeSchema, value json.RawMessage, name string, v json.RawMessage) json.RawMessage {
	filled := appendMember(value, name, v)
	if len(resumeSchema) == 0 {
		return filled
	}
	compiled, err := schemas.Compile(resumeSchema)
	if err != nil {
		return value
	}
	if d, err := schema.Parse(filled); err != nil || len(compiled.Validate(d, "/resumeValue")) > 0 {
		return value
	}
	return filled
}

func checkApproval(schemas *schema.Set, allowed []interrupt.Action, doc *schema.Doc) (interrupt.Action, []interrupt.FieldError) {
	if fields := schemas.ValidateDoc(schema.ApprovalResume, doc, "/resumeValue"); len(fields) > 0 {
		return "", fields
	}
	members, _ := doc.Object()
	var action interrupt.Action
	if a, ok := members["action"]; ok {
		s, _ := a.String()
		action = interrupt.Action(s)
	}
	if !slices.Contains(allowed, action) {
		return "", []interrupt.FieldError{{Path: "/resumeValue/action", Message: fmt.Sprintf("%q is not one of this approval's actions %v", action, allowed)}}
	}
	return action, nil
}

// appendMember appends one member to a JSON object without re-encoding the rest, so the value
// the caller sent is persisted as sent.
func appendMember(obj json.RawMessage, name string, value json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimRight(obj, " \t\r\n")
	key, _ := runlog.Marshal(name)
	out := make(json.RawMessage, 0, len(trimmed)+len(key)+len(value)+2)
	out = append(out, trimmed[:len(trimmed)-1]...)
	if len(bytes.TrimSpace(trimmed[1:len(trimmed)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, key...)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, '}')
}

// checkAnswers validates a clarification's resume value: { answers: { <questionId>: value },
// decidedBy?, decidedAt? } with every question answered, no other ids, and each answer valid
// against its question's schema.
func (h *Host) checkAnswers(questions []interrupt.Question, doc *schema.Doc) []interrupt.FieldError {
	body, ok := doc.Object()
	if !ok {
		return []interrupt.FieldError{{Path: "/resumeValue", Message: "must be an object { answers: { <questionId>: value } }"}}
	}
	var fields []interrupt.FieldError
	for name, member := range body {
		switch name {
		case "answers":
		case "decidedBy", "decidedAt":
			if _, ok := member.String(); !ok {
				fields = append(fields, interrupt.FieldError{Path: "/resumeValue/" + name, Message: "must be a string"})
			}
		default:
			fields = append(fields, interrupt.FieldError{Path: "/resumeValue/" + name, Message: "Additional property " + name + " is not allowed"})
		}
	}
	var answers map[string]*schema.Doc
	if a, ok := body["answers"]; ok {
		answers, ok = a.Object()
		if !ok {
			answers = nil
		}
	}
	if answers == nil {
		return append(fields, interrupt.FieldError{Path: "/resumeValue/answers", Message: "is required and must be an object keyed by question id"})
	}
	known := map[string]bool{}
	for _, q := range questions {
		known[q.ID] = true
		path := "/resumeValue/answers/" + schema.PointerEscape(q.ID)
		answer, ok := answers[q.ID]
		if !ok {
			fields = append(fields, interrupt.FieldError{Path: path, Message: "question " + q.ID + " is not answered"})
			continue
		}
		if len(q.Schema) == 0 {
			continue
		}
		compiled, err := h.schemas.Compile(q.Schema)
		if err != nil {
			fields = append(fields, interrupt.FieldError{Path: path, Message: "the question's schema cannot be used"})
			continue
		}
		fields = append(fields, compiled.Validate(answer, path)...)
	}
	var unknown []string
	for id := range answers {
		if !known[id] {
			unknown = append(unknown, id)
		}
	}
	sort.Strings(unknown)
	for _, id := range unknown {
		fields = append(fields, interrupt.FieldError{Path: "/resumeValue/answers/" + schema.PointerEscape(id), Message: "answers no question of this interrupt"})
	}
	return fields
}

// checkEditedCall checks an edit-accept of an approval that binds a call: its edited data are
// the call's arguments as approved (a JSON object with a canonical form), and only one approver
// may approve them. With a quorum of more, each approving vote approves the call as asked:
// an edit by the vote that releases it would approve arguments the others never saw, and an
// earlier edit would be dropped by a later plain accept. So the edit is refused there (a
// rejection with a comment asks for another call).
func checkEditedCall(in *runlog.Interrupt, value json.RawMessage, at string) []interrupt.FieldError {
	if n := in.Tally().Required; n > 1 {
		return []interrupt.FieldError{{Path: at + "/action",
			Message: fmt.Sprintf("edit-accept is not open on a call %d approvers approve: each approves the call as asked (reject with a comment to ask for another)", n)}}
	}
	var v struct {
		Edited json.RawMessage `json:"editedArtifactData"`
	}
	_ = json.Unmarshal(value, &v)
	if f := interrupt.CheckArguments(v.Edited, at+"/editedArtifactData"); f != nil {
		return []interrupt.FieldError{*f}
	}
	return nil
}
