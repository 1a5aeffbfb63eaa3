package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/infra/local/faults"
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
	if n := expiredEvents(t, run); n != 1 {
		t.Errorf("%d interrupt.expired events", n)
	}
	if a := do(t, "POST", "/runs/"+run+"/interrupts/n", eng, `{"resumeValue":{}}`); a.Status != 409 {
		t.Errorf("a resolve after the expiry: %d %s", a.Status, a.Body)
	}
	if a := do(t, "POST", "/interrupts/"+created.Tokens[0].Token, "", `{"resumeValue":{}}`); a.Status != 410 {
		t.Errorf("its token after the expiry: %d %s", a.Status, a.Body)
	}
}

// TestAHeldCommitLosesNoDeadline: with every DynamoDB put held 3 s (what throttling and lost
// answers do to a put the SDK retries), a request files its due entry 3 s after its time and
// its commit lands 3 s later, while sweeps every second read the entry, past its deadline,
// before the log holds its interrupt. The sweep keeps the entry until the commit lands, then
// expires the interrupt once. (Before, the first sweep to read it took the missing interrupt for
// "never committed" and passed the entry over, and the deadline was never recorded: TestChaos's
// lost deadline.)
func TestAHeldCommitLosesNoDeadline(t *testing.T) {
	eng := jwt(t, everyone)
	run := newRun("held-commit")
	setFaults(t, faults.Config{"dynamodb": {{Ops: []string{"PutItem"}, LatencyMs: 3000}}})
	a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"n","payload":{"kind":"custom","key":"k","timeoutMs":500,"data":{"customKind":"x"}}}`)
	call{method: "DELETE", path: "/local-faults"}.must(t)
	if a.Status != 201 {
		t.Fatalf("request: %d %s", a.Status, a.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := newClient(t, everyone).Await(ctx, run, "n", nil); !errors.Is(err, client.ErrExpired) {
		t.Fatalf("no interrupt.expired 20 s after a deadline whose commit was held: %v", err)
	}
	if n := expiredEvents(t, run); n != 1 {
		t.Errorf("%d interrupt.expired events, want 1", n)
	}
}

// expiredEvents counts the interrupt.expired events of run's first page.
func expiredEvents(t *testing.T, run string) int {
	t.Helper()
	page, err := newClient(t, everyone).Events(context.Background(), run, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range page.Events {
		if e.Type == "interrupt.expired" {
			n++
		}
	}
	return n
}
