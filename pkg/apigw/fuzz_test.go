package apigw_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/internal/slackclick"
	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// fuzzHandler feeds one function requests built from fuzzed headers, path parameters and body,
// against a seeded run on the local DynamoDB: no input may panic it, none may be answered with
// a 5xx, and none it refuses may write to the table.
func fuzzHandler(f *testing.F, pick func(*stack) apigw.Handler, route string, seeds ...string) {
	s := newStack(f)
	s.mustRequest(f, "r1", "n1", example(f, "approval"))
	s.mustRequest(f, "r1", "n2", example(f, "clarification"))
	tok := s.mintOK(f, "r1", "n1", `{"intent":"resolve"}`).Token
	h := pick(s)
	for _, body := range seeds {
		f.Add("application/json", "", "r1", "n1", tok, body, false)
	}
	f.Add("application/json; charset=utf-8", `"key-1"`, "r1", "n2", tok, `{"resumeValue":{"answers":{}}}`, false)
	f.Add("text/plain", "a,b", "r#1", "n\x00", "ow2.hs256.x.y.z", "{", true)
	f.Add("", "", "", "", "", "", false)
	f.Fuzz(func(t *testing.T, ctype, idemKey, runID, nodeID, token, body string, b64 bool) {
		req := events.APIGatewayV2HTTPRequest{
			RouteKey:       route,
			Headers:        map[string]string{"content-type": ctype},
			PathParameters: map[string]string{"runId": runID, "nodeId": nodeID, "token": token, "id": nodeID, "endpointId": nodeID, "kind": runID, "ref": nodeID, "toolName": nodeID},
			Body:           body,
			RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: "fuzz", RouteKey: route, DomainName: testDomain, Stage: "$default"},
		}
		authorize(&req, map[string]any{"sub": "fuzzer", "tenant": "acme", "groups": []string{"finance"}},
			[]string{apigw.ScopeInterruptsWrite, apigw.ScopeApprovalsRespond, apigw.ScopeRunsRead, apigw.ScopeRunsConfigure, apigw.ScopeWebhooksManage, apigw.ScopeSubscriptionsManage, apigw.ScopeTokensDelegate, apigw.ScopeContactsManage, apigw.ScopeReceiptsRedeem, apigw.ScopePoliciesManage})
		if idemKey != "" {
			req.Headers["idempotency-key"] = idemKey
		}
		if b64 {
			req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte(body)), true
		}
		resp, before, after := fuzzCall(t, s, h, req)
		if resp.StatusCode >= 400 {
			refusedAsProblem(t, resp, before, after)
		}
	})
}

// fuzzCall invokes h with req as every fuzz target does: a handler error or a 5xx fails the
// input. It answers the response and what the stores held before and after it.
func fuzzCall(t *testing.T, s *stack, h apigw.Handler, req events.APIGatewayV2HTTPRequest) (resp events.APIGatewayV2HTTPResponse, before, after string) {
	t.Helper()
	before = s.items(t)
	resp, err := h(context.Background(), req)
	if err != nil {
		t.Fatalf("handler error: %v", err)
	}
	if resp.StatusCode >= 500 {
		t.Fatalf("answered %d: %s", resp.StatusCode, resp.Body)
	}
	return resp, before, s.items(t)
}

// refusedAsProblem fails a refusal that is not a problem document, or that wrote anything.
func refusedAsProblem(t *testing.T, resp events.APIGatewayV2HTTPResponse, before, after string) {
	t.Helper()
	if !strings.HasPrefix(resp.Headers["Content-Type"], "application/problem+json") {
		t.Fatalf("a %d that is not a problem document: %s", resp.StatusCode, resp.Body)
	}
	if after != before {
		t.Fatalf("refused with %d, yet the stores went from %s to %s", resp.StatusCode, before, after)
	}
}

func FuzzRequestInterrupt(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("request-interrupt") }, "POST /runs/{runId}/interrupts",
		`{"nodeId":"n3","payload":`+example(f, "custom")+`}`,
		`{"nodeId":"n4","payload":`+example(f, "low-confidence")+`,"token":{"intent":"resolve"}}`,
		`{"nodeId":"n5","payload":{"kind":"approval","key":"k5","timeoutMs":1E+99999999999,"data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"],"approversList":`+manyOf(tinyNumber, 300)+`}}}`,
		`{"nodeId":"n6","payload":{"kind":"custom","key":"k6","data":{"customKind":"x"},"resumeSchema":{"type":"number","maximum":-0.`+strings.Repeat("0", 50)+`1}}}`)
}

