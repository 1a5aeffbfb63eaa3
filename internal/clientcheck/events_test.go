package clientcheck_test

import (
	"os"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
)

// TestOneListOfEventTypes: the domain's list of event types (interrupt.Events, which the
// published events schema is held to by pkg/schema) is the one that openapi.yaml's EventType
// enum, the subscriptions' filter and the client's constants say, in the same order.
func TestOneListOfEventTypes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas struct {
				EventType struct {
					Enum []string `yaml:"enum"`
				} `yaml:"EventType"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]string{
		"openapi.yaml's EventType (but \"*\")": slices.DeleteFunc(slices.Clone(doc.Components.Schemas.EventType.Enum), func(s string) bool { return s == "*" }),
		"the subscriptions' filter":            outbound.EventTypes,
		"the client's EventTypes":              client.EventTypes,
	} {
		if !slices.Equal(got, interrupt.Events) {
			t.Errorf("%s: %v, the domain's %v", name, got, interrupt.Events)
		}
	}
}
