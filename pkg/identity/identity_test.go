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

// TestPrincipalClaim: a deployment names one of the known principal claims, or none (sub); any
// other name is refused, so a function never reads nobody as its caller.
func TestPrincipalClaim(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"", "sub", true},
		{"sub", "sub", true},
		{"email", "email", true},
		{"username", "username", true},
		{"cognito:username", "cognito:username", true},
		{"name", "", false},
		{"Sub", "", false},
		{" username", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := identity.PrincipalClaim(tt.name)
			if got != tt.want || (err == nil) != tt.ok {
				t.Errorf("PrincipalClaim(%q) = %q, %v; want %q, ok %v", tt.name, got, err, tt.want, tt.ok)
			}
		})
	}
}
