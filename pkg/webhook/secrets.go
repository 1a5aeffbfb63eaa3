package webhook

import (
	"context"
	"sync"
	"time"
)

// SecretStore is where secrets live (secretsmanager.Secrets; inmem.Secrets for tests); Cache
// keeps them in memory in front of one. The store's failures wrap interrupt.ErrUnavailable.
type SecretStore interface {
	// Put creates or replaces id's secrets.
	Put(ctx context.Context, id string, secrets []string) error
	// Get answers id's secrets. An id with none answers an error wrapping
	// interrupt.ErrUnavailable, not an empty answer, which Cache would keep: an endpoint's or a
	// subscription's secrets are put before it and deleted after it, so only a reader racing a
	// deletion misses them, and a retry finds it gone.
	Get(ctx context.Context, id string) ([]string, error)
	// Delete removes id's secrets; an id with none is no error.
	Delete(ctx context.Context, id string) error
}

// Cache keeps endpoints' secrets in memory as the keyring keeps its keys: a read is trusted for
// TTL, concurrent misses share one read, and Reload (after a signature that none of the cached
// secrets verifies: they may have just been replaced, by another function) reads again unless
// the secrets were read less than ReloadCooldown ago. The cooldown is what a replaced secret
// can wait: a second, not the keyring's 30 s, since a provider's event signed with a new secret
// should verify at once; and it bounds what a flood of forged signatures costs, to one Secrets
// Manager read per endpoint per second per warm instance. Safe for concurrent use.
type Cache struct {
	store         SecretStore
	ttl, cooldown time.Duration
	now           func() time.Time

	mu      sync.Mutex
	entries map[string]*cached
}

// SecretsTTL is how long a read of an endpoint's secrets is trusted without a failed signature.
const SecretsTTL = 5 * time.Minute

// ReloadCooldown is how soon after a read a failed signature may read the secrets again.
const ReloadCooldown = time.Second

// NewCache caches store's secrets for SecretsTTL, reloading them at most every ReloadCooldown;
// now nil means time.Now.
func NewCache(store SecretStore, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{store: store, ttl: SecretsTTL, cooldown: ReloadCooldown, now: now, entries: map[string]*cached{}}
}

type cached struct {
	done     chan struct{} // closed once the read in flight finished
	secrets  []string
	err      error
	loadedAt time.Time
}

// Put stores the secrets and forgets what this process cached of them.
func (c *Cache) Put(ctx context.Context, id string, secrets []string) error {
	c.forget(id)
	return c.store.Put(ctx, id, secrets)
}

// Delete removes the secrets and forgets what this process cached of them.
func (c *Cache) Delete(ctx context.Context, id string) error {
	c.forget(id)
	return c.store.Delete(ctx, id)
}

// Get answers the cached secrets, reading them when absent or older than its TTL.
func (c *Cache) Get(ctx context.Context, id string) ([]string, error) {
	return c.load(ctx, id, c.ttl)
}

// Reload reads the secrets again unless they were read less than the cooldown ago; fresh reports
// whether it did.
func (c *Cache) Reload(ctx context.Context, id string) (secrets []string, fresh bool, err error) {
	c.mu.Lock()
	e := c.entries[id]
	stale := e == nil || c.now().Sub(e.loadedAt) >= c.cooldown
	c.mu.Unlock()
	if !stale {
		return nil, false, nil
	}
	secrets, err = c.load(ctx, id, c.cooldown)
	return secrets, err == nil, err
}

func (c *Cache) load(ctx context.Context, id string, maxAge time.Duration) ([]string, error) {
	c.mu.Lock()
	e := c.entries[id]
	if e != nil {
		select {
		case <-e.done:
			if e.err == nil && c.now().Sub(e.loadedAt) < maxAge {
				c.mu.Unlock()
				return e.secrets, nil
			}
			e = nil
		default: // a read in flight: share it
		}
	}
	if e == nil {
		e = &cached{done: make(chan struct{})}
		c.entries[id] = e
		go func() {
			secrets, err := c.store.Get(context.WithoutCancel(ctx), id)
			c.mu.Lock()
			e.secrets, e.err, e.loadedAt = secrets, err, c.now()
			if err != nil && c.entries[id] == e {
				delete(c.entries, id)
			}
			c.mu.Unlock()
			close(e.done)
		}()
	}
	c.mu.Unlock()
	select {
	case <-e.done:
		return e.secrets, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Cache) forget(id string) {
	c.mu.Lock()
	delete(c.entries, id)
	c.mu.Unlock()
}
