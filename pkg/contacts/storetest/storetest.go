// Package storetest holds every contacts.Store to one behaviour: each store's own tests run
// Exercise (pkg/inmem's and pkg/dynamo's), as riverqueue/river's driver suite does, so the
// in-memory store the fast tests use answers as DynamoDB does.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Exercise runs the contract on stores open makes, an empty one each call.
func Exercise(t *testing.T, open func(t *testing.T) contacts.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	t.Run("put, read back, replace, delete", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		c := contacts.Contact{Kind: contacts.KindPrincipal, Ref: "alice@example.com", Email: "alice@example.com", Name: "Alice Ø", Slack: "U024BE7LH", Teams: "6f0a1b2c-3d4e-4f50-8a9b-0c1d2e3f4a5b", UpdatedAt: t0}
		if created, err := st.PutContact(ctx, "acme", c); err != nil || !created {
			t.Fatalf("put: created %v, %v", created, err)
		}
		if got, err := st.Contact(ctx, "acme", c.Kind, c.Ref); err != nil || got != c {
			t.Fatalf("read %+v %v, want %+v", got, err, c)
		}
		c2 := contacts.Contact{Kind: c.Kind, Ref: c.Ref, Email: "a@example.org", UpdatedAt: t0.Add(time.Minute)}
		if created, err := st.PutContact(ctx, "acme", c2); err != nil || created {
			t.Fatalf("replace: created %v, %v", created, err)
		}
		if got, err := st.Contact(ctx, "acme", c.Kind, c.Ref); err != nil || got != c2 {
			t.Fatalf("read after replace %+v %v, want %+v (a member left out is gone)", got, err, c2)
		}
		if err := st.DeleteContact(ctx, "acme", c.Kind, c.Ref); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Contact(ctx, "acme", c.Kind, c.Ref); !errors.Is(err, contacts.ErrNotFound) {
			t.Errorf("read after delete: %v, want ErrNotFound", err)
		}
		if err := st.DeleteContact(ctx, "acme", c.Kind, c.Ref); !errors.Is(err, contacts.ErrNotFound) {
			t.Errorf("delete again: %v, want ErrNotFound", err)
		}
	})
	t.Run("tenants apart", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		c := contacts.Contact{Kind: contacts.KindGroup, Ref: "finance", Email: "finance@acme.example", UpdatedAt: t0}
		if _, err := st.PutContact(ctx, "acme", c); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Contact(ctx, "evilcorp", c.Kind, c.Ref); !errors.Is(err, contacts.ErrNotFound) {
			t.Errorf("another tenant reads it: %v", err)
		}
		if err := st.DeleteContact(ctx, "evilcorp", c.Kind, c.Ref); !errors.Is(err, contacts.ErrNotFound) {
			t.Errorf("another tenant deletes it: %v", err)
		}
		if got, err := st.Contacts(ctx, "evilcorp", contacts.Key{}, 10); err != nil || len(got) != 0 {
			t.Errorf("another tenant lists %+v %v", got, err)
		}
		if _, err := st.Contact(ctx, "acme", c.Kind, c.Ref); err != nil {
			t.Errorf("the tenant's own, after another's delete: %v", err)
		}
	})
	t.Run("a key that is no contact's is refused", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		long := strings.Repeat("\U0001F600", contacts.MaxRef) // 256 characters, 1024 bytes
		for _, k := range []contacts.Key{{Kind: "team", Ref: "x"}, {Kind: contacts.KindPrincipal, Ref: long}, {Kind: contacts.KindRole, Ref: ""}} {
			c := contacts.Contact{Kind: k.Kind, Ref: k.Ref, Email: "a@example.com", UpdatedAt: t0}
			if _, err := st.PutContact(ctx, "acme", c); !errors.Is(err, runlog.ErrInvalidKey) {
				t.Errorf("put %s %.12q: %v, want ErrInvalidKey", k.Kind, k.Ref, err)
			}
			if _, err := st.Contact(ctx, "acme", k.Kind, k.Ref); !errors.Is(err, runlog.ErrInvalidKey) {
				t.Errorf("read %s %.12q: %v, want ErrInvalidKey", k.Kind, k.Ref, err)
			}
		}
	})
	t.Run("a tenant that is no id is refused", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		c := contacts.Contact{Kind: contacts.KindPrincipal, Ref: "alice", Email: "alice@example.com", UpdatedAt: t0}
		for _, tenant := range []string{"", "acme#contacts", "a b"} {
			if _, err := st.PutContact(ctx, tenant, c); !errors.Is(err, runlog.ErrInvalidKey) {
				t.Errorf("put for tenant %q: %v, want ErrInvalidKey", tenant, err)
			}
			if _, err := st.Contacts(ctx, tenant, contacts.Key{}, 10); !errors.Is(err, runlog.ErrInvalidKey) {
				t.Errorf("list of tenant %q: %v, want ErrInvalidKey", tenant, err)
			}
		}
	})
	t.Run("listed by kind then ref, paged", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		keys := []contacts.Key{
			{Kind: contacts.KindRole, Ref: "approver"}, {Kind: contacts.KindPrincipal, Ref: "bob"},
			{Kind: contacts.KindPrincipal, Ref: "Zoë"}, {Kind: contacts.KindGroup, Ref: "finance"},
			{Kind: contacts.KindPrincipal, Ref: "alice"}, {Kind: contacts.KindPrincipal, Ref: "a#b/c"},
		}
		for i, k := range keys {
			c := contacts.Contact{Kind: k.Kind, Ref: k.Ref, Email: fmt.Sprintf("p%d@example.com", i), UpdatedAt: t0}
			if _, err := st.PutContact(ctx, "acme", c); err != nil {
				t.Fatal(err)
			}
		}
		want := []string{"group/finance", "principal/Zoë", "principal/a#b/c", "principal/alice", "principal/bob", "role/approver"}
		var got []string
		for after := (contacts.Key{}); ; {
			page, err := st.Contacts(ctx, "acme", after, 4)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range page {
				got = append(got, c.Kind+"/"+c.Ref)
			}
			if len(page) < 4 {
				break
			}
			after = contacts.Key{Kind: page[len(page)-1].Kind, Ref: page[len(page)-1].Ref}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("listed %v, want %v", got, want)
		}
		page, err := st.Contacts(ctx, "acme", contacts.Key{Kind: contacts.KindPrincipal, Ref: "alice"}, 10)
		if err != nil || len(page) != 2 || page[0].Ref != "bob" {
			t.Errorf("after principal/alice: %+v %v", page, err)
		}
	})
}
