package app_test

import (
	"os"
	"regexp"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/interrupthost/interrupthost/pkg/app"
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
			t.Setenv(app.EnvEscalation, v)
			_, err := app.HostConfig()
			if admitted := pattern.MatchString(v); admitted && err != nil {
				t.Errorf("the template admits %q: %v; the functions start with it: %v (%v)", v, admitted, err == nil, err)
			}
		})
	}
}
