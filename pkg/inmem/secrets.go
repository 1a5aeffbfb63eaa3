package inmem

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
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

// Get implements webhook.SecretStore: an id it does not hold answers interrupt.ErrUnavailable,
// as Secrets Manager's does.
func (s *Secrets) Get(_ context.Context, id string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	secrets, ok := s.m[id]
	if !ok {
		return nil, fmt.Errorf("inmem: no secrets of %s: %w", id, interrupt.ErrUnavailable)
	}
	return slices.Clone(secrets), nil
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
