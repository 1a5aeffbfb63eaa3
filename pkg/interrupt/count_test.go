package interrupt

import (
	"testing"
)

// TestRelease: the release rule alone, vote by vote: what each action adds to the tally and
// whether the gate opens.
func TestRelease(t *testing.T) {
	tally := func(approvals, rejections, required int) Tally {
		return Tally{Approvals: approvals, Rejections: rejections, Required: required}
	}
	tests := []struct {
		name     string
		policy   string
		before   Tally
		action   Action
		override bool
		after    Tally
		released bool
		err      bool
	}{
		{"accept short of the quorum", "", tally(0, 0, 2), ActionAccept, false, tally(1, 0, 2), false, false},
		{"accept reaching the quorum", "", tally(1, 0, 2), ActionAccept, false, tally(2, 0, 2), true, false},
		{"edit-accept counts as accept", "", tally(1, 0, 2), ActionEditAccept, false, tally(2, 0, 2), true, false},
		{"override accept", "", tally(0, 0, 5), ActionAccept, true, tally(1, 0, 5), true, false},
		{"refine at once", "", tally(0, 0, 3), ActionRefine, false, tally(0, 0, 3), true, false},
		{"reject under the default policy", "", tally(2, 0, 3), ActionReject, false, tally(2, 1, 3), true, false},
		{"reject under single-veto", PolicySingleVeto, tally(0, 0, 3), ActionReject, false, tally(0, 1, 3), true, false},
		{"reject at half under majority", PolicyMajority, tally(0, 0, 2), ActionReject, false, tally(0, 1, 2), false, false},
		{"reject past half under majority", PolicyMajority, tally(0, 1, 2), ActionReject, false, tally(0, 2, 2), true, false},
		{"override reject under majority", PolicyMajority, tally(0, 0, 4), ActionReject, true, tally(0, 1, 4), true, false},
		{"an unknown policy", "unanimity", tally(0, 0, 1), ActionReject, false, tally(0, 1, 1), false, true},
		{"ask is no vote", "", tally(0, 0, 1), ActionAsk, false, tally(0, 0, 1), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after, released, err := release(tt.policy, tt.before, tt.action, tt.override)
			if (err != nil) != tt.err || released != tt.released || (err == nil && after != tt.after) {
				t.Errorf("release = %+v %v %v, want %+v %v (error %v)", after, released, err, tt.after, tt.released, tt.err)
			}
		})
	}
}

// TestCount: one vote judged by the model, after Admit: one vote per principal, the quorum,
// the rejection policy, the override (a deliberate proof only) and a quorum out of reach.
func TestCount(t *testing.T) {
	t.Parallel()
	approval := func(required int, policy string, bypass bool, list ...string) Deciders {
		var p Payload
		p.Kind = KindApproval
		p.Data.ApproversList, p.Data.RequiredApprovals, p.Data.RejectionPolicy, p.Data.OverrideBypassesQuorum = list, Integer(required), policy, bypass
		return NewDeciders(p, nil, "engine", nil)
	}
	who := func(sub string, via Via) Principal { return Principal{Subject: sub, Tenant: "acme", Via: via} }
	voted := func(who string, a Action) Vote { return Vote{Principal: who, Action: a} }
	overrides := []string{"boss"}
	for _, c := range []struct {
		name     string
		d        Deciders
		p        Principal
		action   Action
		votes    []Vote
		code     Code
		released bool
		override bool
		reason   string
		tally    Tally
	}{
		{"a first approval of two", approval(2, "", false, "alice", "bob"), who("alice", ViaJWT), ActionAccept, nil, "", false, false, "", Tally{1, 0, 2}},
		{"the second releases", approval(2, "", false, "alice", "bob"), who("bob", ViaChat), ActionAccept, []Vote{voted("alice", ActionAccept)}, "", true, false, "", Tally{2, 0, 2}},
		{"a second vote of one principal", approval(2, "", false, "alice", "bob"), who("alice", ViaLink), ActionReject, []Vote{voted("alice", ActionAccept)}, CodeAlreadyVoted, false, false, "", Tally{}},
		{"an override by a session", approval(3, "", true, "boss", "alice", "bob"), who("boss", ViaSession), ActionAccept, nil, "", true, true, "", Tally{1, 0, 3}},
		{"an override's chat click is one vote", approval(3, "", true, "boss", "alice", "bob"), who("boss", ViaChat), ActionAccept, nil, "", false, false, "", Tally{1, 0, 3}},
		{"no override where the request allows none", approval(3, "", false, "boss", "alice", "bob"), who("boss", ViaJWT), ActionAccept, nil, "", false, false, "", Tally{1, 0, 3}},
		{"a rejection under majority, at half", approval(2, PolicyMajority, false, "alice", "bob", "carol"), who("alice", ViaJWT), ActionReject, nil, "", false, false, "", Tally{0, 1, 2}},
		{"a rejection leaving the quorum out of reach", approval(2, PolicyMajority, false, "alice", "bob"), who("alice", ViaJWT), ActionReject, nil, "", true, false, ReasonQuorumUnreachable, Tally{0, 1, 2}},
		{"refine releases at once", approval(2, "", false, "alice", "bob"), who("alice", ViaJWT), ActionRefine, nil, "", true, false, "", Tally{0, 0, 2}},
	} {
		got, err := c.d.Count(c.p, Eligibility{}, c.action, c.votes, overrides)
		if ErrorCode(err) != c.code || (c.code == "" && err != nil) {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
			continue
		}
		if err == nil && (got.Released != c.released || got.Override != c.override || got.Reason != c.reason || got.Tally != c.tally) {
			t.Errorf("%s: %+v, want released %v override %v reason %q tally %+v", c.name, got, c.released, c.override, c.reason, c.tally)
		}
	}
}
