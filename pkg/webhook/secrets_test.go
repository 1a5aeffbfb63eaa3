package webhook_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// secretStore is a SecretStore in memory that counts its reads.
type secretStore struct {
	mu      sync.Mutex
	secrets map[string][]string
	reads   int
}

func (s *secretStore) Put(_ context.Context, id string, secrets []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[id] = secrets
	return nil
}

func (s *secretStore) Get(_ context.Context, id string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	return s.secrets[id], nil
}

func (s *secretStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.secrets, id)
	return nil
}

// TestAReplacedSecretVerifiesAtOnce: the probe replaced an endpoint's secret (through another
// function, whose Put this cache never sees) seconds after the ingest read it, and the new
// secret was refused for about 30 s. A failed signature now reloads once the read is a
// ReloadCooldown (a second) old; reloads within it read nothing, so forged signatures cost at
// most one read a cooldown.
func TestAReplacedSecretVerifiesAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	store := &secretStore{secrets: map[string][]string{"we_1": {"old"}}}
	c := webhook.NewCache(store, clock.Now)
	if got, err := c.Get(ctx, "we_1"); err != nil || !slices.Equal(got, []string{"old"}) {
		t.Fatalf("Get: %v %v", got, err)
	}
	// Another function replaces it.
	if err := store.Put(ctx, "we_1", []string{"new"}); err != nil {
		t.Fatal(err)
	}
	if _, fresh, err := c.Reload(ctx, "we_1"); err != nil || fresh {
		t.Errorf("a reload within the cooldown of the read: fresh %v, %v", fresh, err)
	}
	// The provider's next event, signed with the new secret, two seconds after the read.
	clock.Advance(2 * time.Second)
	if got, fresh, err := c.Reload(ctx, "we_1"); err != nil || !fresh || !slices.Equal(got, []string{"new"}) {
		t.Errorf("a reload two seconds after the read: %v fresh %v, %v", got, fresh, err)
	}
	reads := store.reads
	for range 100 {
		if _, _, err := c.Reload(ctx, "we_1"); err != nil {
			t.Fatal(err)
		}
	}
	if store.reads != reads {
		t.Errorf("100 failed signatures within the cooldown read the secrets %d times", store.reads-reads)
	}
}
