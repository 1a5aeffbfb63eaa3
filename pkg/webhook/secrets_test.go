package webhook_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// countedSecrets counts the reads of the in-memory secret store.
type countedSecrets struct {
	*inmem.Secrets
	reads atomic.Int32
}

func (s *countedSecrets) Get(ctx context.Context, id string) ([]string, error) {
	s.reads.Add(1)
	return s.Secrets.Get(ctx, id)
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
	store := &countedSecrets{Secrets: inmem.NewSecrets()}
	if err := store.Put(ctx, "we_1", []string{"old"}); err != nil {
		t.Fatal(err)
	}
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
	reads := store.reads.Load()
	for range 100 {
		if _, _, err := c.Reload(ctx, "we_1"); err != nil {
			t.Fatal(err)
		}
	}
	if got := store.reads.Load(); got != reads {
		t.Errorf("100 failed signatures within the cooldown read the secrets %d times", got-reads)
	}
}
