package apigw

import (
	"maps"
	"os"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// TestEveryCodeIsDocumented: openapi.yaml's Problem lists exactly the codes the one map gives a
// status, so a code added to the domain and the map joins the document too (a generated client
// or schemathesis would otherwise refuse the answers that carry it).
func TestEveryCodeIsDocumented(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas struct {
				Problem struct {
					Properties struct {
						Code struct {
							Enum []interrupt.Code `yaml:"enum"`
						} `yaml:"code"`
					} `yaml:"properties"`
				} `yaml:"Problem"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	documented := slices.Sorted(slices.Values(doc.Components.Schemas.Problem.Properties.Code.Enum))
	if mapped := slices.Sorted(maps.Keys(statusOf)); !slices.Equal(documented, mapped) {
		t.Errorf("openapi.yaml's Problem codes %v, the codes mapped to a status %v", documented, mapped)
	}
}
