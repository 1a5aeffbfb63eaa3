// Package policy is a tenant's tool policies: for each tool an agent may ask approval to call,
// who decides, the quorum, the deadline, the actions and the receipt's life, set by the
// tenant's administrators and not by the agent (docs/design.md, "Tool policies"). An agent that
// is wrong or steered would otherwise pick a friendly approver, or none. Each change is a new
// version appended to the tenant's record, so that an approval names the version it was asked
// under.
package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// ScopeManage is the scope of the policies' routes: who approves an agent's calls is an
// administrator's to say, not an engine's, an agent's or an approver's.
const ScopeManage = "policies:manage"

// Default is the tool of the tenant's default policy (interrupt.DefaultPolicy): what applies to
// a call no policy names, when it is set.
const Default = interrupt.DefaultPolicy

// MaxPolicies bounds the tools a tenant has policies for, so that its list is one page.
const MaxPolicies = 100

// Policy is one version of a tenant's policy for Tool: its rule, who set it and when. A version
// that ended the policy (DELETE) is Deleted, with no rule.
type Policy struct {
	Tool    string `json:"tool"`
	Version int    `json:"version"`
	Rule
	SetBy   string    `json:"setBy"`
	SetAt   time.Time `json:"setAt"`
	Deleted bool      `json:"deleted,omitempty"`
}

// Ref names p's version, as an approval asked under it records it.
func (p Policy) Ref() interrupt.PolicyRef {
	return interrupt.PolicyRef{Tool: p.Tool, Version: p.Version}
}

// Rule is what a policy says, and the body of PUT /policies/tools/{toolName} and PUT
// /policies/default: an approval's who-decides members, as an approval payload has them
// (approversList, approverGroupRefs, approverRoleRefs, requiredApprovals, rejectionPolicy,
// actions, timeoutMs), and the receipt's life.
type Rule struct {
	ApproversList     []string `json:"approversList,omitempty"`
	ApproverGroupRefs []string `json:"approverGroupRefs,omitempty"`
	ApproverRoleRefs  []string `json:"approverRoleRefs,omitempty"`
	RequiredApprovals int      `json:"requiredApprovals,omitempty"`
	RejectionPolicy   string   `json:"rejectionPolicy,omitempty"`
	Actions           []string `json:"actions,omitempty"`
	TimeoutMs         int64    `json:"timeoutMs,omitempty"`
	ReceiptTTLMs      int64    `json:"receiptTtlMs,omitempty"`
	// Standing are the routine calls the policy approves at once, no person asked: a call
	// whose arguments hold to one of them (in order, the first that matches) is approved by
	// the policy itself.
	Standing []Standing `json:"standing,omitempty"`
}

// Standing is a standing approval: the calls of the tool whose arguments hold to Arguments (a
// JSON Schema, bounded as an interrupt's inline schemas are), until Until if set, which
// Description says in words for whoever reads the log.
type Standing struct {
	Arguments   json.RawMessage `json:"arguments"`
	Until       *time.Time      `json:"until,omitempty"`
	Description string          `json:"description"`
}

// Bounds of a policy's standing approvals: how many, and how long a description.
const (
	MaxStanding            = 16
	MaxStandingDescription = 200
)

// Schemas compiles and runs standing approvals' schemas (schema.Set), with an interrupt's
// inline schemas' bounds.
type Schemas interface {
	Compile(raw json.RawMessage) (*schema.Inline, error)
}

// Matches is the first of p's standing approvals in force at now whose schema args hold to,
// and whether one does. A schema that no longer compiles matches nothing.
func (p Policy) Matches(schemas Schemas, args json.RawMessage, now time.Time) (interrupt.StandingMatch, bool) {
	if len(p.Standing) == 0 {
		return interrupt.StandingMatch{}, false
	}
	doc, err := schema.Parse(args)
	if err != nil {
		return interrupt.StandingMatch{}, false
	}
	for i, st := range p.Standing {
		if st.Until != nil && !now.Before(*st.Until) {
			continue
		}
		in, err := schemas.Compile(st.Arguments)
		if err != nil {
			continue
		}
		if len(in.Validate(doc, "")) == 0 {
			return interrupt.StandingMatch{Index: i, Description: st.Description}, true
		}
	}
	return interrupt.StandingMatch{}, false
}

