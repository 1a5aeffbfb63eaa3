package samtemplate_test

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/apigw/routes"
)

// span is one backticked span of the docs' text.
var span = regexp.MustCompile("`([^`]*)`")

var method = regexp.MustCompile(`^(GET|HEAD|POST|PUT|PATCH|DELETE)$`)

// readmeRoutes reads a cell of the route table of docs/engines.md: its route keys, in the
// shorthands the table writes them with. A span holding a path takes the methods of the spans before it that held a
// method alone ("`GET`/`POST /subscriptions`", "`GET` (and `HEAD`) `/interrupts/{token}`");
// a query string is no part of the route.
func readmeRoutes(cell string) []string {
	var keys, methods []string
	for _, m := range span.FindAllStringSubmatch(cell, -1) {
		s := m[1]
		if method.MatchString(s) {
			methods = append(methods, s)
			continue
		}
		f := strings.Fields(s)
		if len(f) == 0 {
			continue
		}
		p := f[len(f)-1]
		if !strings.HasPrefix(p, "/") {
			continue
		}
		p, _, _ = strings.Cut(p, "?")
		if len(f) == 2 && method.MatchString(f[0]) {
			methods = append(methods, f[0])
		}
		for _, m := range methods {
			keys = append(keys, m+" "+p)
		}
		methods = nil
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// TestTheRouteTableIsTheTable: the table under "The API" of docs/engines.md (the engine
// authors' guide, which the README links) names every function template.yaml deploys, once,
// and for each function of routes.Functions exactly its routes and the scopes that open them
// (each in backticks); a function the API does not invoke names no route. The table is what a
// reader checks first: a route it does not list, or one it lists that is gone, is a defect
// this finds.
func TestTheRouteTableIsTheTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root(t), "docs", "engines.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "| Function | Route | Scope |\n|---|---|---|\n")
	if !ok {
		t.Fatal("docs/engines.md has no route table (| Function | Route | Scope |)")
	}
	type row struct{ routes, scopes string }
	rows := map[string]row{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			t.Fatalf("a row of %d cells: %s", len(cells), line)
		}
		name := strings.TrimSpace(cells[0])
		if _, dup := rows[name]; dup {
			t.Errorf("%s: two rows", name)
		}
		var scopes []string
		for _, m := range span.FindAllStringSubmatch(cells[2], -1) {
			scopes = append(scopes, m[1])
		}
		slices.Sort(scopes)
		rows[name] = row{strings.Join(readmeRoutes(cells[1]), ", "), strings.Join(slices.Compact(scopes), " ")}
	}
	fns, err := load(t).Functions()
	if err != nil {
		t.Fatal(err)
	}
	deployed := map[string]bool{}
	for _, f := range fns {
		deployed[f.Name] = true
		if _, ok := rows[f.Name]; !ok {
			t.Errorf("%s: deployed by template.yaml, not in docs/engines.md's table", f.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		if !deployed[name] {
			t.Errorf("%s: in docs/engines.md's table, not deployed", name)
		}
	}
	for _, r := range routes.Functions() {
		var routes, scopes []string
		for _, o := range r.Operations {
			routes = append(routes, o.Route)
			scopes = append(scopes, o.Scopes...)
		}
		slices.Sort(routes)
		slices.Sort(scopes)
		want := row{strings.Join(routes, ", "), strings.Join(slices.Compact(scopes), " ")}
		if got := rows[r.Function]; got != want {
			t.Errorf("%s: docs/engines.md has routes [%s] scopes [%s]; the table [%s] [%s]", r.Function, got.routes, got.scopes, want.routes, want.scopes)
		}
		delete(rows, r.Function)
	}
	for name, r := range rows {
		if r.routes != "" {
			t.Errorf("%s: docs/engines.md lists routes [%s] for a function the API does not invoke", name, r.routes)
		}
	}
}
