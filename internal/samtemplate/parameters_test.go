package samtemplate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// TestEveryParameterIsDocumented: every parameter of template.yaml has a row of
// docs/operations.md's parameter table, so an operator finds what each sets.
func TestEveryParameterIsDocumented(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join(root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root(t), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for line := range strings.Lines(string(raw)) {
		if strings.HasPrefix(line, "| `") {
			first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
			rows = append(rows, first)
		}
	}
	for name := range tmpl.Parameters {
		documented := false
		for _, r := range rows {
			documented = documented || strings.Contains(r, "`"+name+"`")
		}
		if !documented {
			t.Errorf("template parameter %s has no row in docs/operations.md's parameter table", name)
		}
	}
}