// Data are the rule's members of an approval payload's data, beside what the agent says of the
// call (title, description, artifact): the members the agent may not set under a policy.
func (r Rule) Data() map[string]any {
	d := map[string]any{}
	set := func(k string, v any, present bool) {
		if present {
			d[k] = v
		}
	}
	set("approversList", r.ApproversList, len(r.ApproversList) > 0)
	set("approverGroupRefs", r.ApproverGroupRefs, len(r.ApproverGroupRefs) > 0)
	set("approverRoleRefs", r.ApproverRoleRefs, len(r.ApproverRoleRefs) > 0)
	set("requiredApprovals", r.RequiredApprovals, r.RequiredApprovals > 0)
	set("rejectionPolicy", r.RejectionPolicy, r.RejectionPolicy != "")
	d["actions"] = cmpActions(r.Actions)
	return d
}

func cmpActions(a []string) []string {
	if len(a) == 0 {
		return []string{"accept", "reject"}
	}
	return a
}

// Payload is the approval payload the rule makes of a call: what the agent says of it (title,
// description, artifact id and type) and who decides, how, and until when, as the rule says.
func (r Rule) Payload(key, title, description, artifactID, artifactType string) (json.RawMessage, error) {
	data := r.Data()
	data["title"], data["artifactId"], data["artifactType"] = title, artifactID, artifactType
	if description != "" {
		data["description"] = description
	}
	p := map[string]any{"kind": interrupt.KindApproval, "key": key, "data": data}
	if r.TimeoutMs > 0 {
		p["timeoutMs"] = r.TimeoutMs
	}
	return json.Marshal(p)
}

// Checker checks an approval payload as a request would, writing nothing (host.Host.CheckApproval):
// what a rule is held to, with the same problems.
type Checker interface {
	CheckApproval(payload json.RawMessage) error
}

// Check says what is wrong with r at now: it names nobody who decides, or the approval it would
// make is one a request would refuse (its problems' paths under the body's root, not the
// payload's), its receipt's life is out of bounds, or a standing approval's schema is one the
// host will not run, its description missing or too long, or its end already past.
func (r Rule) Check(c Checker, schemas Schemas, now time.Time) error {
	var fields []interrupt.FieldError
	if len(r.ApproversList)+len(r.ApproverGroupRefs)+len(r.ApproverRoleRefs) == 0 {
		fields = append(fields, interrupt.FieldError{Path: "/approversList", Message: "name at least one principal, or give approverGroupRefs or approverRoleRefs: a policy says who decides"})
	}
	if ms := r.ReceiptTTLMs; ms != 0 && (ms < interrupt.MinReceiptTTL.Milliseconds() || ms > interrupt.MaxReceiptTTL.Milliseconds()) {
		fields = append(fields, interrupt.FieldError{Path: "/receiptTtlMs", Message: fmt.Sprintf("must be %d to %d", interrupt.MinReceiptTTL.Milliseconds(), interrupt.MaxReceiptTTL.Milliseconds())})
	}
	if r.TimeoutMs < 0 {
		fields = append(fields, interrupt.FieldError{Path: "/timeoutMs", Message: "must be positive"})
	}
	fields = append(fields, r.checkStanding(schemas, now)...)
	if len(fields) > 0 {
		return interrupt.Invalid("the policy is not acceptable", fields...)
	}
	raw, err := r.Payload("policy", "policy", "", "policy", "tool-call")
	if err != nil {
		return err
	}
	err = c.CheckApproval(raw)
	var e *interrupt.Error
	if !errors.As(err, &e) {
		return err
	}
	out := &interrupt.Error{Code: e.Code, Message: "the policy is not acceptable: " + e.Message}
	for _, f := range e.Fields {
		f.Path = strings.TrimPrefix(strings.TrimPrefix(f.Path, "/payload"), "/data")
		out.Fields = append(out.Fields, f)
	}
	return out
}

