package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
