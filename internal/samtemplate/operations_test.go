package samtemplate_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/interrupthost/interrupthost/internal/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/apigw/routes"
)

// route is one route as a source states it: who serves it and which scopes open it.
type route struct{ function, scopes string }

func tableRoutes() map[string]route {
	out := map[string]route{}
	for _, o := range routes.Operations() {
		out[o.Route] = route{o.Function, strings.Join(slices.Sorted(slices.Values(o.Scopes)), " ")}
	}
	return out
}

// TestTheTableIsTheTemplate: template.yaml deploys exactly the routes of routes.Operations, each
// to the function the table names, behind the JWT authorizer with the table's scopes, or
// without an authorizer where the table names none.
func TestTheTableIsTheTemplate(t *testing.T) {
	tmpl := load(t)
	fns, err := tmpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	// Scopes as a deployment without a scope prefix has them: the table's names.
	res := samtemplate.Resolver{Template: tmpl}
	deployed := map[string]route{}
	for _, f := range fns {
		for _, r := range f.Routes {
			scopes, err := res.Strings(r.Scopes)
			if err != nil {
				t.Fatalf("%s: %v", r.Key(), err)
			}
			if (r.Authorizer == samtemplate.NoAuthorizer) != (len(scopes) == 0) {
				t.Errorf("%s: authorizer %q with scopes %v", r.Key(), r.Authorizer, scopes)
			}
			deployed[r.Key()] = route{f.Name, strings.Join(slices.Sorted(slices.Values(scopes)), " ")}
		}
	}
	table := tableRoutes()
	for _, key := range slices.Sorted(maps.Keys(table)) {
		if got, ok := deployed[key]; !ok || got != table[key] {
			t.Errorf("%s: the table has %+v, template.yaml %+v (deployed: %v)", key, table[key], got, ok)
		}
	}
	for key := range deployed {
		if _, ok := table[key]; !ok {
			t.Errorf("%s: deployed by template.yaml, not in routes.Operations", key)
		}
	}
}

// TestTheTableIsTheDocument: openapi.yaml documents exactly the routes of routes.Operations, and
// each operation's summary names the scopes that open it.
func TestTheTableIsTheDocument(t *testing.T) {
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
	table := tableRoutes()
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for method, op := range item {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
			default:
				continue
			}
			key := strings.ToUpper(method) + " " + path
			documented[key] = true
			r, ok := table[key]
			if !ok {
				t.Errorf("%s: documented, not in routes.Operations", key)
				continue
			}
			o, _ := op.(map[string]any)
			summary, _ := o["summary"].(string)
			for _, scope := range strings.Fields(r.scopes) {
				if !strings.Contains(summary, scope) {
					t.Errorf("%s: the summary %q does not name scope %s", key, summary, scope)
				}
			}
		}
	}
	for key := range table {
		if !documented[key] {
			t.Errorf("%s: in routes.Operations, not documented", key)
		}
	}
}
