package identity_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/identity"
)

// TestClaims: a tenant is a string claim and nothing else; groups and roles are an array of
// names or one name, matched whole, and whatever is not a string is no name.
func TestClaims(t *testing.T) {
	var c identity.Claims
	if err := json.Unmarshal([]byte(`{"tenant":"acme","numeric":42,"one":"Finance Admins","many":["ops","not admins",7,"",{"a":1}],"none":null,"bracketed":"[a b]"}`), &c); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"tenant": "acme", "numeric": "", "many": "", "missing": ""} {
		if got := c.Text(name); got != want {
			t.Errorf("Text(%s) = %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string][]string{"one": {"Finance Admins"}, "many": {"ops", "not admins"}, "none": nil, "numeric": nil, "bracketed": {"[a b]"}, "missing": nil} {
		if got := c.Names(name); !slices.Equal(got, want) {
			t.Errorf("Names(%s) = %q, want %q", name, got, want)
		}
	}
}
