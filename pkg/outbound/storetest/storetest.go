package storetest

import (
	"testing"

	"github.com/interrupthost/interrupthost/pkg/outbound"
)

// Exercise runs every case of the outbound.Store contract against stores that open returns, one
// subtest a case, so that a store's test names which part of the contract it breaks. Call it
// from a store package's tests; open must return an empty store each time (see the package doc).
func Exercise(t *testing.T, open func(t *testing.T) outbound.Store) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, func(*testing.T) outbound.Store)
	}{
		{"subscription limit", subscriptionLimit},
		{"contract", contract},
		{"refused keys", refusedKeys},
		{"mailed", mailed},
		{"mail count", mailCount},
		{"asked", asked},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, open)
		})
	}
}

// second is the error of a call that answers more.
func second[T any](_ T, err error) error { return err }
