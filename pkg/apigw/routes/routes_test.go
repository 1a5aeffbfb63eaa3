package routes

import (
	"slices"
	"testing"
)

// TestEveryFunctionHasItsPlace: every function the packages serve is in order, once.
func TestEveryFunctionHasItsPlace(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Functions() {
		if !slices.Contains(order, r.Function) {
			t.Errorf("%s: not in order", r.Function)
		}
		if seen[r.Function] {
			t.Errorf("%s: served twice", r.Function)
		}
		seen[r.Function] = true
	}
}
