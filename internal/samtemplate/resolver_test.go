package samtemplate_test

import (
	"slices"
	"testing"

	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// TestTheAuthorizerAdmitsEveryAppClient: the HTTP API's JWT authorizer takes every app client
// JwtAudience lists (the approvers' and the engines'), and the approval page signs in with the
// first, as CloudFormation resolves the template; the local stack reads both the same way.
func TestTheAuthorizerAdmitsEveryAppClient(t *testing.T) {
	t.Parallel()
	tmpl := load(t)
	auth, err := tmpl.Authorizer("HttpApi", "JwtAuthorizer")
	if err != nil {
		t.Fatal(err)
	}
	functions, err := tmpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(functions, func(f samtemplate.Function) bool { return f.Name == "approval-page" })
	if i < 0 {
		t.Fatal("no approval-page function")
	}
	tests := []struct {
		audiences string
		want      []string
	}{
		{"approvers", []string{"approvers"}},
		{"approvers,engine-a,engine-b", []string{"approvers", "engine-a", "engine-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.audiences, func(t *testing.T) {
			t.Parallel()
			res := samtemplate.Resolver{Template: tmpl, Overrides: map[string]string{"JwtAudience": tt.audiences}}
			if got, err := res.List(auth.Audience); err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("the authorizer's audience %q, %v; want %q", got, err, tt.want)
			}
			if client, err := res.String(functions[i].Environment["OIDC_CLIENT_ID"]); client != tt.want[0] || err != nil {
				t.Errorf("the page signs in as %q, %v; want %q", client, err, tt.want[0])
			}
		})
	}
}

// TestResolverLists: a list is a YAML list of values or a Ref to a CommaDelimitedList
// parameter, and !Select picks from either; a Ref to a String parameter is no list, and a
// !Select past the end is an error, not an empty value.
func TestResolverLists(t *testing.T) {
	t.Parallel()
	tmpl := &samtemplate.Template{Parameters: map[string]struct {
		Type    string
		Default any
	}{
		"Clients": {Type: "CommaDelimitedList", Default: "a,b"},
		"One":     {Type: "String", Default: "x"},
	}}
	res := samtemplate.Resolver{Template: tmpl}
	ref := func(name string) map[string]any { return map[string]any{"Ref": name} }
	lists := []struct {
		name string
		v    any
		want []string
	}{
		{"a list parameter", ref("Clients"), []string{"a", "b"}},
		{"a list of values", []any{ref("One"), "y"}, []string{"x", "y"}},
		{"a string parameter", ref("One"), nil},
		{"a string", "a,b", nil},
	}
	for _, tt := range lists {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := res.List(tt.v)
			if !slices.Equal(got, tt.want) || (err == nil) != (tt.want != nil) {
				t.Errorf("List = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	selects := []struct {
		name string
		v    any
		want string
	}{
		{"the first", map[string]any{"Fn::Select": []any{"0", ref("Clients")}}, "a"},
		{"the second", map[string]any{"Fn::Select": []any{float64(1), ref("Clients")}}, "b"},
		{"past the end", map[string]any{"Fn::Select": []any{"2", ref("Clients")}}, ""},
		{"of no list", map[string]any{"Fn::Select": []any{"0", ref("One")}}, ""},
	}
	for _, tt := range selects {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := res.String(tt.v)
			if got != tt.want || (err == nil) != (tt.want != "") {
				t.Errorf("String = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
