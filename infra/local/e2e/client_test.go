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

// TestAwaitsTellWhatHappened: the client requests a typed 2-of-2 approval, awaits it by its id
// and decodes the decision and every vote; a node or interrupt the
// run never requested, or a run that does not exist, is an error at once, not a wait; an
// interrupt its run's cancel ended answers the cancel, as ErrCancelled beside the outcome.
func TestAwaitsTellWhatHappened(t *testing.T) {
	localaws.NeedsStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tenant := newRun("await")
	eng := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "engine", Tenant: tenant, Scopes: []string{"interrupts:write", "runs:read"}})))
	bob := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "bob", Tenant: tenant, Scopes: []string{"approvals:respond"}})))
	carol := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "carol", Tenant: tenant, Scopes: []string{"approvals:respond"}})))
	run := newRun("awaited")
	// A typed 2-of-2 approval, awaited by its id, every vote decoded.
	payload, err := client.Payload(client.Approval{ArtifactID: "inv-1", ArtifactType: "invoice", Title: "Pay", Actions: []string{"accept", "reject"},
		RequiredApprovals: 2, ApproversList: []string{"bob", "carol"}}, "k", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	req, err := eng.Request(ctx, run, "approve", payload, nil)
	if err != nil {
		t.Fatal(err)
	}
	for who, c := range map[string]*client.Client{"bob": bob, "carol": carol} {
		if _, err := c.Resolve(ctx, run, "approve", client.Decision{Action: "accept", DecidedAt: "2026-12-02T09:00:00Z", Feedback: "fine by " + who}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := eng.AwaitInterrupt(ctx, run, req.InterruptID, nil)
	if err != nil || out.Status != "resolved" || out.NodeID != "approve" || len(out.Votes) != 2 {
		t.Fatalf("await by id: %+v %v", out, err)
	}
	decided, err := client.Decode[client.Decision](out.ResumeValue)
	if err != nil || decided.Action != "accept" || decided.DecidedBy == "" {
		t.Errorf("the decision: %+v %v", decided, err)
	}
	for _, v := range out.Votes {
		d, err := client.Decode[client.Decision](v.ResumeValue)
		if err != nil || v.Action != "accept" || d.Feedback != "fine by "+v.Principal {
			t.Errorf("a vote: %+v %+v %v", v, d, err)
		}
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
	// Two interrupts of one run at two nodes: the first to end, then both.
	two := newRun("two")
	var ids []string
	for _, node := range []string{"n1", "n2"} {
		in, err := eng.Request(ctx, two, node, json.RawMessage(`{"kind":"approval","key":"`+node+`","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept"],"approversList":["bob"]}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, in.InterruptID)
	}
	if _, err := bob.Resolve(ctx, two, "n2", map[string]any{"action": "accept", "decidedAt": "2026-12-02T09:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	if first, err := eng.AwaitAny(ctx, two, ids, nil); err != nil || first.InterruptID != ids[1] || first.Status != "resolved" {
		t.Errorf("await any: %+v %v", first, err)
	}
	if _, err := bob.Resolve(ctx, two, "n1", map[string]any{"action": "accept", "decidedAt": "2026-12-02T09:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	if all, err := eng.AwaitAll(ctx, two, ids, nil); err != nil || len(all) != 2 || all[ids[0]].Status != "resolved" || all[ids[1]].NodeID != "n2" {
		t.Errorf("await all: %+v %v", all, err)
	}
	if _, err := eng.AwaitAll(ctx, two, []string{ids[0], "int_nope"}, nil); !errors.Is(err, client.ErrNotRequested) {
		t.Errorf("await all with an unknown id: %v", err)
	}
	ended := newRun("ended")
	if _, err := eng.Request(ctx, ended, "approve", json.RawMessage(`{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["accept"],"approversList":["bob"]}}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := eng.Cancel(ctx, ended, "withdrawn"); err != nil {
		t.Fatal(err)
	}
	if out, err := eng.Await(ctx, ended, "approve", nil); !errors.Is(err, client.ErrCancelled) || out.Status != "cancelled" || out.InterruptID == "" {
		t.Errorf("an interrupt its run's cancel ended: %+v %v", out, err)
	}
}

// TestTheClientsOtherCalls: the client's calls beyond the engine's loop, through the gateway:
// what the host advertises, a run's threshold and an agent's decision below it (a low-confidence
// interrupt, once per key), and a contact written, read, listed and deleted.
func TestTheClientsOtherCalls(t *testing.T) {
	localaws.NeedsStack(t)
	ctx := context.Background()
	tenant := newRun("calls")
	c := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "ops", Tenant: tenant,
		Scopes: []string{"interrupts:write", "runs:read", "runs:configure", "contacts:manage"}})))
	d, err := c.Discover(ctx)
	if err != nil || d.Implementation.Name != "interrupthost" || len(d.Interrupt.TokenAlgs) == 0 {
		t.Errorf("discovery: %+v %v", d, err)
	}
	run := newRun("agent")
	if cfg, err := c.Configure(ctx, run, 0.9); err != nil || cfg.EscalationThreshold != 0.9 {
		t.Errorf("configure: %+v %v", cfg, err)
	}
	decision := client.AgentDecision{NodeID: "triage", Key: "d1", AgentID: "agent-7", Confidence: 0.5, Decision: map[string]string{"route": "refund"}}
	first, err := c.Decide(ctx, run, decision)
	again, err2 := c.Decide(ctx, run, decision)
	if err != nil || err2 != nil || !first.Escalated || first.InterruptID == "" || again.InterruptID != first.InterruptID {
		t.Errorf("decide: %+v %v, again %+v %v", first, err, again, err2)
	}
	if _, err := c.PutContact(ctx, "principal", "alice", "alice@"+tenant+".example.com", "Alice", ""); err != nil {
		t.Fatal(err)
	}
	got, err := c.Contact(ctx, "principal", "alice")
	page, err2 := c.Contacts(ctx, "", 10)
	if err != nil || err2 != nil || got.Name != "Alice" || len(page.Contacts) != 1 {
		t.Errorf("contact %+v %v, page %+v %v", got, err, page, err2)
	}
	if err := c.DeleteContact(ctx, "principal", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Contact(ctx, "principal", "alice"); !client.IsCode(err, "not_found") {
		t.Errorf("a deleted contact: %v", err)
	}
}
