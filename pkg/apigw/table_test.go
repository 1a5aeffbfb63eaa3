package apigw_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/apigw/routes"
)

// TestEveryFunctionIsFuzzed: each function of routes.Operations has its fuzz target here
// (Fuzz<Function>, the folder name in CamelCase, in any test file), which make fuzz finds by
// listing them.
func TestEveryFunctionIsFuzzed(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") {
				targets = append(targets, fn.Name.Name)
			}
		}
	}
	for _, r := range routes.Functions() {
		fn := r.Function
		var camel strings.Builder
		for _, part := range strings.Split(fn, "-") {
			camel.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
		if !slices.Contains(targets, "Fuzz"+camel.String()) {
			t.Errorf("function %s has no fuzz target Fuzz%s (targets: %v)", fn, camel.String(), targets)
		}
	}
}

// TestEveryOperationIsOneRoute: no route is in the table twice, no function twice, and Function
// refuses a name that serves nothing.
func TestEveryOperationIsOneRoute(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, o := range routes.Operations() {
		if seen[o.Route] {
			t.Errorf("%s is in the table twice", o.Route)
		}
		seen[o.Route] = true
	}
	for _, r := range routes.Functions() {
		if seen[r.Function] || len(r.Operations) == 0 {
			t.Errorf("function %s: twice, or with no route", r.Function)
		}
		seen[r.Function] = true
	}
	if _, err := functionOf(&apigw.Gateway{}, "no-such-function", Services{}); err == nil {
		t.Error("Function answered for a function that serves nothing")
	}
}