func FuzzResolveByRun(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("resolve-by-run") }, "POST /runs/{runId}/interrupts/{nodeId}",
		`{"resumeValue":{"action":"ask","decidedAt":"2026-11-30T09:00:00Z"}}`,
		`{"resumeValue":{"action":"refine","decidedAt":"2026-11-30T09:00:00Z","refineFeedback":{"scope":"items","itemIds":["a"]}}}`,
		`{"resumeValue":{"action":"refine","decidedAt":"2026-11-30T09:00:00Z","refineFeedback":{"scope":"items","itemIds":`+manyOf(tinyNumber, 300)+`}}}`,
		`{"resumeValue":{"action":"edit-accept","decidedAt":"2026-11-30T09:00:00Z","editedArtifactData":[1E+99999999999,-0.`+strings.Repeat("0", 50)+`1,0e99999999999999999999]}}`)
}

func FuzzInspectByToken(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("inspect-by-token") }, "GET /interrupts/{token}", "")
}

func FuzzResolveByToken(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("resolve-by-token") }, "POST /interrupts/{token}",
		`{"resumeValue":{"action":"ask","decidedAt":"2026-11-30T09:00:00Z"}}`,
		`{"resumeValue":{"action":"refine","decidedAt":"2026-11-30T09:00:00Z","refineFeedback":{"scope":"items","itemIds":`+manyOf(tinyNumber, 300)+`}}}`)
}

func FuzzMintToken(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("mint-token") }, "POST /runs/{runId}/interrupts/{nodeId}/tokens",
		`{"intent":"resolve","ttlMs":60000,"principal":"alice"}`, `{"intent":"inspect"}`,
		`{"intent":"resolve","ttlMs":1e-999999}`, `{"intent":"inspect","ttlMs":0}`)
}

func FuzzGetRun(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("get-run") }, "GET /runs/{runId}", "")
}

func FuzzReceipts(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("receipts") }, "POST /receipts/redeem",
		`{"receipt":"rc1.k1.e30.AAAA","toolCall":{"name":"issue_refund","arguments":{"order":"4471"}}}`,
		`{"receipt":"","toolCall":{"name":"x","arguments":{"n":1e400}}}`,
		`{"receipt":"rc1.k1.e30.AAAA","toolCall":{"name":"x","arguments":[1]}}`)
}

func FuzzListEvents(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("list-events") }, "GET /runs/{runId}/events", "")
}

func FuzzEndRun(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("end-run") }, "POST /runs/{runId}/cancel", `{"reason":"done"}`, "")
}

func FuzzDiscovery(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler {
		return s.fn("discovery")
	}, "GET /.well-known/interrupt-host", "")
}

func FuzzAgentDecisions(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("agent-decisions") }, "POST /runs/{runId}/agent-decisions",
		`{"nodeId":"n9","key":"d1","agentId":"a","confidence":0.2,"decision":{"label":"x"}}`,
		`{"nodeId":"n9","key":"d2","agentId":"a","confidence":0.99,"decision":null}`)
}

func FuzzConfigureRun(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("configure-run") }, "PUT /runs/{runId}/configurable",
		`{"escalationThreshold":0.8}`, `{"escalationThreshold":1e-3}`, `{"configurable":{"run":{"escalationThreshold":0.4}}}`)
}

func FuzzWebhookEndpoints(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("webhook-endpoints") }, "POST /webhook-endpoints",
		`{"provider":"stripe","secrets":["whsec_fuzz_0123456789abcdef"],"correlation":["/data/id"]}`)
}

func FuzzWebhookIngest(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler { return s.fn("webhook-ingest") }, "POST /webhooks/{endpointId}",
		`{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1"}}}`,
		`{"id":"evt_2","type":"payment_intent.succeeded","data":{"object":{"id":1e-999999,"amounts":`+manyOf(hugeNumber, 300)+`}}}`)
}

// FuzzContacts: a contact put under any path and body is stored whole or refused as a problem
// document, writing nothing.
func FuzzContacts(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler {
		return s.fn("contacts")
	}, "PUT /contacts/{kind}/{ref}",
		`{"email":"alice@example.com","name":"Alice","slack":"U024BE7LH"}`, `{"email":"finance@example.com"}`, `{"slack":"SAZ94GDB8"}`)
}

// FuzzPolicies: a tool policy put under any tool name and body is a new version or refused as a
// problem document, writing nothing.
func FuzzPolicies(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler {
		return s.fn("policies")
	}, "PUT /policies/tools/{toolName}",
		`{"approversList":["alice"],"requiredApprovals":1,"timeoutMs":3600000,"receiptTtlMs":60000}`,
		`{"approverGroupRefs":["finance"],"requiredApprovals":2,"rejectionPolicy":"majority","actions":["accept","reject","edit-accept"]}`,
		`{"approversList":[],"requiredApprovals":1e-999999}`, `{"approversList":["alice"],"requiredApprovals":5}`,
		`{"approversList":["alice"],"standing":[{"arguments":{"type":"object","properties":{"amountCents":{"maximum":5000}}},"description":"small refunds"}]}`,
		`{"approversList":["alice"],"standing":[{"arguments":{"$ref":"#"},"description":"x"},{"arguments":{"pattern":"(a+)+$"},"description":"y","until":"2000-01-01T00:00:00Z"}]}`)
}

