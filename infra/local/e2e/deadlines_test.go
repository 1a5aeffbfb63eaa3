package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/client"
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
	// The scheduler is another process: await the outcome from the log, for at most 20
	// periods of a minute's schedule shortened to a second.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := newClient(t, everyone).Await(ctx, run, "n", nil)
	if !errors.Is(err, client.ErrExpired) {
		t.Fatalf("no interrupt.expired 20 s after the deadline (is the stack's scheduler running? STACK_SCHEDULE_PERIOD): %v", err)
	}
	if out.Status != "expired" || out.Event.Type != "interrupt.expired" || !strings.Contains(string(out.Event.Payload), `"kind":"custom"`) {
		t.Errorf("outcome %+v", out)
	}
	page, err := newClient(t, everyone).Events(context.Background(), run, 0)
	if err != nil {
		t.Fatal(err)
	}
	expired := 0
	for _, e := range page.Events {
		if e.Type == "interrupt.expired" {
			expired++
		}
	}
	if expired != 1 {
		t.Errorf("%d interrupt.expired events", expired)
	}
	if a := do(t, "POST", "/runs/"+run+"/interrupts/n", eng, `{"resumeValue":{}}`); a.Status != 409 {
		t.Errorf("a resolve after the expiry: %d %s", a.Status, a.Body)
	}
	if a := do(t, "POST", "/interrupts/"+created.Tokens[0].Token, "", `{"resumeValue":{}}`); a.Status != 410 {
		t.Errorf("its token after the expiry: %d %s", a.Status, a.Body)
	}
}
