// Package keyring holds the MAC keys of signed tokens, selected by kid, as Secrets Manager
// stores them: one secret whose value is {"active": "<kid>", "keys": {"<kid>": "<base64>"}}.
// Keys are cached in memory; an unknown kid triggers one shared refresh, and then none for a
// cooldown, so a flood of tokens with random kids costs at most one secret read per cooldown.
package keyring

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// MinKeyLen is the shortest key accepted: HMAC-SHA256 keys shorter than its output weaken it.
const MinKeyLen = 32

// Source reads the secret's current value.
type Source interface {
	Fetch(ctx context.Context) ([]byte, error)
}

// Options tune the cache.
type Options struct {
	// TTL is how long a read of the secret is trusted; 0 means 5 minutes.
	TTL time.Duration
	// Cooldown is the least time between two refreshes caused by unknown kids or failures; 0
	// means 30 seconds.
	Cooldown time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Keyring is safe for concurrent use.
type Keyring struct {
	src  Source
	opts Options

	mu       sync.Mutex
	keys     map[string][]byte
	active   string
	loadedAt time.Time
	// lastAttempt is the last read of the secret, successful or not: a failing store is not
	// read again on TTL expiry before the cooldown.
	lastAttempt time.Time
	// lastMiss is the last read caused by an unknown kid: the cooldown between two of those is
	// what bounds a flood of random kids. A read for the TTL does not start it, so a kid added
	// by a rotation just after one is learnt at once.
	lastMiss time.Time
	// lastErr is the last read's error, nil once a read succeeded.
	lastErr error
	flight  *flight
}

type flight struct {
	done chan struct{}
	err  error
}

// unloadedRetry is how soon a keyring without keys (Secrets Manager was unavailable when it
// started) reads the secret again, at most: each request that needs a key asks.
const unloadedRetry = time.Second

// New reads the secret once and refuses a keyring it cannot use: a function whose secret is
// missing, unreadable to it or not a usable keyring must not start. A Secrets Manager that is
// only unavailable (interrupt.ErrUnavailable) does not stop it: the keyring starts without keys,
// answers ErrUnavailable while it has none, and reads the secret again as requests need it, so
// the function recovers with the store, without a new cold start.
func New(ctx context.Context, src Source, opts Options) (*Keyring, error) {
	if opts.TTL == 0 {
		opts.TTL = 5 * time.Minute
	}
	if opts.Cooldown == 0 {
		opts.Cooldown = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	k := &Keyring{src: src, opts: opts}
	if err := k.refresh(ctx); err != nil && !errors.Is(err, interrupt.ErrUnavailable) {
		return nil, err
	}
	return k, nil
}

// Parse validates a secret value: an active kid that is among the keys, every kid well formed,
// every key at least MinKeyLen bytes.
func Parse(raw []byte) (active string, keys map[string][]byte, err error) {
	var v struct {
		Active string            `json:"active"`
		Keys   map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", nil, errors.New("keyring: the secret is not a JSON keyring")
	}
	keys = make(map[string][]byte, len(v.Keys))
	for kid, b64 := range v.Keys {
		if !token.ValidKid(kid) {
			return "", nil, fmt.Errorf("keyring: kid %q is not well formed", kid)
		}
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return "", nil, fmt.Errorf("keyring: key %q is not base64", kid)
		}
		if len(key) < MinKeyLen {
			return "", nil, fmt.Errorf("keyring: key %q has %d bytes, want at least %d", kid, len(key), MinKeyLen)
		}
		keys[kid] = key
	}
	if _, ok := keys[v.Active]; !ok || v.Active == token.LegacyKid {
		return "", nil, fmt.Errorf("keyring: active kid %q is not a signing key of the secret", v.Active)
	}
	return v.Active, keys, nil
}

// refresh reads the secret; concurrent callers share one read. A failed read keeps the last good
// keys.
func (k *Keyring) refresh(ctx context.Context) error {
	k.mu.Lock()
	if f := k.flight; f != nil {
		k.mu.Unlock()
		select {
		case <-f.done:
			return f.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	k.flight = f
	k.mu.Unlock()

	// The read is shared: one caller's cancellation must not fail the others.
	readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	raw, err := k.src.Fetch(readCtx)
	cancel()
	var active string
	var keys map[string][]byte
	if err == nil {
		active, keys, err = Parse(raw)
	}
	now := k.opts.Now()
	k.mu.Lock()
	if err == nil {
		k.active, k.keys, k.loadedAt = active, keys, now
	}
	k.lastAttempt, k.lastErr, k.flight, f.err = now, err, nil, err
	k.mu.Unlock()
	close(f.done)
	return err
}

// current returns the cached keys, refreshing first when the TTL has passed (and no refresh
// failed within the cooldown), or, without keys, when none was tried for unloadedRetry. Without
// keys it answers why: the last read's error.
func (k *Keyring) current(ctx context.Context) (string, map[string][]byte, error) {
	now := k.opts.Now()
	k.mu.Lock()
	stale := now.Sub(k.loadedAt) >= k.opts.TTL && now.Sub(k.lastAttempt) >= k.opts.Cooldown
	if k.keys == nil {
		stale = now.Sub(k.lastAttempt) >= unloadedRetry
	}
	k.mu.Unlock()
	if stale {
		_ = k.refresh(ctx)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys == nil {
		return "", nil, fmt.Errorf("keyring: no keys yet: %w", k.lastErr)
	}
	return k.active, k.keys, nil
}

// Active is the kid and key new tokens are signed with; an error (interrupt.ErrUnavailable)
// only while the keyring has never been read.
func (k *Keyring) Active(ctx context.Context) (string, []byte, error) {
	active, keys, err := k.current(ctx)
	if err != nil {
		return "", nil, err
	}
	return active, keys[active], nil
}

// Key returns the key kid selects. An unknown kid refreshes the cache once per cooldown; between
// refreshes it is refused at once (token.ErrUnknownKid). While the last read of the secret
// failed, an unknown kid may be a key that read would have brought: it answers that error
// (interrupt.ErrUnavailable), not a verdict on the token.
func (k *Keyring) Key(ctx context.Context, kid string) ([]byte, error) {
	_, keys, err := k.current(ctx)
	if err != nil {
		return nil, err
	}
	if key, ok := keys[kid]; ok {
		return key, nil
	}
	now := k.opts.Now()
	k.mu.Lock()
	cooling := !k.lastMiss.IsZero() && now.Sub(k.lastMiss) < k.opts.Cooldown
	if !cooling {
		k.lastMiss = now
	}
	k.mu.Unlock()
	if !cooling {
		_ = k.refresh(ctx)
	}
	k.mu.Lock()
	key, ok := k.keys[kid]
	failed := k.lastErr
	k.mu.Unlock()
	switch {
	case ok:
		return key, nil
	case failed != nil:
		return nil, fmt.Errorf("keyring: kid %q unknown while the secret cannot be read: %w", kid, failed)
	}
	return nil, token.ErrUnknownKid
}
