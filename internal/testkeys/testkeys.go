// Package testkeys is the fixed keyring tests mint and verify tokens and cookies with, where
// the keyring's own caching and Secrets Manager are not what is tested, and what the rotation
// tests read of a keyring.
package testkeys

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/keyring"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// Static is a keyring of fixed keys by kid, signing under Active.
type Static struct {
	ActiveKid string
	Keys      map[string][]byte
}

// Active implements token.Keys.
func (s Static) Active(context.Context) (string, []byte, error) {
	return s.ActiveKid, s.Keys[s.ActiveKid], nil
}

// Key implements token.Keys: token.ErrUnknownKid for a kid it does not hold.
func (s Static) Key(_ context.Context, kid string) ([]byte, error) {
	if k, ok := s.Keys[kid]; ok {
		return k, nil
	}
	return nil, token.ErrUnknownKid
}

// Kids parses a keyring secret's value and answers its active kid and all its kids, sorted: what
// the rotation tests compare.
func Kids(t testing.TB, raw []byte) (string, []string) {
	t.Helper()
	active, keys, err := keyring.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return active, slices.Sorted(maps.Keys(keys))
}
