package interrupt

import (
	"cmp"
	"testing"
	"time"
)

// TestDelegation pins the delegation rule as Admit and Count judge it: a delegate decides
// what its delegator may decide, as the delegator's vote (one vote a place, one a person), the
// delegator still decides, nothing passes on, and no one decides what they or their delegator
// requested.
func TestDelegation(t *testing.T) {
	t.Parallel()
	until := time.Date(2026, 12, 14, 0, 0, 0, 0, time.UTC)
	approval := func(requester string, required int, bypass bool, groups []string, list ...string) Deciders {
		var p Payload
		p.Kind = KindApproval
		p.Data.ApproversList, p.Data.RequiredApprovals, p.Data.OverrideBypassesQuorum, p.Data.ApproverGroupRefs = list, Integer(required), bypass, groups
		return NewDeciders(p, nil, requester, nil)
	}
	forAlice := Delegated{Delegator: "alice", Until: until}
	as := func(sub string, via Via, held ...Delegated) Principal {
		return Principal{Subject: sub, Tenant: "acme", Via: via, For: held}
	}
	vote := func(who, behalf string) Vote { return Vote{Principal: who, OnBehalfOf: behalf, Action: ActionAccept} }
	handed := approval("engine", 1, false, nil, "alice")
	handed.Handed = []Handing{{Principal: "alice", To: "mgr", At: until}}
	twice := approval("engine", 2, false, nil, "alice", "carol")
	twice.Handed = []Handing{{Principal: "alice", To: "mgr", At: until}, {Principal: "carol", To: "mgr", At: until}}
	for _, c := range []struct {
		name   string
		d      Deciders
		p      Principal
		votes  []Vote
		admit  Code   // Admit's error code, "" admitted
		behalf string // Eligibility.OnBehalfOf
		count  Code   // Count's error code after an admission
		place  string // whose place the vote fills, where not behalf's
	}{
		{"bob for alice, first", approval("engine", 2, false, nil, "alice", "carol"), as("bob", ViaJWT, forAlice), nil, "", "alice", "", ""},
		{"alice after bob voted for her", approval("engine", 2, false, nil, "alice", "carol"), as("alice", ViaSession), []Vote{vote("bob", "alice")}, "", "", CodeAlreadyVoted, ""},
		{"bob after alice voted", approval("engine", 2, false, nil, "alice", "carol"), as("bob", ViaLink, forAlice), []Vote{vote("alice", "")}, "", "alice", CodeAlreadyVoted, ""},
		{"carol beside bob's vote for alice", approval("engine", 2, false, nil, "alice", "carol"), as("carol", ViaJWT), []Vote{vote("bob", "alice")}, "", "", "", ""},
		{"dave holds nothing", approval("engine", 2, false, nil, "alice", "carol"), as("dave", ViaJWT), nil, CodeNotEligible, "", "", ""},
		{"no cascade: dave holds bob's, not alice's", approval("engine", 2, false, nil, "alice", "carol"), as("dave", ViaJWT, Delegated{Delegator: "bob", Until: until}), nil, CodeNotEligible, "", "", ""},
		{"a kind the delegation leaves out", approval("engine", 1, false, nil, "alice"), as("bob", ViaJWT, Delegated{Delegator: "alice", Kinds: []Kind{KindClarification}}), nil, CodeNotEligible, "", "", ""},
		{"a kind the delegation names", approval("engine", 1, false, nil, "alice"), as("bob", ViaJWT, Delegated{Delegator: "alice", Kinds: []Kind{KindApproval}}), nil, "", "alice", "", ""},
		{"what the delegator requested", approval("alice", 1, false, nil, "alice", "carol"), as("bob", ViaJWT, forAlice), nil, CodeNotEligible, "", "", ""},
		{"what the delegate requested", approval("bob", 1, false, nil, "alice", "carol"), as("bob", ViaJWT, forAlice), nil, CodeForbidden, "", "", ""},
		{"one who may decide in their own right votes as themself", approval("engine", 2, false, nil, "alice", "bob"), as("bob", ViaJWT, forAlice), nil, "", "", "", ""},
		{"and only once", approval("engine", 2, false, nil, "alice", "bob"), as("bob", ViaJWT, forAlice), []Vote{vote("bob", "")}, "", "", CodeAlreadyVoted, ""},
		{"a person's one vote: bob for alice, then for dave", approval("engine", 3, false, nil, "alice", "dave", "carol"), as("bob", ViaJWT, forAlice, Delegated{Delegator: "dave"}), []Vote{vote("bob", "alice")}, "", "alice", CodeAlreadyVoted, ""},
		{"the place of an escalation handed twice still free", twice, as("mgr", ViaJWT), []Vote{vote("alice", "")}, "", "alice", "", "carol"},
		{"a group the delegator held when they set it", approval("engine", 1, false, []string{"finance"}), as("bob", ViaSession, Delegated{Delegator: "alice", Groups: []string{"finance"}}), nil, "", "alice", "", ""},
		{"a link carries no group of the delegator's", approval("engine", 1, false, []string{"finance"}), as("bob", ViaLink, Delegated{Delegator: "alice", Groups: []string{"finance"}}), nil, CodeNotEligible, "", "", ""},
		{"a delegation an administrator set carries no group", approval("engine", 1, false, []string{"finance"}), as("bob", ViaSession, forAlice), nil, CodeNotEligible, "", "", ""},
		{"a chat click for alice, named", approval("engine", 2, false, nil, "alice", "carol"), as("bob", ViaChat, forAlice), nil, "", "alice", "", ""},
		{"an escalation handed alice's place to mgr", handed, as("mgr", ViaJWT), nil, "", "alice", "", ""},
		{"but not to anyone else", handed, as("bob", ViaJWT), nil, CodeNotEligible, "", "", ""},
	} {
		e, err := c.d.Admit(c.p)
		if ErrorCode(err) != c.admit || (c.admit == "" && err != nil) {
			t.Errorf("%s: Admit: %v, want %q", c.name, err, c.admit)
			continue
		}
		if err != nil {
			continue
		}
		if e.OnBehalfOf != c.behalf {
			t.Errorf("%s: on behalf of %q, want %q", c.name, e.OnBehalfOf, c.behalf)
		}
		counted, err := c.d.Count(c.p, e, ActionAccept, c.votes, nil)
		if ErrorCode(err) != c.count || (c.count == "" && err != nil) {
			t.Errorf("%s: Count: %v, want %q", c.name, err, c.count)
		}
		if want := cmp.Or(c.place, c.behalf); err == nil && counted.Eligibility.OnBehalfOf != want {
			t.Errorf("%s: the vote fills %q's place, want %q's", c.name, counted.Eligibility.OnBehalfOf, want)
		}
		if want := cmp.Or(c.place, c.behalf); err == nil && c.d.FreePlace(c.p, e, c.votes).OnBehalfOf != want {
			t.Errorf("%s: FreePlace says %q, want %q", c.name, c.d.FreePlace(c.p, e, c.votes).OnBehalfOf, want)
		}
	}
}

// TestADelegateNeverOverrides holds the override to the override principal's own deliberate
// act: a delegate of one votes once, in their place.
func TestADelegateNeverOverrides(t *testing.T) {
	t.Parallel()
	var p Payload
	p.Kind = KindApproval
	p.Data.ApproversList, p.Data.RequiredApprovals, p.Data.OverrideBypassesQuorum = []string{"boss", "alice", "carol"}, 2, true
	d := NewDeciders(p, nil, "engine", nil)
	bob := Principal{Subject: "bob", Via: ViaJWT, For: []Delegated{{Delegator: "boss"}}}
	e, err := d.Admit(bob)
	if err != nil || e.OnBehalfOf != "boss" {
		t.Fatalf("bob for boss: %+v %v", e, err)
	}
	got, err := d.Count(bob, e, ActionAccept, nil, []string{"boss", "bob"})
	if err != nil || got.Released || got.Override {
		t.Errorf("bob's vote for the override principal: %+v %v, want one vote that releases nothing", got, err)
	}
}
