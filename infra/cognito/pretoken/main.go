// Command pretoken is the Cognito pre-token-generation trigger of a user pool the interrupt host
// trusts (docs/operations.md, "Cognito, step by step"). Cognito writes neither the host's tenant
// claim nor its groups and roles claims in the form the host reads, and nothing custom in an
// access token at all: this trigger adds them to the access token (and the ID token the approval
// page reads), from the user's attributes and Cognito groups for people, from a table of app
// clients for engines, so every token the host accepts names a tenant, and the principal claim
// the deployment reads (PrincipalClaim) is in both tokens.
//
// It answers Cognito's V2_0 event (people's tokens) and V3_0 event (also machine-to-machine
// client-credentials tokens), which differ only in which access tokens they apply to. Access
// tokens can be customized only in a user pool on the Essentials or Plus feature plan.
//
// Configuration, from the environment:
//
//   - TENANT_CLAIM (tenant), GROUPS_CLAIM (groups), ROLES_CLAIM (roles): the claims to write, as
//     the stack's TenantClaim, GroupsClaim and RolesClaim name them.
//   - TENANT_ATTRIBUTE (custom:tenant), ROLES_ATTRIBUTE (custom:roles): the user attributes a
//     person's tenant and comma-separated roles are read from. Groups are the user's Cognito
//     groups.
//   - PRINCIPAL_CLAIM (sub): the stack's PrincipalClaim. Cognito writes a person's username in
//     access tokens only and the email in ID tokens only: the trigger adds username to the ID
//     token, and a verified email to the access token (taking an unverified one out of the ID
//     token), so each names the same person in both. Cognito reserves sub and cognito:username,
//     which the trigger never writes: cognito:username is in ID tokens only, so with it nobody
//     calling the API has a principal.
//   - GROUP_SCOPES: a JSON object from a Cognito group to the scopes its members' access tokens
//     gain (as issued, with the ScopePrefix), e.g. {"operators":["https://api.example.com/runs:configure"]}.
//   - CLIENTS: a JSON object from an engine's app client id to its tenant and, for a
//     PrincipalClaim of username or email, its principal:
//     {"<client id>":{"tenant":"acme","principal":"billing-agent"}}.
//     A machine token's sub is its client id; one of a client not listed gets no tenant, and the
//     host refuses it.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/identity"
)

func main() {
	cfg, err := configFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pretoken:", err)
		os.Exit(1)
	}
	lambda.Start(func(_ context.Context, ev events.CognitoEventUserPoolsPreTokenGenV2_0) (events.CognitoEventUserPoolsPreTokenGenV2_0, error) {
		return cfg.handle(ev), nil
	})
}

// client is what CLIENTS says of one engine's app client.
type client struct {
	Tenant    string `json:"tenant"`
	Principal string `json:"principal"`
}

// config is the trigger's configuration (the package doc).
type config struct {
	tenantClaim, groupsClaim, rolesClaim string
	tenantAttribute, rolesAttribute      string
	principalClaim                       string
	groupScopes                          map[string][]string
	clients                              map[string]client
}

// configFromEnv reads the configuration with getenv, refusing what would issue tokens the host
// cannot read: a principal claim it does not know, tables that are not JSON.
func configFromEnv(getenv func(string) string) (config, error) {
	c := config{
		tenantClaim: cmp.Or(getenv("TENANT_CLAIM"), "tenant"), groupsClaim: cmp.Or(getenv("GROUPS_CLAIM"), "groups"),
		rolesClaim: cmp.Or(getenv("ROLES_CLAIM"), "roles"), tenantAttribute: cmp.Or(getenv("TENANT_ATTRIBUTE"), "custom:tenant"),
		rolesAttribute: cmp.Or(getenv("ROLES_ATTRIBUTE"), "custom:roles"),
	}
	var err error
	if c.principalClaim, err = identity.PrincipalClaim(getenv("PRINCIPAL_CLAIM")); err != nil {
		return c, err
	}
	for name, into := range map[string]any{"GROUP_SCOPES": &c.groupScopes, "CLIENTS": &c.clients} {
		if raw := getenv(name); raw != "" {
			if err := json.Unmarshal([]byte(raw), into); err != nil {
				return c, fmt.Errorf("%s is not a JSON object of the documented shape: %w", name, err)
			}
		}
	}
	return c, nil
}

// clientCredentials is the trigger source of a machine-to-machine token (V3_0 events only).
const clientCredentials = "TokenGeneration_ClientCredentials"

// handle answers ev with the claims and scopes to add: a machine's from CLIENTS, a person's from
// their attributes and groups. Nothing is suppressed, and the groups stay Cognito's.
func (c config) handle(ev events.CognitoEventUserPoolsPreTokenGenV2_0) events.CognitoEventUserPoolsPreTokenGenV2_0 {
	out := &ev.Response.ClaimsAndScopeOverrideDetails
	out.GroupOverrideDetails = ev.Request.GroupConfiguration
	if ev.TriggerSource == clientCredentials {
		cl := c.clients[ev.CallerContext.ClientID]
		access := map[string]any{}
		if cl.Tenant != "" {
			access[c.tenantClaim] = cl.Tenant
		}
		if c.writesPrincipal() && cl.Principal != "" {
			access[c.principalClaim] = cl.Principal
		}
		out.AccessTokenGeneration.ClaimsToAddOrOverride = access
		return ev
	}
	attrs := ev.Request.UserAttributes
	both := map[string]any{c.groupsClaim: nonNil(ev.Request.GroupConfiguration.GroupsToOverride)}
	if tenant := attrs[c.tenantAttribute]; tenant != "" {
		both[c.tenantClaim] = tenant
	}
	if roles := names(attrs[c.rolesAttribute]); len(roles) > 0 {
		both[c.rolesClaim] = roles
	}
	id, access := maps.Clone(both), maps.Clone(both)
	switch c.principalClaim {
	case "username":
		id["username"] = ev.UserName
	case "email":
		if attrs["email_verified"] == "true" && attrs["email"] != "" {
			access["email"] = attrs["email"]
		} else {
			// Anyone may type an address; only a verified one names a person.
			out.IDTokenGeneration.ClaimsToSuppress = []string{"email"}
		}
	}
	var scopes []string
	for _, g := range ev.Request.GroupConfiguration.GroupsToOverride {
		scopes = append(scopes, c.groupScopes[g]...)
	}
	slices.Sort(scopes)
	out.IDTokenGeneration.ClaimsToAddOrOverride = id
	out.AccessTokenGeneration.ClaimsToAddOrOverride = access
	out.AccessTokenGeneration.ScopesToAdd = slices.Compact(scopes)
	return ev
}

// writesPrincipal reports whether the principal claim is one the trigger writes: Cognito keeps
// sub and cognito:username to itself.
func (c config) writesPrincipal() bool {
	return c.principalClaim == "username" || c.principalClaim == "email"
}

// names are the comma-separated names of an attribute, trimmed, empty ones left out.
func names(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// nonNil is names as a JSON array even when there are none, so a person in no group carries an
// empty groups claim rather than null.
func nonNil(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}
