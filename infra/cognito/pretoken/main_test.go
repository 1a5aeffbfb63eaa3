package main

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// event is a pre-token-generation event as Cognito sends it: version 2 for a person's sign-in,
// version 3 for a machine's client-credentials grant.
func event(t *testing.T, raw string) events.CognitoEventUserPoolsPreTokenGenV2_0 {
	t.Helper()
	var ev events.CognitoEventUserPoolsPreTokenGenV2_0
	if err := json.Unmarshal([]byte(raw), &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// personEvent is alice's sign-in: her tenant and roles attributes, her groups, her address as given.
func personEvent(emailVerified string) string {
	return `{"version":"2","triggerSource":"TokenGeneration_HostedAuth","region":"eu-west-1","userPoolId":"eu-west-1_AbCdEf",
	"userName":"alice","callerContext":{"awsSdkVersion":"aws-sdk-unknown-unknown","clientId":"approvers"},
	"request":{"userAttributes":{"sub":"7d1f0b2e-33c4-4e0a-b6a1-6f1c2b3a4d5e","email":"alice@example.com","email_verified":"` + emailVerified + `",
	"custom:tenant":"acme","custom:roles":"manager, deputy manager,"},
	"groupConfiguration":{"groupsToOverride":["finance","operators"],"iamRolesToOverride":[],"preferredRole":null},
	"scopes":["openid"]},"response":{"claimsAndScopeOverrideDetails":null}}`
}

// machineEvent is an engine's client-credentials grant.
func machineEvent(clientID string) string {
	return `{"version":"3","triggerSource":"TokenGeneration_ClientCredentials","region":"eu-west-1","userPoolId":"eu-west-1_AbCdEf",
	"callerContext":{"awsSdkVersion":"aws-sdk-unknown-unknown","clientId":"` + clientID + `"},
	"request":{"userAttributes":{},"groupConfiguration":{"groupsToOverride":[],"iamRolesToOverride":[],"preferredRole":null},
	"scopes":["https://api.example.com/interrupts:write"]},"response":{"claimsAndScopeOverrideDetails":null}}`
}

// TestHandle: a person's tokens both gain the tenant, groups and roles claims; the access token
// the scopes of the person's groups; the principal claim the deployment reads is written where
// Cognito does not write it; a machine's access token gains its client's tenant and principal.
func TestHandle(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"GROUP_SCOPES": `{"operators":["https://api.example.com/runs:configure","https://api.example.com/runs:read"],"finance":["https://api.example.com/runs:read"]}`,
		"CLIENTS":      `{"engine-a":{"tenant":"acme","principal":"billing-agent"}}`,
	}
	person := map[string]any{"tenant": "acme", "groups": []string{"finance", "operators"}, "roles": []string{"manager", "deputy manager"}}
	with := func(m map[string]any, k string, v any) map[string]any {
		out := maps.Clone(m)
		out[k] = v
		return out
	}
	scopes := []string{"https://api.example.com/runs:configure", "https://api.example.com/runs:read"}
	tests := []struct {
		name       string
		principal  string
		event      string
		id, access map[string]any
		suppressID []string
		scopes     []string
	}{
		{"a person, by sub", "", personEvent("true"), person, person, nil, scopes},
		{"a person, by username: the ID token gains it", "username", personEvent("true"), with(person, "username", "alice"), person, nil, scopes},
		{"a person, by a verified email: the access token gains it", "email", personEvent("true"), person, with(person, "email", "alice@example.com"), nil, scopes},
		{"a person, by an unverified email: neither token names it", "email", personEvent("false"), person, person, []string{"email"}, scopes},
		{"a person, by cognito:username, which Cognito writes itself", "cognito:username", personEvent("true"), person, person, nil, scopes},
		{"a person in no group with no tenant", "", strings.NewReplacer(`"finance","operators"`, "", `"custom:tenant":"acme","custom:roles":"manager, deputy manager,"`, `"custom:other":"x"`).Replace(personEvent("true")),
			map[string]any{"groups": []string{}}, map[string]any{"groups": []string{}}, nil, nil},
		{"a listed engine, by username", "username", machineEvent("engine-a"), nil, map[string]any{"tenant": "acme", "username": "billing-agent"}, nil, nil},
		{"a listed engine, by sub: its client id is its sub already", "", machineEvent("engine-a"), nil, map[string]any{"tenant": "acme"}, nil, nil},
		{"a listed engine, by cognito:username, which the trigger cannot write", "cognito:username", machineEvent("engine-a"), nil, map[string]any{"tenant": "acme"}, nil, nil},
		{"an engine not listed", "username", machineEvent("engine-z"), nil, map[string]any{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := configFromEnv(func(k string) string {
				if k == "PRINCIPAL_CLAIM" {
					return tt.principal
				}
				return env[k]
			})
			if err != nil {
				t.Fatal(err)
			}
			ev := event(t, tt.event)
			got := cfg.handle(ev).Response.ClaimsAndScopeOverrideDetails
			// Compared as Cognito reads the answer: JSON.
			for name, c := range map[string]struct{ got, want any }{
				"ID token claims":     {got.IDTokenGeneration.ClaimsToAddOrOverride, tt.id},
				"access token claims": {got.AccessTokenGeneration.ClaimsToAddOrOverride, tt.access},
				"ID token suppressed": {got.IDTokenGeneration.ClaimsToSuppress, tt.suppressID},
				"scopes":              {got.AccessTokenGeneration.ScopesToAdd, tt.scopes},
				"groups":              {got.GroupOverrideDetails, ev.Request.GroupConfiguration},
			} {
				if g, w := asJSON(t, c.got), asJSON(t, c.want); g != w {
					t.Errorf("%s %s, want %s", name, g, w)
				}
			}
		})
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConfigFromEnv: the defaults are the stack's; a principal claim the host does not know, or
// a table that is not the documented JSON, stops the trigger instead of issuing tokens the host
// would refuse.
func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		ok   bool
	}{
		{"nothing set", nil, true},
		{"every setting", map[string]string{"PRINCIPAL_CLAIM": "username", "GROUP_SCOPES": `{"ops":["runs:read"]}`, "CLIENTS": `{"c":{"tenant":"acme"}}`}, true},
		{"an unknown principal claim", map[string]string{"PRINCIPAL_CLAIM": "name"}, false},
		{"scopes that are not a list", map[string]string{"GROUP_SCOPES": `{"ops":"runs:read"}`}, false},
		{"clients that are not JSON", map[string]string{"CLIENTS": `c=acme`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := configFromEnv(func(k string) string { return tt.env[k] })
			if (err == nil) != tt.ok {
				t.Fatalf("%v, want ok %v", err, tt.ok)
			}
			if tt.env == nil && (cfg.tenantClaim != "tenant" || cfg.groupsClaim != "groups" || cfg.rolesClaim != "roles" ||
				cfg.tenantAttribute != "custom:tenant" || cfg.rolesAttribute != "custom:roles" || cfg.principalClaim != "sub") {
				t.Errorf("defaults %+v", cfg)
			}
		})
	}
}
