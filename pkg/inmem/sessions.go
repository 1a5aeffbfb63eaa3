package inmem

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Sessions keeps the sign-in's sessions in memory (signin.Sessions), to the contract the table
// keeps them by (pkg/signin/storetest), so the sign-in's and the pages' fast tests end sessions
// as a deployment does. Safe for concurrent use.
type Sessions struct {
	mu sync.Mutex
	// expires is each session's expiry, by tenant and id
	expires map[[2]string]time.Time
}

// NewSessions returns a store holding no session.
func NewSessions() *Sessions { return &Sessions{expires: map[[2]string]time.Time{}} }

// checkSession refuses a key the table would refuse: a tenant and a session id are ids.
func checkSession(tenant, id string) error {
	if !runlog.ValidID(tenant) || !runlog.ValidID(id) {
		return fmt.Errorf("inmem: session %q of tenant %q: %w", id, tenant, runlog.ErrInvalidKey)
	}
	return nil
}

// PutSession implements signin.Sessions, to the millisecond as the table keeps it.
func (s *Sessions) PutSession(_ context.Context, tenant, id string, expires time.Time) error {
	if err := checkSession(tenant, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expires[[2]string{tenant, id}] = time.UnixMilli(expires.UnixMilli())
	return nil
}

// Session implements signin.Sessions. An expired record is answered until it is deleted, as
// the table answers one its TTL has not deleted yet.
func (s *Sessions) Session(_ context.Context, tenant, id string) (time.Time, bool, error) {
	if err := checkSession(tenant, id); err != nil {
		return time.Time{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	expires, ok := s.expires[[2]string{tenant, id}]
	return expires, ok, nil
}

// DeleteSession implements signin.Sessions.
func (s *Sessions) DeleteSession(_ context.Context, tenant, id string) error {
	if err := checkSession(tenant, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.expires, [2]string{tenant, id})
	return nil
}
