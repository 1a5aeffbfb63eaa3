package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestDeadlinesAct: an interrupt with timeoutMs 1500 gets exactly one interrupt.expired from
// the stack's scheduled expiry-sweep (every second under make test; every minute under make
// run), with nothing but the schedule acting on it; then a resolve answers 409 and its token 410.
func TestDeadlinesAct(t *testing.T) {
	eng := jwt(t, everyone)
	run := newRun("deadline")
	a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"n","payload":{"kind":"custom","key":"k","timeoutMs":1500,"data":{"customKind":"x"}},"token":{"intent":"resolve"}}`)
	var created struct{ Tokens []struct{ Token string } }
	a.json(t, &created)
	if a.Status != 201 || len(created.Tokens) != 1 {
		t.Fatalf("request: %d %s", a.Status, a.Body)
	}
	// The scheduler is another process: watch the log until its sweep has acted, for at most
	// 20 periods of a minute's schedule shortened to a second.
	var expired []json.RawMessage
	for give := time.Now().Add(20 * time.Second); len(expired) == 0; {
		if time.Now().After(give) {
			t.Fatal("no interrupt.expired 20 s after the deadline: is the stack's scheduler running (STACK_SCHEDULE_PERIOD)?")
		}
		<-time.After(250 * time.Millisecond)
		var page struct {
			Events []struct {
				Type    string
				Payload json.RawMessage
			}
		}
		do(t, "GET", "/runs/"+run+"/events", eng, "").json(t, &page)
		for _, e := range page.Events {
			if e.Type == "interrupt.expired" {
				expired = append(expired, e.Payload)
			}
		}
	}
	if len(expired) != 1 || !strings.Contains(string(expired[0]), `"kind":"custom"`) {
		t.Errorf("expired: %s", expired)
	}
	if a := do(t, "POST", "/runs/"+run+"/interrupts/n", eng, `{"resumeValue":{}}`); a.Status != 409 {
		t.Errorf("a resolve after the expiry: %d %s", a.Status, a.Body)
	}
	if a := do(t, "POST", "/interrupts/"+created.Tokens[0].Token, "", `{"resumeValue":{}}`); a.Status != 410 {
		t.Errorf("its token after the expiry: %d %s", a.Status, a.Body)
	}
}
