package host

import (
	"testing"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// TestRelease: the release rule alone, vote by vote: what each action adds to the tally and
// whether the gate opens.
func TestRelease(t *testing.T) {
	tally := func(approvals, rejections, required int) interrupt.Tally {
		return interrupt.Tally{Approvals: approvals, Rejections: rejections, Required: required}
	}
	tests := []struct {
		name     string
		policy   string
		before   interrupt.Tally
		action   interrupt.Action
		override bool
		after    interrupt.Tally
		released bool
		err      bool
	}{
		{"accept short of the quorum", "", tally(0, 0, 2), interrupt.ActionAccept, false, tally(1, 0, 2), false, false},
		{"accept reaching the quorum", "", tally(1, 0, 2), interrupt.ActionAccept, false, tally(2, 0, 2), true, false},
		{"edit-accept counts as accept", "", tally(1, 0, 2), interrupt.ActionEditAccept, false, tally(2, 0, 2), true, false},
		{"override accept", "", tally(0, 0, 5), interrupt.ActionAccept, true, tally(1, 0, 5), true, false},
		{"refine at once", "", tally(0, 0, 3), interrupt.ActionRefine, false, tally(0, 0, 3), true, false},
		{"reject under the default policy", "", tally(2, 0, 3), interrupt.ActionReject, false, tally(2, 1, 3), true, false},
		{"reject under single-veto", interrupt.PolicySingleVeto, tally(0, 0, 3), interrupt.ActionReject, false, tally(0, 1, 3), true, false},
		{"reject at half under majority", interrupt.PolicyMajority, tally(0, 0, 2), interrupt.ActionReject, false, tally(0, 1, 2), false, false},
		{"reject past half under majority", interrupt.PolicyMajority, tally(0, 1, 2), interrupt.ActionReject, false, tally(0, 2, 2), true, false},
		{"override reject under majority", interrupt.PolicyMajority, tally(0, 0, 4), interrupt.ActionReject, true, tally(0, 1, 4), true, false},
		{"an unknown policy", "unanimity", tally(0, 0, 1), interrupt.ActionReject, false, tally(0, 1, 1), false, true},
		{"ask is no vote", "", tally(0, 0, 1), interrupt.ActionAsk, false, tally(0, 0, 1), false, true},
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
