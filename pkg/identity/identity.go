// Package identity reads who a caller is from its identity provider's claims, by one rule
// wherever the claims come from (the bearer JWT the gateway verified, the ID token an approver
// signed in with): a tenant is a string claim and nothing else, and group and role claims are a
// JSON array of names, or one string that is one name, matched whole.
package identity

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// PrincipalClaims are the claims a deployment may name as its callers' principal (the template's
// PrincipalClaim): the one an approval's approversList names, OverridePrincipals lists, and the
// log records as who decided. sub is every provider's; the others are readable names an identity
// provider can be made to issue in both its access and ID tokens (docs/operations.md, "Identity
// providers"), so approvers see people, not ids.
var PrincipalClaims = []string{"sub", "email", "username", "cognito:username"}

// DefaultPrincipalClaim is the principal claim when a deployment names none.
const DefaultPrincipalClaim = "sub"

// PrincipalClaim is name, or DefaultPrincipalClaim when name is empty; any name outside
// PrincipalClaims is an error, so a function configured with a claim the template would not
// admit refuses to start instead of reading nobody as the caller.
func PrincipalClaim(name string) (string, error) {
	if name == "" {
		return DefaultPrincipalClaim, nil
	}
	if !slices.Contains(PrincipalClaims, name) {
		return "", fmt.Errorf("identity: %q is not a principal claim (one of %s)", name, strings.Join(PrincipalClaims, ", "))
	}
	return name, nil
}

// Claims are a token's claims as its issuer wrote them, each value as its JSON.
type Claims map[string]json.RawMessage

// Text is a claim that must be a JSON string; anything else (a number, a boolean, an array) is
// no value at all, so a numeric tenant is no tenant.
func (c Claims) Text(name string) string {
	var s string
	if json.Unmarshal(c[name], &s) != nil {
		return ""
	}
	return s
}

// Names is a multi-valued claim: a JSON array of names, or one string that is one name (never
// split, so names may hold spaces, commas and brackets: "Finance Admins" is one group). Members
// that are not strings are ignored.
func (c Claims) Names(name string) []string {
	if s := c.Text(name); s != "" {
		return []string{s}
	}
	var items []json.RawMessage
	if json.Unmarshal(c[name], &items) != nil {
		return nil
	}
	var out []string
	for _, item := range items {
		var s string
		if json.Unmarshal(item, &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	return out
}
