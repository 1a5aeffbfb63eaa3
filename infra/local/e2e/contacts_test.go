package e2e

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
)

// TestContactsThroughTheGateway: the contacts function behind the gateway keeps a tenant's
// contacts in the stack's table: a ref with characters a path escapes reads back as written,
// the list pages, another tenant sees none, and a delete is final.
func TestContactsThroughTheGateway(t *testing.T) {
	localaws.NeedsStack(t)
	tenant := newRun("contacts")
	ops := jwt(t, devjwt.Token{Subject: "ops", Tenant: tenant, Scopes: []string{"contacts:manage"}})
	other := jwt(t, devjwt.Token{Subject: "ops", Tenant: newRun("other"), Scopes: []string{"contacts:manage"}})
	ref := "alice@example.com #ops é" // characters the path escapes
	path := "/contacts/principal/" + url.PathEscape(ref)
	if a := do(t, "PUT", path, ops, `{"email":"alice@example.com","name":"Alice","slack":"U024BE7LH"}`); a.Status != 201 {
		t.Fatalf("put: %d %s", a.Status, a.Body)
	}
	if a := do(t, "PUT", "/contacts/group/finance", ops, `{"email":"finance@example.com"}`); a.Status != 201 {
		t.Fatalf("put a group's: %d %s", a.Status, a.Body)
	}
	a := do(t, "GET", path, ops, "")
	var c struct{ Kind, Ref, Email, Name, Slack string }
	if err := json.Unmarshal(a.Body, &c); err != nil || a.Status != 200 || c.Ref != ref || c.Email != "alice@example.com" {
		t.Fatalf("read: %d %s", a.Status, a.Body)
	}
	a = do(t, "GET", "/contacts?limit=1", ops, "")
	var page struct {
		Contacts []struct{ Kind, Ref string }
		Next     string
	}
	if err := json.Unmarshal(a.Body, &page); err != nil || a.Status != 200 || len(page.Contacts) != 1 || page.Contacts[0].Ref != "finance" || page.Next == "" {
		t.Fatalf("the first page: %d %s", a.Status, a.Body)
	}
	a = do(t, "GET", "/contacts?limit=1&after="+url.QueryEscape(page.Next), ops, "")
	page.Next = "" // the last page has none
	if err := json.Unmarshal(a.Body, &page); err != nil || len(page.Contacts) != 1 || page.Contacts[0].Ref != ref || page.Next != "" {
		t.Fatalf("the second page: %d %s", a.Status, a.Body)
	}
	if a := do(t, "GET", "/contacts", other, ""); a.Status != 200 || !bytes.Contains(a.Body, []byte(`"contacts":[]`)) {
		t.Errorf("another tenant's list: %d %s", a.Status, a.Body)
	}
	if a := do(t, "DELETE", path, ops, ""); a.Status != 204 {
		t.Fatalf("delete: %d %s", a.Status, a.Body)
	}
	if a := do(t, "GET", path, ops, ""); a.Status != 404 {
		t.Errorf("read after delete: %d %s", a.Status, a.Body)
	}
}
