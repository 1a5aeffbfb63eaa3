package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/internal/devjwt"
)

// refused checks a 403 problem with code, from the function (a problem document, not the
// gateway's {"message"}).
func refused(t *testing.T, a answer, code string) {
	t.Helper()
	var p struct {
		Status int
		Code   string
	}
	if a.Status != 403 || !strings.HasPrefix(a.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("%d %s, want a 403 problem %s", a.Status, a.Body, code)
	}
	a.json(t, &p)
	if p.Code != code {
		t.Errorf("code %s (%s), want %s", p.Code, a.Body, code)
	}
}

// TestOnlyTheApproverDecides replays the four ways a security probe decided as someone else
// (docs/design.md, "Who may decide"), each now refused with a 403 problem.
func TestOnlyTheApproverDecides(t *testing.T) {
	eng := jwt(t, engine)

	t.Run("the requester mints its approver's vote", func(t *testing.T) {
		run := newRun("self")
		payload := `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"],"approversList":["cfo"]}}`
		if a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"approve","payload":`+payload+`}`); a.Status != 201 {
			t.Fatalf("request: %d %s", a.Status, a.Body)
		}
		refused(t, do(t, "POST", "/runs/"+run+"/interrupts/approve/tokens", eng, `{"intent":"resolve","principal":"cfo"}`), "forbidden")
		refused(t, do(t, "POST", "/runs/"+newRun("self")+"/interrupts", eng, `{"nodeId":"approve","payload":`+payload+`,"token":{"intent":"resolve","principal":"cfo"}}`), "forbidden")
		cfo := jwt(t, devjwt.Token{Subject: "cfo", Tenant: "acme", Scopes: []string{"approvals:respond"}})
		var own struct{ Token string }
		if a := do(t, "POST", "/runs/"+run+"/interrupts/approve/tokens", cfo, `{"intent":"resolve"}`); a.Status != 201 {
			t.Fatalf("cfo's own link: %d %s", a.Status, a.Body)
		} else {
			a.json(t, &own)
		}
		a := do(t, "POST", "/interrupts/"+own.Token, "", decision("accept"))
		if a.Status != 200 || !strings.Contains(string(a.Body), `"decidedBy":"cfo"`) {
			t.Errorf("cfo decides with its own link: %d %s", a.Status, a.Body)
		}
	})

	t.Run("the agent mints its own escalation", func(t *testing.T) {
		agent := jwt(t, devjwt.Token{Subject: "agent-7", Tenant: "acme", Scopes: []string{"interrupts:write", "runs:read"}})
		run := newRun("agent")
		a := do(t, "POST", "/runs/"+run+"/agent-decisions", agent, `{"nodeId":"pay","key":"d1","agentId":"agent-7","confidence":0.2,"decision":{"transfer":1000000}}`)
		if a.Status != 201 || !strings.Contains(string(a.Body), `"escalated":true`) {
			t.Fatalf("decision: %d %s", a.Status, a.Body)
		}
		refused(t, do(t, "POST", "/runs/"+run+"/interrupts/pay/tokens", agent, `{"intent":"resolve"}`), "forbidden")
		refused(t, do(t, "POST", "/runs/"+run+"/interrupts/pay/tokens", agent, `{"intent":"resolve","principal":"manager"}`), "forbidden")
		mailer := jwt(t, devjwt.Token{Subject: "mailer", Tenant: "acme", Scopes: []string{"tokens:delegate"}})
		refused(t, do(t, "POST", "/runs/"+run+"/interrupts/pay/tokens", mailer, `{"intent":"resolve","principal":"agent-7"}`), "forbidden")
	})

	t.Run("subscribers and channels hold no votes", func(t *testing.T) {
		ctx := context.Background()
		op := operator(t)
		c := newClient(t, op)
		plain := subscribe(t, c, "*")
		slack := rawReceiver(t)
		sub, err := c.Subscribe(ctx, slack.url, []string{"*"}, "slack")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Unsubscribe(ctx, sub.ID) })
		if _, err := c.Subscribe(ctx, slack.url, []string{"*"}, "standard-webhooks", client.WithSignedLinks()); !client.IsCode(err, "forbidden") {
			t.Errorf("signed links for a subscriber without tokens:delegate: %v", err)
		}
		mailer := newClient(t, devjwt.Token{Subject: "mailer", Tenant: op.Tenant, Scopes: []string{"subscriptions:manage", "tokens:delegate"}})
		if _, err := mailer.Subscribe(ctx, slack.url, []string{"*"}, "slack", client.WithSignedLinks()); !client.IsCode(err, "validation_error") {
			t.Errorf("signed links for a Slack channel: %v", err)
		}
		signed := subscribeWith(t, mailer, []client.SubscribeOption{client.WithSignedLinks()}, "interrupt.requested")

		run := newRun("links")
		v, err := c.Request(ctx, run, "approve", json.RawMessage(approvalWithApprovers), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := plain.await(2)
		want := client.Link{URL: gatewayURL() + "/approve/" + run + "/" + v.InterruptID, ExpiresAt: got[0].Links[0].ExpiresAt, For: got[0].Audience}
		if len(got[0].Links) != 1 || !reflect.DeepEqual(got[0].Links[0], want) || len(got[0].Audience) == 0 || got[1].Type != "approval.requested" || got[1].Links != nil {
			t.Errorf("plain deliveries' links: %+v, then %+v; want only %+v", got[0].Links, got[1].Links, want)
		}
		// One Slack message: "*" names the legacy alias (approval.requested) for webhook receivers only.
		body := slack.await(t, 1)
		if strings.Contains(body[0], "ow2.") || !strings.Contains(body[0], `"url":"`+want.URL+`"`) || strings.Contains(body[0], "Review as") {
			t.Errorf("the Slack message: %s", body[0])
		}
		links := signed.await(1)[0].Links
		if len(links) != 2 || links[0].Principal != "alice" || links[1].Principal != "bob" {
			t.Fatalf("signed links %+v", links)
		}
		tok, _ := strings.CutPrefix(links[0].URL, gatewayURL()+"/approve/")
		res, err := client.New(gatewayURL()).ResolveByToken(ctx, tok, map[string]any{"action": "accept", "decidedAt": "2026-11-30T09:00:00Z"})
		if err != nil || res.Status != "resolved" || !strings.Contains(string(res.ResumeValue), `"decidedBy":"alice"`) {
			t.Errorf("alice's signed link: %+v %v", res, err)
		}
	})

	t.Run("one holder meets no quorum alone", func(t *testing.T) {
		ctx := context.Background()
		op := operator(t)
		mailer := devjwt.Token{Subject: "mailer", Tenant: op.Tenant, Scopes: []string{"subscriptions:manage", "tokens:delegate"}}
		signed := subscribeWith(t, newClient(t, mailer), []client.SubscribeOption{client.WithSignedLinks()}, "*")
		run := newRun("quorum")
		payload := `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"],"requiredApprovals":2}}`
		if _, err := newClient(t, op).Request(ctx, run, "gate", json.RawMessage(payload), nil); err != nil {
			t.Fatal(err)
		}
		got := signed.await(2)
		if len(got[0].Links) != 1 || got[0].Links[0].Principal != "" || strings.Contains(got[0].Links[0].URL, "ow2.") || got[1].Links != nil {
			t.Errorf("an approval of quorum 2 without approvers: links %+v, then %+v", got[0].Links, got[1].Links)
		}
		m := jwt(t, mailer)
		refused(t, do(t, "POST", "/runs/"+run+"/interrupts/gate/tokens", m, `{"intent":"resolve"}`), "approver_not_eligible")
		for i, who := range []string{"bob", "carol"} {
			var tv struct{ Token string }
			do(t, "POST", "/runs/"+run+"/interrupts/gate/tokens", m, `{"intent":"resolve","principal":"`+who+`"}`).json(t, &tv)
			if a := do(t, "POST", "/interrupts/"+tv.Token, "", decision("accept")); a.Status != []int{202, 200}[i] {
				t.Errorf("%s's vote: %d %s", who, a.Status, a.Body)
			}
		}
	})

	t.Run("the agent cannot switch its escalation off", func(t *testing.T) {
		run := newRun("threshold")
		if a := do(t, "PUT", "/runs/"+run+"/configurable", eng, `{"escalationThreshold":0}`); a.Status != 403 {
			t.Errorf("the agent configures: %d %s", a.Status, a.Body)
		}
		ops := jwt(t, devjwt.Token{Subject: "ops", Tenant: "acme", Scopes: []string{"runs:configure"}})
		if a := do(t, "PUT", "/runs/"+run+"/configurable", ops, `{"escalationThreshold":0.9}`); a.Status != 200 {
			t.Errorf("an operator configures: %d %s", a.Status, a.Body)
		}
		a := do(t, "POST", "/runs/"+run+"/agent-decisions", eng, `{"nodeId":"n","key":"d","agentId":"a","confidence":0.0,"decision":1}`)
		if a.Status != 201 || !strings.Contains(string(a.Body), `"escalated":true`) {
			t.Errorf("a decision at 0.0: %d %s", a.Status, a.Body)
		}
	})
}

// rawReceiver keeps the bodies posted to it: a Slack incoming webhook's stand-in.
type rawHooks struct {
	url     string
	mu      sync.Mutex
	bodies  []string
	arrived chan struct{}
}

func rawReceiver(t *testing.T) *rawHooks {
	t.Helper()
	r := &rawHooks{arrived: make(chan struct{}, 1000)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
		r.arrived <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// await waits until n bodies arrived, for at most 30 s.
func (r *rawHooks) await(t *testing.T, n int) []string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		got := append([]string(nil), r.bodies...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-r.arrived:
		case <-timeout:
			t.Fatalf("%d bodies after 30 s, want %d", len(got), n)
		}
	}
}