// checkStanding says what is wrong with r's standing approvals.
func (r Rule) checkStanding(schemas Schemas, now time.Time) []interrupt.FieldError {
	var out []interrupt.FieldError
	if len(r.Standing) > MaxStanding {
		return []interrupt.FieldError{{Path: "/standing", Message: fmt.Sprintf("must hold at most %d standing approvals", MaxStanding)}}
	}
	for i, st := range r.Standing {
		at := fmt.Sprintf("/standing/%d", i)
		if len(st.Arguments) == 0 {
			out = append(out, interrupt.FieldError{Path: at + "/arguments", Message: "is required: the JSON Schema the call's arguments must hold to"})
		} else if _, err := schemas.Compile(st.Arguments); err != nil {
			if refused := (*schema.Error)(nil); errors.As(err, &refused) {
				out = append(out, interrupt.FieldError{Path: at + "/arguments" + refused.Pointer, Message: refused.Message})
			} else {
				out = append(out, interrupt.FieldError{Path: at + "/arguments", Message: "is not a usable JSON Schema: " + err.Error()})
			}
		}
		if d := strings.TrimSpace(st.Description); d == "" || utf8.RuneCountInString(d) > MaxStandingDescription || strings.ContainsFunc(d, unicode.IsControl) {
			out = append(out, interrupt.FieldError{Path: at + "/description", Message: fmt.Sprintf("must say what it approves, in 1 to %d characters", MaxStandingDescription)})
		}
		if st.Until != nil && !now.Before(*st.Until) {
			out = append(out, interrupt.FieldError{Path: at + "/until", Message: "has passed"})
		}
	}
	return out
}

// whoDecides are the members of an approval payload's data a policy says: a request under it
// names none of them.
var whoDecides = []string{"approversList", "approverGroupRefs", "approverRoleRefs", "requiredApprovals", "rejectionPolicy", "actions"}

