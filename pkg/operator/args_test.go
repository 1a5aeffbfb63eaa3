package operator

import (
	"flag"
	"slices"
	"testing"
)

// TestArgs: a command's flags may come before, between or after its arguments; after "--"
// everything is an argument; a repeated flag keeps every value.
func TestArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		in     []string
		n      int
		pos    []string
		follow bool
		corr   []string
	}{
		{"flags after", []string{"r1", "--follow"}, 1, []string{"r1"}, true, nil},
		{"flags before", []string{"--follow", "r1"}, 1, []string{"r1"}, true, nil},
		{"flags between", []string{"r1", "--follow", "n1"}, 2, []string{"r1", "n1"}, true, nil},
		{"after --", []string{"--", "--follow"}, 1, []string{"--follow"}, false, nil},
		{"arguments after --", []string{"r1", "--", "n1", "--follow"}, 3, []string{"r1", "n1", "--follow"}, false, nil},
		{"repeated", []string{"stripe", "--c", "/a", "--c", "/b"}, 1, []string{"stripe"}, false, []string{"/a", "/b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			follow := fs.Bool("follow", false, "")
			var corr multi
			fs.Var(&corr, "c", "")
			pos, err := args(fs, tc.in, tc.n)
			if err != nil || !slices.Equal(pos, tc.pos) || *follow != tc.follow || !slices.Equal(corr, tc.corr) {
				t.Errorf("args(%q) = %q, %v; follow %v, c %q; want %q, follow %v, c %q", tc.in, pos, err, *follow, corr, tc.pos, tc.follow, tc.corr)
			}
		})
	}
}
