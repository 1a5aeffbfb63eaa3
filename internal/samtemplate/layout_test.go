package samtemplate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheLayoutIsTheTree: the layout section of docs/design.md names every package directory
// of the repository (pkg/, internal/, infra/local/ and its commands), and names none that is
// gone, so a reader finds any behaviour from the folder names.
func TestTheLayoutIsTheTree(t *testing.T) {
	r := root(t)
	raw, err := os.ReadFile(filepath.Join(r, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "## Layout\n")
	section, _, _ := strings.Cut(after, "\n## ")
	// The map is the section's fenced block; the prose around it names no path.
	_, fenced, fenceOK := strings.Cut(section, "```")
	_, fenced, _ = strings.Cut(fenced, "\n") // past the fence's info string
	layout, _, _ := strings.Cut(fenced, "\n```")
	if !ok || !fenceOK || layout == "" {
		t.Fatal("docs/design.md has no Layout section with its map in a fenced block")
	}
	// An entry is a line's first word: at the margin a path from the root, indented by two a
	// path under the entry above it; deeper lines continue a description.
	named := map[string]bool{}
	var parent string
	for _, line := range strings.Split(layout, "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		word, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		word = strings.TrimSuffix(word, "/")
		switch {
		case word == "" || strings.HasPrefix(word, "`"):
		case indent == 0:
			parent = word
			named[word] = true
		case indent == 2:
			named[parent+"/"+word] = true
		}
	}
	for _, dir := range []string{"pkg", "internal", "infra/local", "infra/local/cmd"} {
		entries, err := os.ReadDir(filepath.Join(r, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() || e.Name() == "node_modules" || e.Name() == "cmd" {
				continue
			}
			if path := dir + "/" + e.Name(); !named[path] {
				t.Errorf("docs/design.md's layout does not name %s", path)
			}
		}
	}
	for path := range named {
		if strings.Contains(path, "<") {
			continue // functions/<name>/main.go stands for each function
		}
		if _, err := os.Stat(filepath.Join(r, path)); err != nil {
			t.Errorf("docs/design.md's layout names %s, which is not in the tree", path)
		}
	}
}
