// Package testkeys is the fixed keyring tests mint and verify tokens and cookies with, where
// the keyring's own caching and Secrets Manager are not what is tested.
package testkeys

import (
	"context"

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
