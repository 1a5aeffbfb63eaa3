package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/infra/local/faults"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
)

// TestTheClientRidesOutFaults: with the stack's DynamoDB throttling 80% of its puts (the host
// answers 503 unavailable when the SDK's own retries run out), the engine's client requests an
// approval and resolves it as if nothing happened, its retries answering what the first attempt
// would have, and the run's log holds one request and one resolution; its bearer is refreshed
// through a source when the first one it gives is refused.
func TestTheClientRidesOutFaults(t *testing.T) {
	localaws.NeedsStack(t)
	ctx := context.Background()
	tenant := newRun("client")
	// A source as an OAuth client's: the token it holds until told it was refused ("expired"
	// here, which the gateway's authorizer refuses), then a new one, kept.
	refreshed, current := 0, "expired"
	src := client.BearerFunc(func(_ context.Context, refresh bool) (string, error) {
		if refresh {
			refreshed++
			current = jwt(t, devjwt.Token{Subject: "engine", Tenant: tenant, Scopes: []string{"interrupts:write", "runs:read", "approvals:respond"}})
		}
		return current, nil
	})
	eng := client.New(gatewayURL(), client.WithBearerSource(src), client.WithRetries(10))
	setFaults(t, faults.Config{"dynamodb": {{Ops: []string{"PutItem"}, Throttle: 0.8}}})
	run := newRun("faulty")
	payload := json.RawMessage(`{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept"],"approversList":["bob"]}}`)
	created, err := eng.Request(ctx, run, "approve", payload, nil)
	if err != nil || !created.Created || created.Status != "pending" {
		t.Fatalf("request: %+v %v", created, err)
	}
	bob := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "bob", Tenant: tenant, Scopes: []string{"approvals:respond"}})), client.WithRetries(10))
	res, err := bob.Resolve(ctx, run, "approve", map[string]any{"action": "accept", "decidedAt": "2026-12-02T09:00:00Z"})
	if err != nil || res.Status != "resolved" {
		t.Fatalf("resolve: %+v %v", res, err)
	}
	injected := faultCounts(t)
	call{method: "DELETE", path: "/local-faults"}.must(t)
	page, err := eng.Events(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range page.Events {
		types = append(types, e.Type)
	}
	if got := strings.Join(types, " "); got != "interrupt.requested approval.requested interrupt.voted interrupt.resolved approval.resolved" {
		t.Errorf("the log holds %s", got)
	}
	again, err := eng.Request(ctx, run, "approve", payload, nil)
	if err != nil || again.Created || again.Status != "resolved" {
		t.Errorf("the request again: %+v %v", again, err)
	}
	if injected["dynamodb throttle"] == 0 || refreshed != 1 {
		t.Errorf("faults injected %v, bearer refreshed %d times", injected, refreshed)
	}
}

// TestAwaitsTellWhatHappened: the client awaits an interrupt by its id; a node or interrupt the
// run never requested, or a run that does not exist, is an error at once, not a wait; an
// interrupt its run's cancel ended answers the cancel, as ErrCancelled beside the outcome.
func TestAwaitsTellWhatHappened(t *testing.T) {
	localaws.NeedsStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tenant := newRun("await")
	eng := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "engine", Tenant: tenant, Scopes: []string{"interrupts:write", "runs:read"}})))
	bob := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "bob", Tenant: tenant, Scopes: []string{"approvals:respond"}})))
	run := newRun("awaited")
	payload := json.RawMessage(`{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept"],"approversList":["bob"]}}`)
	req, err := eng.Request(ctx, run, "approve", payload, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Resolve(ctx, run, "approve", map[string]any{"action": "accept", "decidedAt": "2026-12-02T09:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	out, err := eng.AwaitInterrupt(ctx, run, req.InterruptID, nil)
	if err != nil || out.Status != "resolved" || out.NodeID != "approve" || !strings.Contains(string(out.ResumeValue), `"decidedBy":"bob"`) {
		t.Errorf("await by id: %+v %v", out, err)
	}
	for name, await := range map[string]func() error{
		"a mistyped node":      func() error { _, err := eng.Await(ctx, run, "aprove", nil); return err },
		"an unknown interrupt": func() error { _, err := eng.AwaitInterrupt(ctx, run, "int_nope", nil); return err },
	} {
		if err := await(); !errors.Is(err, client.ErrNotRequested) {
			t.Errorf("%s: %v, want ErrNotRequested", name, err)
		}
	}
	if _, err := eng.Await(ctx, newRun("nowhere"), "approve", nil); !errors.Is(err, client.ErrNoSuchRun) {
		t.Errorf("an unknown run: %v, want ErrNoSuchRun", err)
	}
	ended := newRun("ended")
	if _, err := eng.Request(ctx, ended, "approve", payload, nil); err != nil {
		t.Fatal(err)
	}
	if err := eng.Cancel(ctx, ended, "withdrawn"); err != nil {
		t.Fatal(err)
	}
	if out, err := eng.Await(ctx, ended, "approve", nil); !errors.Is(err, client.ErrCancelled) || out.Status != "cancelled" || out.InterruptID == "" {
		t.Errorf("an interrupt its run's cancel ended: %+v %v", out, err)
	}
}
