package interrupt

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Deciders is the one rule of who decides an interrupt (docs/design.md, "Who may decide"):
// who may decide it (Admit), whom to tell (Audience, Undecided), which inboxes it is filed in
// (Inboxes) and who may hold a link that decides as them (Signable). It is worked out once per
// interrupt, from its request (NewDeciders), kept with it by the log's fold, and asked by every
// surface: resolve by run and by token, minting, the approval page, the inbox, reminders and
// escalation, mail, Slack and MCP. A surface never works any of it out again; a new surface is
// a way of proving who a person is, then a question to this value.
type Deciders struct {
	// Kind is the interrupt's kind.
	Kind Kind
	// Person is whether a person decides the interrupt (Kind.DecidedByPerson): only then is
	// anyone refused, and is a token that decides it a person's credential.
	Person bool
	// Asked is whether people are asked to decide it, so it is filed, told and followed up:
	// a person decides it and it is not a conversation's start or close, which the engine
	// opens and closes.
	Asked bool
	// Requester requested it and may never decide it; Agent is the agent a low-confidence
	// interrupt escalates, who may not decide it either.
	Requester string
	Agent     string
	// Rules are the eligibility fields that bind by the ref kinds recorded with the request,
	// approversList first: every one must admit a decider. None: anyone of the tenant who may
	// respond decides.
	Rules []Rule
	// Quorum is how many distinct principals must approve: an approval's requiredApprovals, 1
	// for everything else. Policy is an approval's rejectionPolicy ("" is single-veto), and
	// Bypass whether it lets an override principal release it alone (overrideBypassesQuorum).
	Quorum int
	Policy string
	Bypass bool
	// Audience are whom to tell, each ref typed, in the order the request names them.
	Audience []Ref
	// Handed are the places an escalation that delegates handed on (interrupt.escalated with
	// delegate), as the log's fold adds them: each target decides in its approver's place.
	Handed []Handing `json:"handed,omitempty"`
}

// Rule is one eligibility field that binds: a decider must hold one of Refs as Kind (its
// principal, one of its groups, one of its roles).
type Rule struct {
	Field string
	Kind  string
	Refs  []string
}

// DefaultRefKinds are the ref kinds a request recorded before its host's were kept was judged
// by: every kind, the deployment's default (RefKinds).
var DefaultRefKinds = []string{RefPrincipal, RefGroup, RefRole}

// NewDeciders works out who decides an interrupt of payload p, requested by requester with
// display, on a host that advertises refKinds (nil: DefaultRefKinds). approversList always
// binds; group and role refs bind only where their kind is advertised, and are otherwise only
// told. Whom to tell is an approval's audience when it names one, else the union of its
// eligibility refs (the spec: audience is a notification hint); for the other kinds a person
// decides, the principals display.audience names. An audience ref that no eligibility field
// names is a principal: contacts and links look it up as one.
func NewDeciders(p Payload, display *Display, requester string, refKinds []string) Deciders {
	if refKinds == nil {
		refKinds = DefaultRefKinds
	}
	k := p.Kind
	d := Deciders{
		Kind:      k,
		Person:    k.DecidedByPerson(),
		Asked:     k.Asked(),
		Requester: requester,
		Quorum:    1,
	}
	if k == KindLowConfidence {
		d.Agent = p.Data.AgentID
	}
	if k != KindApproval {
		if d.Asked && display != nil {
			d.Audience = refs(RefPrincipal, display.Audience, nil)
		}
		return d
	}
	data := p.Data
	d.Quorum = max(int(data.RequiredApprovals), 1)
	d.Policy, d.Bypass = data.RejectionPolicy, data.OverrideBypassesQuorum
	fields := []Rule{
		{"approversList", RefPrincipal, data.ApproversList},
		{"approverGroupRefs", RefGroup, data.ApproverGroupRefs},
		{"approverRoleRefs", RefRole, data.ApproverRoleRefs},
	}
	for _, f := range fields {
		if len(f.Refs) > 0 && (f.Kind == RefPrincipal || slices.Contains(refKinds, f.Kind)) {
			d.Rules = append(d.Rules, f)
		}
	}
	if len(data.Audience) > 0 {
		kindOf := func(ref string) string {
			for _, f := range fields {
				if slices.Contains(f.Refs, ref) {
					return f.Kind
				}
			}
			return RefPrincipal
		}
		for _, ref := range data.Audience {
			if r := (Ref{Kind: kindOf(ref), Ref: ref}); !slices.Contains(d.Audience, r) {
				d.Audience = append(d.Audience, r)
			}
		}
		return d
	}
	for _, f := range fields {
		d.Audience = refs(f.Kind, f.Refs, d.Audience)
	}
	return d
}

