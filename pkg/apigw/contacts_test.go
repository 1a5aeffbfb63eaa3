package apigw_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

var operator = caller{"ops", "acme", []string{apigw.ScopeContactsManage}}

func (s *stack) contacts(t *testing.T, who caller, route, kind, ref, body string, query map[string]string) response {
	t.Helper()
	return invoke(t, s.fn("contacts"), call{who: &who, route: route, params: map[string]string{"kind": kind, "ref": ref}, body: body, query: query})
}

// TestContactRoutes: a put makes (201), then replaces (200) the whole contact; it reads back;
// another tenant's does not exist; delete, then 404; without contacts:manage, 403.
func TestContactRoutes(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	r := s.contacts(t, operator, "PUT /contacts/{kind}/{ref}", "principal", "alice@example.com", `{"email":"alice@example.com","name":"Alice Ø","slack":"U024BE7LH","teams":"6f0a1b2c-3d4e-4f50-8a9b-0c1d2e3f4a5b"}`, nil)
	var c contacts.Contact
	if err := json.Unmarshal(r.Body, &c); err != nil || r.Status != 201 || c.Email != "alice@example.com" || c.Name != "Alice Ø" || c.Slack != "U024BE7LH" ||
		c.Teams != "6f0a1b2c-3d4e-4f50-8a9b-0c1d2e3f4a5b" || c.UpdatedAt.IsZero() {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	if r := s.contacts(t, operator, "PUT /contacts/{kind}/{ref}", "principal", "alice@example.com", `{"email":"a@example.org"}`, nil); r.Status != 200 {
		t.Fatalf("replace: %d %s", r.Status, r.Body)
	}
	r = s.contacts(t, operator, "GET /contacts/{kind}/{ref}", "principal", "alice@example.com", "", nil)
	c = contacts.Contact{}
	if err := json.Unmarshal(r.Body, &c); err != nil || r.Status != 200 || c.Email != "a@example.org" || c.Name != "" || c.Slack != "" {
		t.Errorf("read after replace: %d %s", r.Status, r.Body)
	}
	if r := s.contacts(t, caller{"ops", "globex", operator.scopes}, "GET /contacts/{kind}/{ref}", "principal", "alice@example.com", "", nil); r.Status != 404 {
		t.Errorf("another tenant reads it: %d %s", r.Status, r.Body)
	}
	if r := s.contacts(t, caller{"ops", "acme", []string{apigw.ScopeSubscriptionsManage}}, "GET /contacts/{kind}/{ref}", "principal", "alice@example.com", "", nil); r.Status != 403 {
		t.Errorf("without contacts:manage: %d %s", r.Status, r.Body)
	}
	if r := s.contacts(t, operator, "DELETE /contacts/{kind}/{ref}", "principal", "alice@example.com", "", nil); r.Status != 204 {
		t.Errorf("delete: %d %s", r.Status, r.Body)
	}
	for _, route := range []string{"GET /contacts/{kind}/{ref}", "DELETE /contacts/{kind}/{ref}"} {
		if r := s.contacts(t, operator, route, "principal", "alice@example.com", "", nil); r.Status != 404 || r.problem(t).Code != interrupt.CodeNotFound {
			t.Errorf("%s after delete: %d %s", route, r.Status, r.Body)
		}
	}
}

// TestContactsRefused: what no approval could name is not found, and a contact that says
// nothing usable is 400 naming each member wrong; none writes.
func TestContactsRefused(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	for _, tt := range []struct {
		name, kind, ref, body string
		status                int
		paths                 []string
	}{
		{"a kind approvals do not have", "team", "x", `{"email":"a@example.com"}`, 404, nil},
		{"a ref with a control character", "principal", "a\nb", `{"email":"a@example.com"}`, 404, nil},
		{"a ref longer than 256", "principal", strings.Repeat("é", 257), `{"email":"a@example.com"}`, 404, nil},
		{"nothing to reach it by", "principal", "alice", `{"name":"Alice"}`, 400, []string{""}},
		{"a display name in the address", "principal", "alice", `{"email":"Alice <alice@example.com>"}`, 400, []string{"/email"}},
		{"an address without a domain", "principal", "alice", `{"email":"alice@localhost"}`, 400, []string{"/email"}},
		{"a group's slack that is a person", "group", "finance", `{"slack":"U024BE7LH"}`, 400, []string{"/slack"}},
		{"a person's slack that is a group", "principal", "alice", `{"slack":"SAZ94GDB8"}`, 400, []string{"/slack"}},
		{"a group's teams id: a click proves a person", "group", "finance", `{"teams":"6f0a1b2c-3d4e-4f50-8a9b-0c1d2e3f4a5b"}`, 400, []string{"/teams"}},
		{"a teams id that is no Entra object id", "principal", "alice", `{"teams":"alice@example.com"}`, 400, []string{"/teams"}},
		{"a name with a control character", "role", "approver", `{"email":"approvers@example.com","name":"a\u0007b"}`, 400, []string{"/name"}},
		{"a member the contact has not", "principal", "alice", `{"email":"alice@example.com","phone":"+1"}`, 400, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := s.items(t)
			r := s.contacts(t, operator, "PUT /contacts/{kind}/{ref}", tt.kind, tt.ref, tt.body, nil)
			if r.Status != tt.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tt.status)
			}
			p := r.problem(t)
			var paths []string
			for _, f := range p.Errors {
				paths = append(paths, f.Path)
			}
			if tt.paths != nil && strings.Join(paths, " ") != strings.Join(tt.paths, " ") {
				t.Errorf("fields %v, want %v (%s)", paths, tt.paths, r.Body)
			}
			if s.items(t) != before {
				t.Error("a refused put wrote")
			}
		})
	}
}

// TestContactsListed: the tenant's contacts by kind then ref, a page at a time; a cursor that
// no page answered, or a limit out of range, is 400.
func TestContactsListed(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	for _, k := range [][2]string{{"role", "approver"}, {"principal", "bob"}, {"group", "finance"}, {"principal", "alice"}} {
		body := `{"email":"` + k[1] + `@example.com"}`
		if r := s.contacts(t, operator, "PUT /contacts/{kind}/{ref}", k[0], k[1], body, nil); r.Status != 201 {
			t.Fatalf("put %v: %d %s", k, r.Status, r.Body)
		}
	}
	if r := s.contacts(t, caller{"ops", "globex", operator.scopes}, "PUT /contacts/{kind}/{ref}", "principal", "carol", `{"email":"carol@example.com"}`, nil); r.Status != 201 {
		t.Fatalf("another tenant's: %d %s", r.Status, r.Body)
	}
	var got []string
	for after := ""; ; {
		q := map[string]string{"limit": "3"}
		if after != "" {
			q["after"] = after
		}
		r := s.contacts(t, operator, "GET /contacts", "", "", "", q)
		var page contacts.Page
		if err := json.Unmarshal(r.Body, &page); err != nil || r.Status != 200 {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		for _, c := range page.Contacts {
			got = append(got, c.Kind+"/"+c.Ref)
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	if want := "group/finance principal/alice principal/bob role/approver"; strings.Join(got, " ") != want {
		t.Errorf("listed %v, want %s", got, want)
	}
	for _, q := range []map[string]string{{"after": "not-a-cursor!"}, {"limit": "0"}, {"limit": "101"}} {
		if r := s.contacts(t, operator, "GET /contacts", "", "", "", q); r.Status != 400 {
			t.Errorf("query %v: %d %s", q, r.Status, r.Body)
		}
	}
}