// FuzzDelegations: a delegation put under any principal and body is kept or refused as a problem
// document, writing nothing.
func FuzzDelegations(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler {
		return s.fn("delegations")
	}, "PUT /delegations/{principal}",
		`{"delegate":"bob","until":"2099-01-01T00:00:00Z"}`, `{"delegate":"bob","from":"2099-01-01T00:00:00Z","until":"2099-01-02T00:00:00Z","kinds":["approval"],"note":"away"}`,
		`{"delegate":"","until":"2000-01-01T00:00:00Z"}`, `{"delegate":"bob","until":"x","kinds":["custom"]}`)
}

func FuzzSubscriptions(f *testing.F) {
	fuzzHandler(f, func(s *stack) apigw.Handler {
		return s.fn("subscriptions")
	}, "POST /subscriptions",
		`{"url":"https://hooks.example.com/in","events":["*"]}`, `{"url":"https://hooks.example.com/in","events":["run.completed"],"format":"slack"}`)
}

// FuzzMcp: whatever is posted to the MCP endpoint, it answers no 5xx, and a refusal writes
// nothing and is a problem document or, as the protocol answers some, a JSON-RPC error.
func FuzzMcp(f *testing.F) {
	s := newStack(f)
	h := s.fn("mcp")
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"request_approval","arguments":{"title":"x","approvers":["alice"]}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"request_approval","arguments":{"title":"x","requiredApprovals":1e-999999,"approvers":` + manyOf(tinyNumber, 300) + `}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_outcome","arguments":{"runId":"r1","interruptId":"int_1","waitMs":0}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[]`, `{`, `{"jsonrpc":"1.0"}`,
	} {
		f.Add("POST", "application/json", "", body)
		f.Add("POST", "application/json", "garbage", body)
	}
	f.Add("GET", "", "", "")
	f.Add("POST", "text/plain", "2025-11-25", "{}")
	f.Fuzz(func(t *testing.T, method, ctype, version, body string) {
		req := events.APIGatewayV2HTTPRequest{
			RouteKey: method + " /mcp", RawPath: "/mcp",
			Headers: map[string]string{"content-type": ctype, "mcp-protocol-version": version, "accept": "application/json, text/event-stream"},
			Body:    body,
			RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: "fuzz", RouteKey: method + " /mcp", DomainName: testDomain, Stage: "$default",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method}},
		}
		authorize(&req, map[string]any{"sub": "fuzzer", "tenant": "acme"}, []string{apigw.ScopeInterruptsWrite, apigw.ScopeRunsRead})
		resp, before, after := fuzzCall(t, s, h, req)
		if resp.StatusCode < 400 {
			return
		}
		var rpc struct {
			JSONRPC string          `json:"jsonrpc"`
			Error   json.RawMessage `json:"error"`
		}
		problem := strings.HasPrefix(resp.Headers["Content-Type"], "application/problem+json")
		if !problem && (json.Unmarshal([]byte(resp.Body), &rpc) != nil || rpc.JSONRPC != "2.0" || rpc.Error == nil) {
			t.Fatalf("a %d that is neither a problem nor a JSON-RPC error: %s %s", resp.StatusCode, resp.Headers["Content-Type"], resp.Body)
		}
		if after != before {
			t.Fatalf("refused with %d, yet the stores went from %s to %s", resp.StatusCode, before, after)
		}
	})
}