// refs appends each of names as a ref of kind to out, once.
func refs(kind string, names []string, out []Ref) []Ref {
	for _, n := range names {
		if r := (Ref{Kind: kind, Ref: n}); !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// Admit decides, now and once, whether p may decide the interrupt, and for an approval records
// why (the vote keeps it; replay never judges again). Nobody decides what they requested, nor
// the agent its own escalation. Quorum counts people: a token without a principal decides only
// where one decision releases. Every rule must admit p: a principal by name, a group or role by
// p's memberships as its credentials state them now (a signed link or a Slack id carries none,
// so it decides only what principals may decide). With no rule, anyone may. A chat click
// decides only what Accepts says it may, whatever it names. A caller the rules do not admit
// may still decide as a delegate (p.For, and what the interrupt's escalation handed it): as the
// first delegator the rules admit, whose vote it casts (Eligibility.OnBehalfOf); one who may
// decide in their own right votes as themself, so one person casts one vote.
func (d Deciders) Admit(p Principal) (Eligibility, error) {
	e, err := d.admitSelf(p)
	if err == nil || ErrorCode(err) != CodeNotEligible || p.Subject == "" {
		return e, err
	}
	if e, ok := d.admitFor(p, nil); ok {
		return e, nil
	}
	return Eligibility{}, err
}

// admitSelf is Admit for p in its own right.
func (d Deciders) admitSelf(p Principal) (Eligibility, error) {
	if p.Via == ViaChat && !d.Accepts(ViaChat) {
		return Eligibility{}, Errorf(CodeNotEligible, "a chat click decides only an approval whose approvers are named principals; this one is decided on its page")
	}
	if !d.Person {
		return Eligibility{}, nil
	}
	voter := p.Voter()
	switch {
	case voter != "" && voter == d.Requester:
		return Eligibility{}, Errorf(CodeForbidden, "%s requested this interrupt and cannot decide it", voter)
	case d.Agent != "" && p.Subject == d.Agent:
		return Eligibility{}, Errorf(CodeForbidden, "this interrupt escalates agent %s's decision to a person; the agent cannot decide it", p.Subject)
	case p.Subject == "" && d.Quorum > 1:
		return Eligibility{}, Errorf(CodeNotEligible,
			"a token without a principal is no one in particular and cannot count towards a quorum of %d; approvers decide as themselves", d.Quorum)
	case len(d.Rules) == 0:
		return Eligibility{Via: "open"}, nil
	case p.Subject == "":
		return Eligibility{}, Errorf(CodeNotEligible, "this approval names its approvers; a token must be minted for one of them")
	}
	var e Eligibility
	for _, r := range d.Rules {
		held := p.held(r.Kind)
		i := slices.IndexFunc(r.Refs, func(ref string) bool { return slices.Contains(held, ref) })
		if i < 0 {
			return Eligibility{}, Errorf(CodeNotEligible, "%s is not an eligible approver: %s does not admit it", p.Subject, r.Field)
		}
		if e.Via == "" {
			e.Via, e.Ref = r.Kind, r.Refs[i]
		} else {
			e.Also = append(e.Also, Admission{Via: r.Kind, Ref: r.Refs[i]})
		}
	}
	return e, nil
}

// held are p's refs of kind: its subject, groups or roles.
func (p Principal) held(kind string) []string {
	switch kind {
	case RefPrincipal:
		return []string{p.Subject}
	case RefGroup:
		return p.Groups
	case RefRole:
		return p.Roles
	}
	return nil
}

// Undecidable says why no one could ever decide the approval, as the field that makes it so:
// approversList binds always, so it bounds the voters whatever else binds; too few principals
// for the quorum (requiredApprovals), or too few once its requester and the agent it escalates,
// who may never decide it, are left out (approversList). The zero FieldError when someone could.
// The one place the quorum is held against the list, at request time.
func (d Deciders) Undecidable() FieldError {
	for _, r := range d.Rules {
		if r.Kind != RefPrincipal {
			continue
		}
		var named, may []string
		for _, ref := range r.Refs {
			if slices.Contains(named, ref) {
				continue
			}
			named = append(named, ref)
			if ref != d.Requester && ref != d.Agent {
				may = append(may, ref)
			}
		}
		if len(named) < d.Quorum {
			return FieldError{Path: "/payload/data/requiredApprovals", Message: fmt.Sprintf("%d approvals can never come from the %d principals of approversList", d.Quorum, len(named))}
		}
		switch {
		case len(may) == 0:
			return FieldError{Path: "/payload/data/approversList", Message: "approversList names only its requester, " + d.Requester + ", who may never decide what it requested"}
		case len(may) < d.Quorum:
			return FieldError{Path: "/payload/data/approversList", Message: fmt.Sprintf("%d approvals can never come from the %d principals of approversList who may decide (its requester, %s, may not)", d.Quorum, len(may), d.Requester)}
		}
	}
	return FieldError{}
}

// Unreachable reports whether the quorum can no longer be met, approvals counted so far:
// approversList bounds who may still decide, and the principals it lists who may decide and
// have not voted (voted says) fall short of it, none of them one who releases the gate alone
// (releasesAlone says: an override principal). Without a list nobody knows how many deciders
// are left, and the gate waits.
func (d Deciders) Unreachable(approvals int, voted, releasesAlone func(principal string) bool) bool {
	for _, r := range d.Rules {
		if r.Kind != RefPrincipal {
			continue
		}
		var left []string
		for _, who := range r.Refs {
			if who == d.Requester || who == d.Agent || voted(who) || slices.Contains(left, who) {
				continue
			}
			if releasesAlone(who) {
				return false
			}
			left = append(left, who)
		}
		return approvals+len(left) < d.Quorum
	}
	return false
}

// Memberships reports whether a rule binds by group or role: a credential that proves a person
// but not their memberships (a signed link, a Slack id) decides nothing then.
func (d Deciders) Memberships() bool {
	return slices.ContainsFunc(d.Rules, func(r Rule) bool { return r.Kind != RefPrincipal })
}

// Named reports whether only those the rules name may decide: a link that names nobody
// decides nothing then.
func (d Deciders) Named() bool { return len(d.Rules) > 0 }

// Accepts reports whether a proof of kind via may decide the interrupt at all: one that carries
// no memberships (a link, a chat click) only an interrupt whose deciders are named principals
// bound by no group or role, since it proves the person and nothing of what they belong to; a
// chat click only an approval besides, since its buttons are Approve and Reject. A channel asks
// it for offering its buttons and for taking a click.
func (d Deciders) Accepts(via Via) bool {
	if via.Memberships() {
		return true
	}
	return d.Named() && !d.Memberships() && (via != ViaChat || d.Kind == KindApproval)
}

// Overrides reports whether p's vote releases the approval alone: the request allowed it
// (Bypass, the payload's overrideBypassesQuorum), p is one of the deployment's override
// principals, and p was proven by a deliberate act (Via.Deliberate), so that no link a scanner
// follows and no chat click can release an approval alone.
func (d Deciders) Overrides(p Principal, overrides []string) bool {
	return d.Bypass && d.Kind == KindApproval && p.Via.Deliberate() && p.Subject != "" && slices.Contains(overrides, p.Subject)
}

// Signable reports whether a link that decides as r may be made for r: r is a principal the
// rules admit by name alone, and not the requester (who could not use it).
func (d Deciders) Signable(r Ref) bool {
	if !d.Asked || r.Kind != RefPrincipal || r.Ref == "" {
		return false
	}
	// In its own right: a place a delegation or an escalation hands on is read when the vote is
	// cast, not when a link is made.
	_, err := d.admitSelf(Principal{Subject: r.Ref})
	return err == nil
}

// Undecided are whom a reminder goes to: the audience, less the principals voted reports have
// decided; a group or role stays, as the host cannot tell who of it decided.
func (d Deciders) Undecided(voted func(principal string) bool) []Ref {
	out := []Ref{}
	for _, r := range d.Audience {
		if r.Kind == RefPrincipal && voted(r.Ref) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Anyone is the inbox of interrupts any person of the tenant may decide.
const Anyone = "anyone"

// Inbox is the inbox of r: "principal:alice", "group:finance", "role:manager".
func (r Ref) Inbox() string { return r.Kind + ":" + r.Ref }

// Inbox bounds: an interrupt is filed in at most MaxInboxes inboxes, whose names take at most
// MaxInboxBytes as JSON encodes them (a ref of control-like characters is escaped to six bytes
// each), so that the summary that lists them always fits its store item. A decider beyond the
// bound finds it through another inbox or not at all (docs/design.md, "The inbox").
const (
	MaxInboxes    = 100
	MaxInboxBytes = 8 << 10
)

// Inboxes are the inboxes the interrupt is filed in: an approval's in those of the refs of its
// first rule (a decider must be admitted by every one, so by that one too), or Anyone's when
// none binds; another kind people are asked in those of its audience, or Anyone's; none for
// what machines or the engine answer.
func (d Deciders) Inboxes() []string {
	if !d.Asked {
		return nil
	}
	var from []Ref
	switch {
	case len(d.Rules) > 0:
		from = refs(d.Rules[0].Kind, d.Rules[0].Refs, nil)
	case d.Kind != KindApproval:
		from = d.Audience
	}
	if len(from) == 0 {
		return []string{Anyone}
	}
	var out []string
	size := 0
	for _, r := range from {
		name := r.Inbox()
		if n := EncodedLen(name) + 1; len(out) < MaxInboxes && size+n <= MaxInboxBytes {
			out, size = append(out, name), size+n
		}
	}
	return out
}

// FiledAlone reports whether reading the interrupt from one of its inboxes admits the reader
// but for the requester: one rule at most (the one it is filed by) and no agent to refuse.
// Otherwise an inbox's reader asks Admit of the interrupt as its log holds it.
func (d Deciders) FiledAlone() bool { return len(d.Rules) <= 1 && d.Agent == "" }

// Beyond is what a reader of one of the interrupt's inboxes must pass that being read from it
// does not prove, where FiledAlone does not hold: the binding rules after the first (the one it
// is filed by, which admitted the reader), and the requester and agent who may not decide it.
// Each of the interrupt's inbox entries keeps it, so that a reader it refuses costs no read of
// the run's log; it is bounded (MaxBeyondBytes), and an interrupt whose rules past the first do
// not fit keeps none, its reader judged by Admit as the log holds it.
type Beyond struct {
	Requester string `json:"requester,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Rules     []Rule `json:"rules,omitempty"`
}

// MaxBeyondBytes bounds what an inbox entry keeps of its interrupt's deciders (Beyond): a few
// group or role refs fit, and an entry per inbox (up to MaxInboxes) copies them.
const MaxBeyondBytes = 1 << 10

// Beyond is what the interrupt's inbox entries keep for their readers; nil where FiledAlone
// holds (nothing beyond the inbox and the requester), or where it would not fit MaxBeyondBytes.
func (d Deciders) Beyond() *Beyond {
	if d.FiledAlone() {
		return nil
	}
	b := &Beyond{Requester: d.Requester, Agent: d.Agent}
	if len(d.Rules) > 1 {
		b.Rules = d.Rules[1:]
	}
	if encoded, err := json.Marshal(b); err != nil || len(encoded) > MaxBeyondBytes {
		return nil
	}
	return b
}

// Admit is Deciders.Admit for a reader of one of the interrupt's inboxes that kept b: the
// inbox admitted the reader by the first rule, and b's rules, requester and agent judge the rest.
func (b Beyond) Admit(p Principal) bool {
	if p.Subject == "" {
		return false
	}
	_, err := Deciders{Person: true, Requester: b.Requester, Agent: b.Agent, Rules: b.Rules, Quorum: 1}.Admit(p)
	return err == nil
}

// AdmitFiled is Admit for a reader of one of the interrupt's inboxes where FiledAlone holds: the
// inbox admitted the reader (its rule, or none), and only the requester is refused.
func AdmitFiled(requester string, p Principal) bool {
	return p.Subject != "" && (requester == "" || p.Voter() != requester)
}

// EncodedLen is the bytes s takes as a JSON string's contents, at most: what a store counts
// of it, where a character JSON escapes (a control character, U+2028) takes six.
func EncodedLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b) - 2
}
