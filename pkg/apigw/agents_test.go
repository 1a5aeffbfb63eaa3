package apigw_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/apigw"
)

// TestConfigureRunShapes: the spec's configurable.run.escalationThreshold and its short form
// both configure the run; both at once, neither, or a threshold out of range is 400 at the
// member sent, and changes nothing.
func TestConfigureRunShapes(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ops := caller{"ops", "acme", []string{apigw.ScopeRunsConfigure}}
	tests := []struct {
		name, body string
		status     int
		// want is the threshold answered, or the problem's path.
		want any
	}{
		{"the spec's shape", `{"configurable":{"run":{"escalationThreshold":0.5}}}`, 200, 0.5},
		{"the short form", `{"escalationThreshold":0.25}`, 200, 0.25},
		{"zero: never escalate", `{"configurable":{"run":{"escalationThreshold":0}}}`, 200, 0.0},
		{"both", `{"escalationThreshold":0.5,"configurable":{"run":{"escalationThreshold":0.5}}}`, 400, "/escalationThreshold"},
		{"neither", `{}`, 400, "/configurable/run/escalationThreshold"},
		{"no run", `{"configurable":{}}`, 400, "/configurable/run/escalationThreshold"},
		{"out of range in the spec's shape", `{"configurable":{"run":{"escalationThreshold":1.5}}}`, 400, "/configurable/run/escalationThreshold"},
		{"out of range in the short form", `{"escalationThreshold":-1}`, 400, "/escalationThreshold"},
		{"another setting", `{"configurable":{"run":{"escalationThreshold":0.5,"maxSteps":3}}}`, 400, nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := fmt.Sprintf("cfg-%d", i)
			r := invoke(t, s.fn("configure-run"), call{who: &ops, route: "PUT /runs/{runId}/configurable", params: map[string]string{"runId": run}, body: tt.body})
			if r.Status != tt.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tt.status)
			}
			if tt.status != 200 {
				if path, ok := tt.want.(string); ok && !hasPath(r.problem(t), path) {
					t.Errorf("%s, want a problem at %s", r.Body, path)
				}
				if got := s.commits(t, "acme", run); len(got) != 0 {
					t.Errorf("a refused configuration wrote %d commits", len(got))
				}
				return
			}
			var cfg struct{ EscalationThreshold float64 }
			if err := json.Unmarshal(r.Body, &cfg); err != nil || cfg.EscalationThreshold != tt.want {
				t.Errorf("%s, want threshold %v", r.Body, tt.want)
			}
		})
	}
}
