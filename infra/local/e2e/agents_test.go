package e2e

import (
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/internal/devjwt"
)

// TestLowConfidenceEscalation: a run configured with threshold 0.8 gets, for a decision at
// 0.41, agent.decided, node.suspended and the low-confidence interrupt in one commit, and waits
// for input; at 0.93, only agent.decided.
func TestLowConfidenceEscalation(t *testing.T) {
	eng := jwt(t, engine)
	run := newRun("agent")
	ops := jwt(t, devjwt.Token{Subject: "ops", Tenant: "acme", Scopes: []string{"runs:configure"}})
	if a := do(t, "PUT", "/runs/"+run+"/configurable", ops, `{"configurable":{"run":{"escalationThreshold":0.8}}}`); a.Status != 200 {
		t.Fatalf("configure: %d %s", a.Status, a.Body)
	}
	a := do(t, "POST", "/runs/"+run+"/agent-decisions", eng, `{"nodeId":"classify","key":"d1","agentId":"triage","confidence":0.41,"decision":{"label":"billing"}}`)
	if a.Status != 201 || !strings.Contains(string(a.Body), `"escalated":true`) {
		t.Fatalf("a decision at 0.41: %d %s", a.Status, a.Body)
	}
	var page struct {
		Events []struct {
			Seq  int
			Type string
		}
	}
	do(t, "GET", "/runs/"+run+"/events?after=1", eng, "").json(t, &page)
	var types []string
	for _, e := range page.Events {
		if e.Seq == 2 {
			types = append(types, e.Type)
		}
	}
	if strings.Join(types, " ") != "agent.decided node.suspended interrupt.requested" {
		t.Errorf("commit 2 holds %v", types)
	}
	var snap struct{ Status string }
	do(t, "GET", "/runs/"+run, eng, "").json(t, &snap)
	if snap.Status != "waiting-input" {
		t.Errorf("snapshot %s", snap.Status)
	}
	a = do(t, "POST", "/runs/"+run+"/agent-decisions", eng, `{"nodeId":"route","key":"d2","agentId":"triage","confidence":0.93,"decision":"queue-a"}`)
	if a.Status != 201 || !strings.Contains(string(a.Body), `"escalated":false`) {
		t.Errorf("a decision at 0.93: %d %s", a.Status, a.Body)
	}
	if a := do(t, "POST", "/runs/"+run+"/agent-decisions", eng, `{"nodeId":"route","key":"d3","agentId":"triage","confidence":"high","decision":1}`); a.Status != 400 || !strings.Contains(string(a.Body), `"/confidence"`) {
		t.Errorf("a confidence that is no number: %d %s", a.Status, a.Body)
	}
}
