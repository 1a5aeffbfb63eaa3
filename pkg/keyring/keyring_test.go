package keyring_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go/middleware"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/keyring"
	smadapter "github.com/interrupthost/interrupthost/pkg/secretsmanager"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// reads counts GetSecretValue calls made through a client.
type reads struct{ n atomic.Int64 }

func (r *reads) option(o *secretsmanager.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("count", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			r.n.Add(1)
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	})
}

func newKeyring(t *testing.T, value string) (*keyring.Keyring, *reads, *testclock.Clock, func(string)) {
	t.Helper()
	r := &reads{}
	c, name := localaws.NewSecret(t, value, r.option)
	clk := testclock.New(time.Now())
	k, err := keyring.New(context.Background(), smadapter.NewKeyring(c, name), keyring.Options{TTL: time.Minute, Cooldown: 10 * time.Second, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	r.n.Store(0)
	return k, r, clk, func(v string) { localaws.PutSecret(t, c, name, v) }
}

func TestParse(t *testing.T) {
	k32, short := localaws.Key(), "c2hvcnQ="
	cases := []struct {
		name, value string
		ok          bool
	}{
		{"valid", localaws.Keyring("a", map[string]string{"a": k32, "legacy": k32}), true},
		{"key of 31 bytes", localaws.Keyring("a", map[string]string{"a": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="}), false},
		{"short key", localaws.Keyring("a", map[string]string{"a": short}), false},
		{"active missing", localaws.Keyring("b", map[string]string{"a": k32}), false},
		{"legacy active", localaws.Keyring("legacy", map[string]string{"legacy": k32}), false},
		{"bad kid", localaws.Keyring("a", map[string]string{"a": k32, "../x": k32}), false},
		{"not base64", localaws.Keyring("a", map[string]string{"a": "!!!"}), false},
		{"not json", "active=a", false},
	}
	for _, c := range cases {
		_, _, err := keyring.Parse([]byte(c.value))
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v", c.name, err)
		}
	}
}

func TestNewRefusesAnUnusableSecret(t *testing.T) {
	c, name := localaws.NewSecret(t, localaws.Keyring("a", map[string]string{"a": "c2hvcnQ="}))
	if _, err := keyring.New(context.Background(), smadapter.NewKeyring(c, name), keyring.Options{}); err == nil {
		t.Fatal("a keyring with a 5-byte key was accepted")
	}
	if _, err := keyring.New(context.Background(), smadapter.NewKeyring(c, "no-such-secret"), keyring.Options{}); err == nil {
		t.Fatal("a missing secret was accepted")
	}
}

func TestWarmLookupsReadNothing(t *testing.T) {
	k, r, _, _ := newKeyring(t, localaws.Keyring("a", map[string]string{"a": localaws.Key()}))
	for range 100 {
		if _, err := k.Key(context.Background(), "a"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := k.Active(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.n.Load(); n != 0 {
		t.Errorf("%d secret reads for warm lookups, want 0", n)
	}
}

func TestUnknownKidsReadOncePerCooldown(t *testing.T) {
	k, r, clk, _ := newKeyring(t, localaws.Keyring("a", map[string]string{"a": localaws.Key()}))
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			if _, err := k.Key(context.Background(), fmt.Sprintf("random-%d", i)); !errors.Is(err, token.ErrUnknownKid) {
				t.Errorf("kid %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if n := r.n.Load(); n > 1 {
		t.Errorf("100 unknown kids made %d secret reads, want at most 1", n)
	}
	clk.Advance(11 * time.Second)
	for i := range 100 {
		_, _ = k.Key(context.Background(), fmt.Sprintf("later-%d", i))
	}
	if n := r.n.Load(); n > 2 {
		t.Errorf("after one cooldown, 100 more unknown kids made %d reads in all, want at most 2", n)
	}
}

func TestRotation(t *testing.T) {
	keyA, keyB := localaws.Key(), localaws.Key()
	k, _, clk, put := newKeyring(t, localaws.Keyring("A", map[string]string{"A": keyA}))

	// B is added and becomes active: a token signed under B is learnt on first sight.
	put(localaws.Keyring("B", map[string]string{"A": keyA, "B": keyB}))
	if _, err := k.Key(context.Background(), "B"); err != nil {
		t.Fatalf("new kid B: %v", err)
	}
	if kid, _, _ := k.Active(context.Background()); kid != "B" {
		t.Errorf("active kid %s after refresh, want B", kid)
	}
	if _, err := k.Key(context.Background(), "A"); err != nil {
		t.Errorf("kid A after rotation: %v", err)
	}

	// A read for the TTL does not start the unknown-kid cooldown: a kid added right after one is
	// learnt on first sight.
	clk.Advance(2 * time.Minute)
	if _, err := k.Key(context.Background(), "B"); err != nil {
		t.Fatal(err)
	}
	keyC := localaws.Key()
	put(localaws.Keyring("C", map[string]string{"A": keyA, "B": keyB, "C": keyC}))
	if _, err := k.Key(context.Background(), "C"); err != nil {
		t.Errorf("kid C added just after a TTL refresh: %v", err)
	}

	// A is retired: once the TTL passes, A is refused.
	put(localaws.Keyring("C", map[string]string{"B": keyB, "C": keyC}))
	clk.Advance(2 * time.Minute)
	if _, err := k.Key(context.Background(), "A"); !errors.Is(err, token.ErrUnknownKid) {
		t.Errorf("retired kid A: %v, want ErrUnknownKid", err)
	}
}

func TestFailedRefreshKeepsTheLastGoodKeys(t *testing.T) {
	k, _, clk, put := newKeyring(t, localaws.Keyring("A", map[string]string{"A": localaws.Key()}))
	put(`{"active":"broken"}`)
	clk.Advance(2 * time.Minute)
	if _, err := k.Key(context.Background(), "A"); err != nil {
		t.Errorf("after a failed refresh: %v", err)
	}
	if kid, key, _ := k.Active(context.Background()); kid != "A" || len(key) != 32 {
		t.Errorf("active after a failed refresh: %s", kid)
	}
}

// flakySource is a keyring secret whose store can be switched off, as Secrets Manager failing.
type flakySource struct {
	mu    sync.Mutex
	value string
	down  bool
}

func (s *flakySource) Fetch(context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil, fmt.Errorf("flaky: %w", interrupt.ErrUnavailable)
	}
	return []byte(s.value), nil
}

func (s *flakySource) set(value string, down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.value, s.down = value, down
}

// TestAnUnavailableStoreIsNoVerdict: Secrets Manager down when a function starts does not stop
// it; while there are no keys every use answers unavailable, and the keyring recovers with the
// store without a new start. With keys, an unknown kid while the store is down is unavailable,
// not "unknown": the read that failed might have brought it.
func TestAnUnavailableStoreIsNoVerdict(t *testing.T) {
	ctx := context.Background()
	k32 := localaws.Key()
	src := &flakySource{down: true}
	clk := testclock.New(time.Now())
	k, err := keyring.New(ctx, src, keyring.Options{TTL: time.Minute, Cooldown: 10 * time.Second, Now: clk.Now})
	if err != nil {
		t.Fatalf("a function refused to start while Secrets Manager was down: %v", err)
	}
	if _, _, err := k.Active(ctx); !errors.Is(err, interrupt.ErrUnavailable) {
		t.Errorf("Active without keys: %v, want unavailable", err)
	}
	if _, err := k.Key(ctx, "a"); !errors.Is(err, interrupt.ErrUnavailable) {
		t.Errorf("Key without keys: %v, want unavailable", err)
	}
	src.set(localaws.Keyring("a", map[string]string{"a": k32}), false)
	clk.Advance(time.Second)
	if kid, _, err := k.Active(ctx); err != nil || kid != "a" {
		t.Fatalf("after the store came back: %q %v", kid, err)
	}
	src.set("", true)
	clk.Advance(time.Minute)
	if _, err := k.Key(ctx, "a"); err != nil {
		t.Errorf("a known kid while the store is down: %v, want the cached key", err)
	}
	if _, err := k.Key(ctx, "b"); !errors.Is(err, interrupt.ErrUnavailable) {
		t.Errorf("an unknown kid while the store is down: %v, want unavailable", err)
	}
	src.set(localaws.Keyring("a", map[string]string{"a": k32}), false)
	clk.Advance(11 * time.Second)
	if _, err := k.Key(ctx, "b"); !errors.Is(err, token.ErrUnknownKid) {
		t.Errorf("an unknown kid once the store answers: %v, want unknown kid", err)
	}
	if _, err := keyring.New(ctx, errSource{errors.New("no such secret")}, keyring.Options{}); err == nil {
		t.Errorf("a secret that cannot be read for good started a keyring")
	}
}

// errSource fails every read with err.
type errSource struct{ err error }

func (s errSource) Fetch(context.Context) ([]byte, error) { return nil, s.err }
