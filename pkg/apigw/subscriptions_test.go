package apigw_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// names resolves each host to one address, so the URL rules are tested without DNS.
type names map[string]string

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := n[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

var subscriber = caller{"ops", "acme", []string{apigw.ScopeSubscriptionsManage}}

func (s *stack) subscriptions(t *testing.T, who caller, route, id, body string) response {
	t.Helper()
	return invoke(t, s.fn("subscriptions"), call{who: &who, route: route, params: map[string]string{"id": id}, body: body})
}

// TestSubscriptionRoutes: create answers the secret once, read never; another tenant's
// subscription does not exist; bad URLs and event types are 400 with their paths and write
// nothing; the deliveries list; delete, then 404.
func TestSubscriptionRoutes(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	r := s.subscriptions(t, subscriber, "POST /subscriptions", "", `{"url":"https://hooks.example.com/in","events":["interrupt.resolved","interrupt.requested","interrupt.resolved"]}`)
	var created struct {
		ID, URL, Format, Secret string
		Events                  []string
	}
	if err := json.Unmarshal(r.Body, &created); err != nil || r.Status != 201 || !strings.HasPrefix(created.Secret, "whsec_") ||
		created.Format != "standard-webhooks" || strings.Join(created.Events, " ") != "interrupt.requested interrupt.resolved" {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	r = s.subscriptions(t, subscriber, "GET /subscriptions/{id}", created.ID, "")
	if r.Status != 200 || strings.Contains(string(r.Body), "whsec_") || strings.Contains(string(r.Body), "secret") {
		t.Errorf("read: %d %s", r.Status, r.Body)
	}
	other := caller{"ops", "globex", subscriber.scopes}
	if r := s.subscriptions(t, other, "GET /subscriptions/{id}", created.ID, ""); r.Status != 404 {
		t.Errorf("another tenant reads it: %d %s", r.Status, r.Body)
	}
	if r := s.subscriptions(t, caller{"ops", "acme", []string{apigw.ScopeWebhooksManage}}, "GET /subscriptions/{id}", created.ID, ""); r.Status != 403 {
		t.Errorf("without subscriptions:manage: %d %s", r.Status, r.Body)
	}
	s.clock.Advance(time.Second) // oldest first
	second := s.subscriptions(t, subscriber, "POST /subscriptions", "", `{"url":"https://hooks.example.com/second","events":["*"]}`)
	var secondID struct{ ID string }
	if err := json.Unmarshal(second.Body, &secondID); err != nil || second.Status != 201 {
		t.Fatalf("a second create: %d %s", second.Status, second.Body)
	}
	listed := func(who caller) []string {
		t.Helper()
		r := s.subscriptions(t, who, "GET /subscriptions", "", "")
		var list struct{ Subscriptions []struct{ ID, Secret string } }
		if err := json.Unmarshal(r.Body, &list); err != nil || r.Status != 200 || strings.Contains(string(r.Body), "whsec_") {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		var ids []string
		for _, sub := range list.Subscriptions {
			ids = append(ids, sub.ID)
		}
		return ids
	}
	if got := listed(subscriber); strings.Join(got, " ") != created.ID+" "+secondID.ID {
		t.Errorf("the tenant's list %v, want %s then %s", got, created.ID, secondID.ID)
	}
	if got := listed(other); len(got) != 0 {
		t.Errorf("another tenant lists %v", got)
	}
	if r := s.subscriptions(t, subscriber, "DELETE /subscriptions/{id}", secondID.ID, ""); r.Status != 204 {
		t.Fatalf("delete the second: %d %s", r.Status, r.Body)
	}
	if r := s.subscriptions(t, caller{"ops", "acme", []string{apigw.ScopeWebhooksManage}}, "GET /subscriptions", "", ""); r.Status != 403 {
		t.Errorf("a list without subscriptions:manage: %d %s", r.Status, r.Body)
	}
	before := s.items(t)
	for _, c := range []struct{ body, path string }{
		{`{"url":"http://hooks.example.com/in","events":["*"]}`, "/url"},
		{`{"url":"https://intranet.example/in","events":["*"]}`, "/url"},
		{`{"url":"https://10.1.1.1/in","events":["*"]}`, "/url"},
		{`{"url":"https://127.0.0.1:8443/in","events":["*"]}`, "/url"},
		{`{"url":"https://hooks.example.com/in","events":["interrupt.maybe"]}`, "/events/0"},
		{`{"url":"https://hooks.example.com/in","events":[]}`, "/events"},
		{`{"url":"https://hooks.example.com/in","events":["*"],"format":"email"}`, "/format"},
	} {
		r := s.subscriptions(t, subscriber, "POST /subscriptions", "", c.body)
		if r.Status != 400 || r.Headers["Content-Type"] != "application/problem+json" || !strings.Contains(string(r.Body), `"path":"`+c.path+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.body, r.Status, r.Body, c.path)
		}
	}
	if r := s.subscriptions(t, subscriber, "POST /subscriptions", "", `{"url":"https://hooks.example.com/in","events":["*"],"secret":"mine"}`); r.Status != 400 {
		t.Errorf("an unknown member: %d %s", r.Status, r.Body)
	}
	if after := s.items(t); after != before {
		t.Errorf("refusals wrote: %s, then %s", before, after)
	}
	r = s.subscriptions(t, subscriber, "GET /subscriptions/{id}/deliveries", created.ID, "")
	if r.Status != 200 || string(r.Body) != `{"deliveries":[]}` {
		t.Errorf("deliveries: %d %s", r.Status, r.Body)
	}
	if r := s.subscriptions(t, subscriber, "DELETE /subscriptions/{id}", created.ID, ""); r.Status != 204 {
		t.Errorf("delete: %d %s", r.Status, r.Body)
	}
	if r := s.subscriptions(t, subscriber, "GET /subscriptions/{id}", created.ID, ""); r.Status != 404 {
		t.Errorf("after delete: %d %s", r.Status, r.Body)
	}
}

// TestResendRefusals: POST /subscriptions/{id}/deliveries refuses what it cannot send (another
// tenant's subscription or run, an event that is not there or that the subscription was not
// sent, a body that names none) with the spec's codes, and sends and writes nothing. Its
// delivery is TestIhctl's, against the stack.
func TestResendRefusals(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	r := s.subscriptions(t, subscriber, "POST /subscriptions", "", `{"url":"https://hooks.example.com/in","events":["interrupt.requested"]}`)
	var sub struct{ ID string }
	if err := json.Unmarshal(r.Body, &sub); err != nil || r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	s.mustRequest(t, "r1", "n1", example(t, "custom"))
	if r := s.resolve(t, approver, "r1", "n1", `{}`); r.Status != 200 {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	before := s.items(t)
	for _, c := range []struct {
		name   string
		who    caller
		id     string
		body   string
		status int
		code   interrupt.Code
	}{
		{"another tenant's subscription", caller{"ops", "globex", subscriber.scopes}, sub.ID, `{"eventId":"r1:1:0"}`, 404, interrupt.CodeNotFound},
		{"no such subscription", subscriber, "sub_nope", `{"eventId":"r1:1:0"}`, 404, interrupt.CodeNotFound},
		{"an event the subscription does not take", subscriber, sub.ID, `{"eventId":"r1:2:0"}`, 404, interrupt.CodeNotFound},
		{"an event the subscription was not sent", subscriber, sub.ID, `{"eventId":"r1:1:0"}`, 404, interrupt.CodeNotFound},
		{"a commit that is not there", subscriber, sub.ID, `{"eventId":"r1:3:0"}`, 404, interrupt.CodeNotFound},
		{"a run that is not there", subscriber, sub.ID, `{"eventId":"r2:1:0"}`, 404, interrupt.CodeNotFound},
		{"an id that names no event", subscriber, sub.ID, `{"eventId":"r1"}`, 400, interrupt.CodeValidation},
		{"no eventId", subscriber, sub.ID, `{}`, 400, interrupt.CodeValidation},
		{"an unknown member", subscriber, sub.ID, `{"eventId":"r1:1:0","now":true}`, 400, interrupt.CodeValidation},
		{"without subscriptions:manage", caller{"ops", "acme", []string{apigw.ScopeWebhooksManage}}, sub.ID, `{"eventId":"r1:1:0"}`, 403, interrupt.CodeForbidden},
	} {
		if r := s.subscriptions(t, c.who, "POST /subscriptions/{id}/deliveries", c.id, c.body); r.Status != c.status || r.problem(t).Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
	}
	if after := s.items(t); after != before {
		t.Errorf("refused resends wrote: %s, then %s", before, after)
	}
}

// TestResendReadsNoHistory: a principal holding only subscriptions:manage, who may not read a
// run's events, cannot have them sent to a receiver of its own by resending what its new
// subscription was never sent: another approver's vote and its feedback is 404, says why, and
// sends and writes nothing.
func TestResendReadsNoHistory(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "approve", `{"kind":"approval","key":"k","data":{"artifactId":"inv-9","artifactType":"invoice","title":"Pay inv-9","actions":["accept","reject"],"approversList":["alice","bob"],"requiredApprovals":2}}`)
	if r := s.resolve(t, approver, "r1", "approve", `{"action":"accept","feedback":"confidential: the vendor is under audit","decidedAt":"2026-11-30T09:00:00Z"}`); r.Status != 202 {
		t.Fatalf("alice's vote: %d %s", r.Status, r.Body)
	}
	if types := s.eventTypes(t, "acme", "r1"); len(types) < 3 || types[2] != interrupt.EventVoted {
		t.Fatalf("the run's events %v, want the vote at r1:2:0", types)
	}
	if _, r := s.events(t, subscriber, "r1", nil); r.Status != 403 {
		t.Fatalf("the subscriber reads the run's events: %d %s", r.Status, r.Body)
	}
	r := s.subscriptions(t, subscriber, "POST /subscriptions", "", `{"url":"https://hooks.example.com/in","events":["*"]}`)
	var sub struct{ ID string }
	if err := json.Unmarshal(r.Body, &sub); err != nil || r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	before := s.items(t)
	for _, event := range []string{"r1:2:0", "r1:1:0"} {
		r := s.subscriptions(t, subscriber, "POST /subscriptions/{id}/deliveries", sub.ID, `{"eventId":"`+event+`"}`)
		if p := r.problem(t); r.Status != 404 || p.Code != interrupt.CodeNotFound || !strings.Contains(p.Detail, "was not sent") {
			t.Errorf("resend of %s, from before the subscription: %d %s, want 404 saying it was not sent", event, r.Status, r.Body)
		}
	}
	if after := s.items(t); after != before {
		t.Errorf("refused resends wrote: %s, then %s", before, after)
	}
}