// FuzzSlackInteractions: whatever is posted to the Slack apps' endpoint, under any signature
// headers, it answers no 5xx; anything but a 200 is a problem document and writes nothing; and
// only a body signed with the app's secret (a seed: a mutation breaks its signature) records.
func FuzzSlackInteractions(f *testing.F) {
	s := newStack(f)
	ctx := context.Background()
	const secret = "8f742231b10e8888abcd99e5a6b7c885"
	admin := interrupt.Principal{Subject: "admin", Tenant: "acme"}
	if _, _, err := s.services.Slack.Put(ctx, admin, slack.Request{AppID: "A0001", TeamID: "T0001", SigningSecret: secret}); err != nil {
		f.Fatal(err)
	}
	if _, _, err := s.services.Contacts.Put(ctx, admin, contacts.KindPrincipal, "alice", contacts.Request{Slack: "U0ALICE"}); err != nil {
		f.Fatal(err)
	}
	v := s.mustRequest(f, "r1", "n1", `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"a","artifactType":"t","title":"Pay","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`)
	signed := map[string]bool{}
	for _, action := range []interrupt.Action{interrupt.ActionAccept, interrupt.ActionReject} {
		value, err := slack.Seal(ctx, s.services.Clicks.Keys, slack.Button{Tenant: "acme", RunID: "r1", InterruptID: v.InterruptID, Action: action})
		if err != nil {
			f.Fatal(err)
		}
		payload, err := slackclick.Click{AppID: "A0001", TeamID: "T0001", UserID: "U0ALICE", ActionID: slack.ActionID(action), Value: value}.Payload()
		if err != nil {
			f.Fatal(err)
		}
		body := slackclick.Body(payload)
		h := slackclick.Sign(secret, time.Now(), body)
		signed[string(body)] = true
		f.Add(h["X-Slack-Request-Timestamp"], h["X-Slack-Signature"], string(body), false)
		f.Add(h["X-Slack-Request-Timestamp"], h["X-Slack-Signature"], string(body), true)
	}
	f.Add("", "", "payload=%7B%7D", false)
	f.Add("1", "v0=00", "payload=", false)
	f.Add("+1733200000", "v0=zz", "%%%", false)
	h := s.fn("slack-interactions")
	f.Fuzz(func(t *testing.T, ts, sig, body string, b64 bool) {
		req := events.APIGatewayV2HTTPRequest{
			RouteKey: "POST /slack/interactions", RawPath: "/slack/interactions",
			Headers:        map[string]string{"content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": ts, "x-slack-signature": sig},
			Body:           body,
			RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: "fuzz", RouteKey: "POST /slack/interactions", DomainName: testDomain, Stage: "$default"},
		}
		if b64 {
			req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte(body)), true
		}
		resp, before, after := fuzzCall(t, s, h, req)
		if resp.StatusCode != http.StatusOK {
			refusedAsProblem(t, resp, before, after)
		}
		if after != before && !signed[body] {
			t.Fatalf("a body the app did not sign wrote: %q", body)
		}
	})
}

// FuzzTeamsMessages: whatever is posted to the Teams bots' endpoint, under any Authorization,
// it answers no 5xx; anything but a 200 is a problem document and writes nothing; and only an
// invoke carrying the Bot Framework's token for it (a seed: a mutation of the body breaks its
// serviceUrl or its data, of the header its signature) records.
func FuzzTeamsMessages(f *testing.F) {
	s := newStack(f)
	ctx := context.Background()
	admin := interrupt.Principal{Subject: "admin", Tenant: "acme"}
	if _, _, err := s.services.Teams.Put(ctx, admin, teams.Request{AppID: teamsApp, AppPassword: "a-client-secret-of-forty-characters-long", EntraTenant: teamsEntra}); err != nil {
		f.Fatal(err)
	}
	if _, _, err := s.services.Contacts.Put(ctx, admin, contacts.KindPrincipal, "alice", contacts.Request{Teams: teamsAlice}); err != nil {
		f.Fatal(err)
	}
	v := s.mustRequest(f, "r1", "n1", `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"a","artifactType":"t","title":"Pay","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`)
	signed := map[string]bool{}
	for _, action := range []interrupt.Action{interrupt.ActionAccept, interrupt.ActionReject} {
		data, err := teams.Seal(ctx, s.services.TeamsMessages.Keys, teams.Aim{Tenant: "acme", RunID: "r1", InterruptID: v.InterruptID, Action: action})
		if err != nil {
			f.Fatal(err)
		}
		auth, body := teamsInvoke(f, teamsAlice, teams.Verb(action), data, s.clock.Now())
		signed[auth+"\x00"+body] = true
		f.Add(auth, body, false)
		f.Add(auth, body, true)
	}
	f.Add("", "{}", false)
	f.Add("Bearer x.y.z", `{"type":"invoke","channelId":"msteams","serviceUrl":"https://smba.trafficmanager.net/emea/"}`, false)
	f.Add("bearer ", "[", false)
	h := s.fn("teams-messages")
	f.Fuzz(func(t *testing.T, auth, body string, b64 bool) {
		req := events.APIGatewayV2HTTPRequest{
			RouteKey: "POST /teams/messages", RawPath: "/teams/messages",
			Headers:        map[string]string{"content-type": "application/json", "authorization": auth},
			Body:           body,
			RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: "fuzz", RouteKey: "POST /teams/messages", DomainName: testDomain, Stage: "$default"},
		}
		if b64 {
			req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte(body)), true
		}
		resp, before, after := fuzzCall(t, s, h, req)
		if resp.StatusCode != http.StatusOK {
			refusedAsProblem(t, resp, before, after)
		}
		if after != before && !signed[auth+"\x00"+body] {
			t.Fatalf("an activity the Bot Framework did not send wrote: %q", body)
		}
	})
}
