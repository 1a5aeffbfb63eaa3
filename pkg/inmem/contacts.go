package inmem

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// contactsOf is the tenant's contacts, made on first use. s.mu must be held.
func (s *Store) contactsOf(tenant string) map[contacts.Key]contacts.Contact {
	if s.contacts == nil {
		s.contacts = map[string]map[contacts.Key]contacts.Contact{}
	}
	if s.contacts[tenant] == nil {
		s.contacts[tenant] = map[contacts.Key]contacts.Contact{}
	}
	return s.contacts[tenant]
}

func checkTenant(tenant string) error {
	if !runlog.ValidID(tenant) {
		return fmt.Errorf("inmem: tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	return nil
}

// checkContact refuses a key the table would refuse (contacts.Key.Valid).
func checkContact(tenant string, k contacts.Key) error {
	if err := checkTenant(tenant); err != nil {
		return err
	}
	if !k.Valid() {
		return fmt.Errorf("inmem: contact %s %q: %w", k.Kind, k.Ref, runlog.ErrInvalidKey)
	}
	return nil
}

// PutContact implements contacts.Store.
func (s *Store) PutContact(_ context.Context, tenant string, c contacts.Contact) (bool, error) {
	if err := checkContact(tenant, contacts.Key{Kind: c.Kind, Ref: c.Ref}); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.contactsOf(tenant)
	k := contacts.Key{Kind: c.Kind, Ref: c.Ref}
	_, existed := m[k]
	m[k] = c
	return !existed, nil
}

// Contact implements contacts.Store.
func (s *Store) Contact(_ context.Context, tenant, kind, ref string) (contacts.Contact, error) {
	if err := checkContact(tenant, contacts.Key{Kind: kind, Ref: ref}); err != nil {
		return contacts.Contact{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.contactsOf(tenant)[contacts.Key{Kind: kind, Ref: ref}]
	if !ok {
		return c, contacts.ErrNotFound
	}
	return c, nil
}

// DeleteContact implements contacts.Store.
func (s *Store) DeleteContact(_ context.Context, tenant, kind, ref string) error {
	if err := checkContact(tenant, contacts.Key{Kind: kind, Ref: ref}); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.contactsOf(tenant)
	k := contacts.Key{Kind: kind, Ref: ref}
	if _, ok := m[k]; !ok {
		return contacts.ErrNotFound
	}
	delete(m, k)
	return nil
}

// Contacts implements contacts.Store, in the order of DynamoDB's sort key (kind#ref, by bytes).
func (s *Store) Contacts(_ context.Context, tenant string, after contacts.Key, limit int) ([]contacts.Contact, error) {
	if err := checkTenant(tenant); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sortKey := func(k contacts.Key) string { return k.Kind + "#" + k.Ref }
	keys := slices.SortedFunc(maps.Keys(s.contactsOf(tenant)), func(a, b contacts.Key) int {
		return cmp.Compare(sortKey(a), sortKey(b))
	})
	var out []contacts.Contact
	for _, k := range keys {
		if after != (contacts.Key{}) && strings.Compare(sortKey(k), sortKey(after)) <= 0 {
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, s.contacts[tenant][k])
	}
	return out, nil
}
