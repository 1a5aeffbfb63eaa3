package inmem

import (
	"context"
	"slices"
	"sync"
)

// Secrets is an in-memory webhook.SecretStore: endpoints' and subscriptions' signing secrets for
// the fast tier, where Secrets Manager is not what is tested. Safe for concurrent use.
type Secrets struct {
	mu     sync.Mutex
	m      map[string][]string
	writes int
}

// NewSecrets returns an empty store.
func NewSecrets() *Secrets { return &Secrets{m: map[string][]string{}} }

// Put implements webhook.SecretStore.
func (s *Secrets) Put(_ context.Context, id string, secrets []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = slices.Clone(secrets)
	s.writes++
	return nil
}

// Get implements webhook.SecretStore: nil for an id it does not hold.
func (s *Secrets) Get(_ context.Context, id string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.m[id]), nil
}

// Delete implements webhook.SecretStore.
func (s *Secrets) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	s.writes++
	return nil
}

// Writes counts the puts and deletes so far: a test that must write nothing reads it before and
// after.
func (s *Secrets) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}