// Apply is an approval payload made to ask under p: the request's payload with who decides, the
// quorum, the rejection policy, the actions and the deadline the policy's. A payload that names
// any of them itself is refused (its fields at at), as an agent naming them is: the requester
// says what is asked, the tenant's administrators who allows it.
func (p Policy) Apply(payload json.RawMessage, at string) (json.RawMessage, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(payload, &doc); err != nil {
		return nil, interrupt.Invalid("payload is not a JSON object", interrupt.FieldError{Path: at, Message: "must be an approval payload"})
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(doc["data"], &data); err != nil || data == nil {
		return nil, interrupt.Invalid("payload has no data", interrupt.FieldError{Path: at + "/data", Message: "must be an object"})
	}
	var named []interrupt.FieldError
	if _, ok := doc["timeoutMs"]; ok {
		named = append(named, interrupt.FieldError{Path: at + "/timeoutMs", Message: "is the policy's to say: leave it out"})
	}
	for _, k := range whoDecides {
		if _, ok := data[k]; ok {
			named = append(named, interrupt.FieldError{Path: at + "/data/" + k, Message: "is the policy's to say: leave it out"})
		}
	}
	if len(named) > 0 {
		return nil, interrupt.Invalid(p.Ref().Said()+" says who decides calls of "+p.Tool+", how many must approve, what they may do and until when: a request under it names none of them", named...)
	}
	for k, v := range p.Data() {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		data[k] = b
	}
	rawData, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	doc["data"] = rawData
	if p.TimeoutMs > 0 {
		doc["timeoutMs"] = json.RawMessage(fmt.Sprint(p.TimeoutMs))
	}
	return json.Marshal(doc)
}

// ErrVersionTaken is what a Store answers for a version another writer put first.
var ErrVersionTaken = errors.New("policy: that version was put first by another writer")

// ErrNotFound is what a Store answers for a tool it holds no policy of.
var ErrNotFound = errors.New("policy: no such policy")

// Store keeps each tenant's policies, every version. Implementations: dynamo.Table,
// inmem.Store, held to one behaviour by package policy/storetest.
type Store interface {
	// PutPolicy appends p as version p.Version of its tool's record, or answers ErrVersionTaken
	// when that version is there.
	PutPolicy(ctx context.Context, tenant string, p Policy) error
	// Policy answers the latest version of tool's policy (Deleted when that version ended it),
	// or ErrNotFound.
	Policy(ctx context.Context, tenant, tool string) (Policy, error)
	// Policies answers the latest version of each tool's policy that is not Deleted, by tool.
	Policies(ctx context.Context, tenant string) ([]Policy, error)
}

// Book is the tenant's policies as the routes and the agents' tools read and change them.
type Book struct {
	Store   Store
	Checker Checker
	Schemas Schemas
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

func (b *Book) now() time.Time {
	if b.Now == nil {
		return time.Now()
	}
	return b.Now()
}

// Put sets tool's policy to r, as principal p (its tenant's), as the version after the latest:
// created when there was none in force. A rule the Checker refuses changes nothing. Two puts at
// once both take, one after the other.
func (b *Book) Put(ctx context.Context, p interrupt.Principal, tool string, r Rule) (Policy, bool, error) {
	if err := checkTool(tool); err != nil {
		return Policy{}, false, err
	}
	if err := r.Check(b.Checker, b.Schemas, b.now()); err != nil {
		return Policy{}, false, err
	}
	r.Actions = cmpActions(r.Actions)
	for range 5 {
		latest, err := b.Store.Policy(ctx, p.Tenant, tool)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Policy{}, false, err
		}
		if (err != nil || latest.Deleted) && tool != Default {
			all, err := b.Store.Policies(ctx, p.Tenant)
			if err != nil {
				return Policy{}, false, err
			}
			if len(all) >= MaxPolicies {
				return Policy{}, false, interrupt.Errorf(interrupt.CodeConflict, "the tenant has policies for %d tools, the most it may have: delete one first", MaxPolicies)
			}
		}
		next := Policy{Tool: tool, Version: latest.Version + 1, Rule: r, SetBy: p.Subject, SetAt: b.now().UTC().Truncate(time.Millisecond)}
		switch err := b.Store.PutPolicy(ctx, p.Tenant, next); {
		case errors.Is(err, ErrVersionTaken):
			continue
		case err != nil:
			return Policy{}, false, err
		}
		return next, latest.Version == 0 || latest.Deleted, nil
	}
	return Policy{}, false, interrupt.Errorf(interrupt.CodeConflict, "the policy of %s changed under this change five times: try again", tool)
}

// Get answers tool's policy in force, or not_found.
func (b *Book) Get(ctx context.Context, p interrupt.Principal, tool string) (Policy, error) {
	if err := checkTool(tool); err != nil {
		return Policy{}, err
	}
	got, err := b.Store.Policy(ctx, p.Tenant, tool)
	if errors.Is(err, ErrNotFound) || err == nil && got.Deleted {
		return Policy{}, interrupt.Errorf(interrupt.CodeNotFound, "the tenant has no policy for %s", said(tool))
	}
	return got, err
}

// List answers the tenant's policies in force, by tool (the default, if set, first).
func (b *Book) List(ctx context.Context, p interrupt.Principal) ([]Policy, error) {
	return b.Store.Policies(ctx, p.Tenant)
}

// Delete ends tool's policy: a version that records who ended it and when, after which the
// tool has none (calls of it fall to the default, or to the agent's own naming). not_found when
// none is in force.
func (b *Book) Delete(ctx context.Context, p interrupt.Principal, tool string) error {
	for range 5 {
		latest, err := b.Get(ctx, p, tool)
		if err != nil {
			return err
		}
		end := Policy{Tool: tool, Version: latest.Version + 1, SetBy: p.Subject, SetAt: b.now().UTC().Truncate(time.Millisecond), Deleted: true}
		if err := b.Store.PutPolicy(ctx, p.Tenant, end); !errors.Is(err, ErrVersionTaken) {
			return err
		}
	}
	return interrupt.Errorf(interrupt.CodeConflict, "the policy of %s changed under this change five times: try again", tool)
}

// For is the policy a call of tool asks under, in tenant: the tool's own in force, else the
// default in force, else none (nil).
func (b *Book) For(ctx context.Context, tenant, tool string) (*Policy, error) {
	for _, t := range []string{tool, Default} {
		got, err := b.Store.Policy(ctx, tenant, t)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return nil, err
		case !got.Deleted:
			return &got, nil
		}
	}
	return nil, nil
}

// Standing is the standing approval of p that a call with args matches now, if one does
// (Policy.Matches with the book's schemas and clock).
func (b *Book) Standing(p Policy, args json.RawMessage) (interrupt.StandingMatch, bool) {
	return p.Matches(b.Schemas, args, b.now())
}

// checkTool refuses a tool that is no tool's name (or the default).
func checkTool(tool string) error {
	if tool == Default || interrupt.ValidToolName(tool) {
		return nil
	}
	return interrupt.Invalid("the tool is not a tool's name", interrupt.FieldError{Path: "/toolName", Message: "must be 1 to 128 letters, digits, '_', '-' or '.'"})
}

// said is tool as a message names it.
func said(tool string) string {
	if tool == Default {
		return "calls no policy names (the default)"
	}
	return "tool " + tool
}

// Sorted orders policies by tool, the default first.
func Sorted(ps []Policy) []Policy {
	slices.SortFunc(ps, func(a, b Policy) int { return strings.Compare(a.Tool, b.Tool) })
	return ps
}
