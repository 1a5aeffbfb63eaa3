package interrupt_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// TestDeciders pins the one rule of who decides: for each request, who may decide (and as
// what), whom it is told to, the inboxes it is filed in and who may hold a signed link. Every
// surface asks this value, so their tests assert through it.
func TestDeciders(t *testing.T) {
	t.Parallel()
	alice := interrupt.Principal{Subject: "alice", Groups: []string{"finance"}, Roles: []string{"manager"}}
	bob := interrupt.Principal{Subject: "bob", Groups: []string{"ops"}}
	engine := interrupt.Principal{Subject: "engine"}
	anon := interrupt.Principal{Token: "jti1"}
	agent := interrupt.Principal{Subject: "agent-7"}
	type verdict = string // "via:ref[+via:ref]" admitted, else the error code
	tests := []struct {
		name     string
		payload  string
		display  *interrupt.Display
		refKinds []string
		admit    map[string]verdict // by principal: alice, bob, engine, anon, agent
		inboxes  []string
		audience []string
		signable []string
		alone    bool
	}{
		{
			name:    "an open approval: anyone but its requester, filed for anyone, its audience told as principals",
			payload: `{"kind":"approval","data":{"audience":["alice","bob"]}}`,
			admit:   map[string]verdict{"alice": "open:", "bob": "open:", "engine": "forbidden", "anon": "open:"},
			inboxes: []string{"anyone"}, audience: []string{"principal:alice", "principal:bob"}, signable: []string{"alice", "bob"}, alone: true,
		},
		{
			name:    "a list and a group: every field must admit; filed by the list; no signed link (a link carries no groups)",
			payload: `{"kind":"approval","data":{"approversList":["alice","bob"],"approverGroupRefs":["finance"]}}`,
			admit:   map[string]verdict{"alice": "principal:alice+group:finance", "bob": "approver_not_eligible", "engine": "forbidden", "anon": "approver_not_eligible"},
			inboxes: []string{"principal:alice", "principal:bob"}, audience: []string{"principal:alice", "principal:bob", "group:finance"},
		},
		{
			name:     "a group on a host that enforces principals only: the group binds nothing, so the approval is open",
			payload:  `{"kind":"approval","data":{"approverGroupRefs":["finance"]}}`,
			refKinds: []string{"principal"},
			admit:    map[string]verdict{"alice": "open:", "bob": "open:", "anon": "open:"},
			inboxes:  []string{"anyone"}, audience: []string{"group:finance"}, alone: true,
		},
		{
			name:    "a role: admitted by the role, filed in it",
			payload: `{"kind":"approval","data":{"approverRoleRefs":["manager"]}}`,
			admit:   map[string]verdict{"alice": "role:manager", "bob": "approver_not_eligible", "anon": "approver_not_eligible"},
			inboxes: []string{"role:manager"}, audience: []string{"role:manager"}, alone: true,
		},
		{
			name:    "a quorum counts people: a token without a principal decides nothing",
			payload: `{"kind":"approval","data":{"requiredApprovals":2}}`,
			admit:   map[string]verdict{"alice": "open:", "anon": "approver_not_eligible", "engine": "forbidden"},
			inboxes: []string{"anyone"}, alone: true,
		},
		{
			name:    "the list names its requester: not admitted, no link",
			payload: `{"kind":"approval","data":{"approversList":["engine","bob"]}}`,
			admit:   map[string]verdict{"engine": "forbidden", "bob": "principal:bob", "alice": "approver_not_eligible"},
			inboxes: []string{"principal:engine", "principal:bob"}, audience: []string{"principal:engine", "principal:bob"}, signable: []string{"bob"}, alone: true,
		},
		{
			name:    "an audience beside the list: typed by the field naming each, the rest principals, linked only where the list admits",
			payload: `{"kind":"approval","data":{"approversList":["alice"],"audience":["alice","finance-desk"]}}`,
			admit:   map[string]verdict{"alice": "principal:alice", "bob": "approver_not_eligible"},
			inboxes: []string{"principal:alice"}, audience: []string{"principal:alice", "principal:finance-desk"}, signable: []string{"alice"}, alone: true,
		},
		{
			name:    "a clarification: its display's audience is asked and filed",
			payload: `{"kind":"clarification","data":{"questions":[{"id":"q"}]}}`,
			display: &interrupt.Display{Audience: []string{"alice"}},
			admit:   map[string]verdict{"alice": "open:", "bob": "open:", "engine": "forbidden"},
			inboxes: []string{"principal:alice"}, audience: []string{"principal:alice"}, signable: []string{"alice"}, alone: true,
		},
		{
			name:    "a low-confidence escalation: never its agent",
			payload: `{"kind":"low-confidence","data":{"agentId":"agent-7"}}`,
			admit:   map[string]verdict{"alice": "open:", "agent": "forbidden", "engine": "forbidden"},
			inboxes: []string{"anyone"},
		},
		{
			name:    "what a machine answers: anyone the route admits, filed nowhere, told no one",
			payload: `{"kind":"external-event","data":{}}`,
			admit:   map[string]verdict{"alice": "", "engine": ""},
		},
		{
			name:    "a conversation's start: the engine's, filed nowhere",
			payload: `{"kind":"conversation.start","data":{"conversationId":"c"}}`,
			admit:   map[string]verdict{"engine": "forbidden", "alice": "open:"},
		},
	}
	who := map[string]interrupt.Principal{"alice": alice, "bob": bob, "engine": engine, "anon": anon, "agent": agent}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var p interrupt.Payload
			if err := json.Unmarshal([]byte(tt.payload), &p); err != nil {
				t.Fatal(err)
			}
			d := interrupt.NewDeciders(p, tt.display, "engine", tt.refKinds)
			for name, want := range tt.admit {
				e, err := d.Admit(who[name])
				got := string(interrupt.ErrorCode(err))
				if err == nil && e.Via != "" {
					got = e.Via + ":" + e.Ref
					for _, a := range e.Also {
						got += "+" + a.Via + ":" + a.Ref
					}
				}
				if got != want {
					t.Errorf("Admit(%s) = %q, want %q", name, got, want)
				}
			}
			if got := d.Inboxes(); !slices.Equal(got, tt.inboxes) {
				t.Errorf("Inboxes() = %v, want %v", got, tt.inboxes)
			}
			var audience, signable []string
			for _, r := range d.Audience {
				audience = append(audience, r.Inbox())
				if d.Signable(r) {
					signable = append(signable, r.Ref)
				}
			}
			if !slices.Equal(audience, tt.audience) || !slices.Equal(signable, tt.signable) {
				t.Errorf("audience %v, signable %v; want %v, %v", audience, signable, tt.audience, tt.signable)
			}
			if got := d.FiledAlone(); got != tt.alone && len(tt.inboxes) > 0 {
				t.Errorf("FiledAlone() = %v, want %v", got, tt.alone)
			}
		})
	}
}

