package samtemplate_test

import (
	"slices"
	"testing"

	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// TestWhoWritesWhichPartition: as IAM decides it from template.yaml's roles, a tenant's
// delegations and its own log (the delegations' events) are written by the delegations
// function and the approval page's "I am away" alone; its tool policies by the policies
// function alone; and a run's log by no function that keeps only something else.
func TestWhoWritesWhichPartition(t *testing.T) {
	fns, err := load(t).Functions()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pk      string
		writers []string
	}{
		{"acme#delegations", []string{"approval-page", "delegations"}},
		{"acme#run#~tenant", []string{"approval-page", "delegations"}},
		{"acme#policies", []string{"policies"}},
	} {
		var got []string
		for _, f := range fns {
			if samtemplate.WritesKey(f.Statements, c.pk) {
				got = append(got, f.Name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.writers) {
			t.Errorf("%s is written by %v, want %v alone", c.pk, got, c.writers)
		}
	}
}

// TestWritesKeyAsIAMDecides holds the evaluation to IAM's: an allow scoped by leading keys, a
// deny that matches any, StringLike's '*'.
func TestWritesKeyAsIAMDecides(t *testing.T) {
	t.Parallel()
	put := []string{"dynamodb:PutItem"}
	allowAll := samtemplate.Statement{Effect: "Allow", Actions: put, Table: true}
	for _, c := range []struct {
		name string
		sts  []samtemplate.Statement
		pk   string
		want bool
	}{
		{"an allow on the table", []samtemplate.Statement{allowAll}, "acme#delegations", true},
		{"a deny that matches", []samtemplate.Statement{allowAll, {Effect: "Deny", Actions: put, Table: true, AnyKeys: []string{"*#delegations"}}}, "acme#delegations", false},
		{"a deny of another partition", []samtemplate.Statement{allowAll, {Effect: "Deny", Actions: put, Table: true, AnyKeys: []string{"*#policies"}}}, "acme#delegations", true},
		{"an allow scoped elsewhere", []samtemplate.Statement{{Effect: "Allow", Actions: put, Table: true, AllKeys: []string{"*#run#*"}}}, "acme#delegations", false},
		{"an allow scoped to runs reaches the tenant's log", []samtemplate.Statement{{Effect: "Allow", Actions: put, Table: true, AllKeys: []string{"*#run#*"}}}, "acme#run#~tenant", true},
		{"no write action", []samtemplate.Statement{{Effect: "Allow", Actions: []string{"dynamodb:Query"}, Table: true}}, "acme#delegations", false},
		{"another resource", []samtemplate.Statement{{Effect: "Allow", Actions: put}}, "acme#delegations", false},
	} {
		if got := samtemplate.WritesKey(c.sts, c.pk); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
