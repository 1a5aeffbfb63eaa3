package environ_test

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/pkg/environ"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/identity"
)

// TestTheTemplateAdmitsWhatTheFunctionsAccept: every EscalationThreshold value the template's
// AllowedPattern admits starts the functions (0 among them: a deployment whose agents never
// escalate), so no stack deploys to functions that cannot start. The functions also read a few
// spellings the template refuses (".5"), which no deployment can pass them.
func TestTheTemplateAdmitsWhatTheFunctionsAccept(t *testing.T) {
	raw, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Parameters map[string]struct {
			AllowedPattern string `yaml:"AllowedPattern"`
		} `yaml:"Parameters"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	pattern, err := regexp.Compile(tpl.Parameters["EscalationThreshold"].AllowedPattern)
	if err != nil || pattern.String() == "" {
		t.Fatalf("EscalationThreshold's AllowedPattern %q: %v", pattern, err)
	}
	for _, v := range []string{"0", "0.0", "0.5", "0.7", "0.05", "1", "1.0", "1.5", "2", "-0.1", ".5", "0.", "1e-3", "abc", "0x1"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(environ.EnvEscalation, v)
			_, err := environ.Host()
			if admitted := pattern.MatchString(v); admitted && err != nil {
				t.Errorf("the template admits %q: %v; the functions start with it: %v (%v)", v, admitted, err == nil, err)
			}
		})
	}
}

// TestThePrincipalClaimsAreTheTemplates: the template's PrincipalClaim admits exactly the claims
// the functions read as a principal, with the same default, so every value a stack deploys with
// starts the functions, and a value outside them stops a function instead of reading nobody.
func TestThePrincipalClaimsAreTheTemplates(t *testing.T) {
	raw, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Parameters map[string]struct {
			Default       string   `yaml:"Default"`
			AllowedValues []string `yaml:"AllowedValues"`
		} `yaml:"Parameters"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	p := tpl.Parameters["PrincipalClaim"]
	if !slices.Equal(p.AllowedValues, identity.PrincipalClaims) || p.Default != identity.DefaultPrincipalClaim {
		t.Errorf("the template admits %q (default %q), the functions read %q (default %q)", p.AllowedValues, p.Default, identity.PrincipalClaims, identity.DefaultPrincipalClaim)
	}
	tests := []struct {
		env, want string
	}{
		{"", "sub"},
		{"username", "username"},
		{"cognito:username", "cognito:username"},
		{"preferred_username", ""},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(environ.EnvPrincipalClaim, tt.env)
			opts, err := environ.APIOptions(host.Config{})
			if opts.PrincipalClaim != tt.want || (err == nil) != (tt.want != "") {
				t.Errorf("%q, %v; want %q", opts.PrincipalClaim, err, tt.want)
			}
		})
	}
}

// TestTheFollowUpDefaults: FOLLOW_UP is the JSON of a request's reminders and escalation,
// held to the request's bounds; a value that is not stops the function at init, saying what.
func TestTheFollowUpDefaults(t *testing.T) {
	for _, c := range []struct {
		value string
		ok    bool
	}{
		{`{"reminders":{"afterMs":86400000,"everyMs":86400000,"count":2},"escalation":{"afterMs":172800000,"to":[{"kind":"group","ref":"ops"}]}}`, true},
		{`{"reminders":{"afterMs":60000,"count":1}}`, true},
		{`{"reminders":{"afterMs":1,"count":1}}`, false},
		{`{"escalation":{"afterMs":60000,"to":[]}}`, false},
		{`{"remind":{"afterMs":60000,"count":1}}`, false},
		{`not json`, false},
	} {
		t.Run(c.value, func(t *testing.T) {
			t.Setenv(environ.EnvFollowUp, c.value)
			hc, err := environ.Host()
			if (err == nil) != c.ok {
				t.Errorf("%s: %v, want ok %v", c.value, err, c.ok)
			}
			if c.ok && hc.FollowUp.Reminders == nil {
				t.Errorf("%s read as %+v", c.value, hc.FollowUp)
			}
		})
	}
}

// TestTheTemplateAdmitsTheClientURLsTheMCPFunctionTakes: every McpClientMetadataUrls value the
// template's AllowedPattern admits starts the mcp function (the local stack's among them), and
// one that is no list of http(s) URL patterns stops it, so that a typo allows no client (nor
// every one) unseen. The function also trims spaces the template refuses.
func TestTheTemplateAdmitsTheClientURLsTheMCPFunctionTakes(t *testing.T) {
	raw, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Parameters map[string]struct {
			AllowedPattern string `yaml:"AllowedPattern"`
		} `yaml:"Parameters"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	pattern, err := regexp.Compile(tpl.Parameters["McpClientMetadataUrls"].AllowedPattern)
	if err != nil || pattern.String() == "" {
		t.Fatalf("McpClientMetadataUrls' AllowedPattern %q: %v", pattern, err)
	}
	cases := []struct {
		value            string
		admitted, starts bool
	}{
		{"", true, true},
		{devjwt.LoopbackClientURLs, true, true},
		{"https://vscode.dev/oauth/client-metadata.json", true, true},
		{"https://vscode.dev/oauth/client-metadata.json,https://*.agents.example.com/*", true, true},
		{"*", false, false},
		{"vscode.dev/oauth/client-metadata.json", false, false},
		{"ftp://vscode.dev/c.json", false, false},
		{"https://vscode.dev/c.json#x", false, false},
		{"https://vscode.dev/a.json, https://vscode.dev/b.json", false, true},
	}
	for _, c := range cases {
		t.Run(c.value, func(t *testing.T) {
			t.Setenv(environ.EnvClientMetadataURLs, c.value)
			_, err := environ.ClientMetadataURLs()
			if starts := err == nil; starts != c.starts {
				t.Errorf("the function starts: %v (%v), want %v", starts, err, c.starts)
			}
			if admitted := pattern.MatchString(c.value); admitted != c.admitted {
				t.Errorf("the template admits it: %v, want %v", admitted, c.admitted)
			}
		})
	}
}
