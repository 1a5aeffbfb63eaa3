package apigw

import (
	"slices"
	"testing"
)

func TestClaimList(t *testing.T) {
	cases := map[string][]string{
		"[finance ops]":       {"finance", "ops"},
		`["finance","ops"]`:   {"finance", "ops"},
		"finance,ops":         {"finance", "ops"},
		"finance":             {"finance"},
		"":                    nil,
		"[]":                  {},
		` [ finance  ops ] `:  {"finance", "ops"},
		`["a b","c"]`:         {"a b", "c"},
		"finance, ops , eng ": {"finance", "ops", "eng"},
	}
	for in, want := range cases {
		if got := claimList(in); !slices.Equal(got, want) {
			t.Errorf("claimList(%q) = %q, want %q", in, got, want)
		}
	}
}
