package e2e

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestOpenAPIMatchesTheTemplate: openapi.yaml documents exactly the routes template.yaml
// deploys, method for method.
func TestOpenAPIMatchesTheTemplate(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root(t), "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi %s, want 3.1", doc.OpenAPI)
	}
	var documented []string
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(documented)
	deployed := slices.Sorted(maps.Keys(templateRoutes(t)))
	if !slices.Equal(documented, deployed) {
		t.Errorf("openapi.yaml documents\n  %v\ntemplate.yaml deploys\n  %v", documented, deployed)
	}
}