// TestDecidersInboxesBoundedByBytes: refs JSON escapes six bytes a character (U+2028) are filed
// while their names fit MaxInboxBytes, so the summary listing them fits its item.
func TestDecidersInboxesBoundedByBytes(t *testing.T) {
	t.Parallel()
	var refs []string
	for i := range 100 {
		refs = append(refs, strings.Repeat("\u2028", 200)+string(rune('a'+i%26))+strings.Repeat("x", i/26))
	}
	raw, _ := json.Marshal(map[string]any{"kind": "approval", "data": map[string]any{"approversList": refs}})
	var p interrupt.Payload
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	got := interrupt.NewDeciders(p, nil, "engine", nil).Inboxes()
	size := 0
	for _, name := range got {
		size += interrupt.EncodedLen(name) + 1
	}
	if len(got) == 0 || len(got) == len(refs) || size > interrupt.MaxInboxBytes {
		t.Errorf("%d inboxes of %d encoded bytes, want some, not all, within %d", len(got), size, interrupt.MaxInboxBytes)
	}
}

// TestDecidersUnreachable: a quorum is out of reach once the listed principals who may still
// vote (never the requester, nor one listed twice) cannot make it up; an override principal
// left to vote keeps it in reach; without a list it always is.
func TestDecidersUnreachable(t *testing.T) {
	t.Parallel()
	deciders := func(data string) interrupt.Deciders {
		var p interrupt.Payload
		if err := json.Unmarshal([]byte(`{"kind":"approval","data":{`+data+`}}`), &p); err != nil {
			t.Fatal(err)
		}
		return interrupt.NewDeciders(p, nil, "engine", nil)
	}
	votedBy := func(who ...string) func(string) bool { return func(p string) bool { return slices.Contains(who, p) } }
	nobody := votedBy()
	for _, tt := range []struct {
		name, data string
		approvals  int
		voted      func(string) bool
		alone      func(string) bool
		want       bool
	}{
		{"the requester is no one left to vote", `"approversList":["engine","alice","bob","bob"],"requiredApprovals":2`, 0, votedBy("alice"), nobody, true},
		{"one left makes it up", `"approversList":["alice","bob","carol"],"requiredApprovals":2`, 1, votedBy("alice", "bob"), nobody, false},
		{"an override left to vote", `"approversList":["alice","boss"],"requiredApprovals":3`, 0, votedBy("alice"), votedBy("boss"), false},
		{"no list", `"approverGroupRefs":["ops"],"requiredApprovals":5`, 0, nobody, nobody, false},
	} {
		if got := deciders(tt.data).Unreachable(tt.approvals, tt.voted, tt.alone); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestWhatAProofMayDecide: a proof carrying memberships (a JWT, a session) may decide anything
// the rules admit; a link or a chat click only what names its principals with no group or role,
// and a chat click only an approval.
func TestWhatAProofMayDecide(t *testing.T) {
	t.Parallel()
	named := interrupt.Deciders{Kind: interrupt.KindApproval, Rules: []interrupt.Rule{{Kind: interrupt.RefPrincipal, Refs: []string{"alice"}}}}
	grouped := interrupt.Deciders{Kind: interrupt.KindApproval, Rules: []interrupt.Rule{{Kind: interrupt.RefPrincipal, Refs: []string{"alice"}}, {Kind: interrupt.RefGroup, Refs: []string{"finance"}}}}
	open := interrupt.Deciders{Kind: interrupt.KindApproval}
	question := interrupt.Deciders{Kind: interrupt.KindClarification, Rules: []interrupt.Rule{{Kind: interrupt.RefPrincipal, Refs: []string{"alice"}}}}
	for _, c := range []struct {
		name string
		d    interrupt.Deciders
		via  interrupt.Via
		want bool
	}{
		{"a JWT, a group-bound approval", grouped, interrupt.ViaJWT, true},
		{"a session, an open approval", open, interrupt.ViaSession, true},
		{"a link, a named approval", named, interrupt.ViaLink, true},
		{"a link, a group-bound approval", grouped, interrupt.ViaLink, false},
		{"a link, an open approval", open, interrupt.ViaLink, false},
		{"a link, a named question", question, interrupt.ViaLink, true},
		{"a chat click, a named approval", named, interrupt.ViaChat, true},
		{"a chat click, a group-bound approval", grouped, interrupt.ViaChat, false},
		{"a chat click, a named question", question, interrupt.ViaChat, false},
		{"no known proof, as the weakest: a named approval", named, "", true},
		{"no known proof, as the weakest: a group-bound approval", grouped, "", false},
	} {
		if got := c.d.Accepts(c.via); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if c.via != interrupt.ViaChat {
			continue
		}
		// Admit asks the same predicate of a chat click, whomever and whatever it names.
		d := c.d
		d.Person = true
		_, err := d.Admit(interrupt.Principal{Subject: "alice", Tenant: "acme", Groups: []string{"finance"}, Via: c.via})
		if admitted := err == nil; admitted != c.want {
			t.Errorf("%s: Admit says %v, want admitted %v", c.name, err, c.want)
		}
	}
}

// TestDecidersUndecidable: the one place the quorum is held against approversList at request
// time, each case at the field that makes it so.
func TestDecidersUndecidable(t *testing.T) {
	t.Parallel()
	approval := func(required int, list ...string) interrupt.Payload {
		var p interrupt.Payload
		p.Kind = interrupt.KindApproval
		p.Data.ApproversList, p.Data.RequiredApprovals = list, interrupt.Integer(required)
		return p
	}
	for _, c := range []struct {
		name      string
		payload   interrupt.Payload
		requester string
		path      string
	}{
		{"enough", approval(2, "alice", "bob"), "engine", ""},
		{"no list binds no count", approval(3), "engine", ""},
		{"fewer than the quorum", approval(3, "alice", "bob"), "engine", "/payload/data/requiredApprovals"},
		{"a name twice is one principal", approval(2, "alice", "alice"), "engine", "/payload/data/requiredApprovals"},
		{"only its requester", approval(1, "alice"), "alice", "/payload/data/approversList"},
		{"short once its requester is left out", approval(2, "alice", "bob"), "alice", "/payload/data/approversList"},
	} {
		got := interrupt.NewDeciders(c.payload, nil, c.requester, nil).Undecidable()
		if got.Path != c.path || (c.path != "") != (got.Message != "") {
			t.Errorf("%s: %+v, want at %q", c.name, got, c.path)
		}
	}
}
