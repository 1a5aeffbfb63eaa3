// Command gentemplate rewrites the per-function regions of template.yaml from
// functions/manifest.yaml and pkg/apigw's route table (package gentemplate), and the table of
// who may do what in docs/operations.md (package accesstable); with -check it changes nothing
// and fails, naming the first differing line, while either is not what they generate, so CI
// catches an edit made to the generated text instead of its source.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/interrupthost/interrupthost/internal/accesstable"
	"github.com/interrupthost/interrupthost/internal/gentemplate"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

func main() {
	check := flag.Bool("check", false, "change nothing; exit 1 if template.yaml is not what "+gentemplate.ManifestPath+" generates")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "gentemplate:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	path, err := samtemplate.Find(".")
	if err != nil {
		return err
	}
	root := filepath.Dir(path)
	have, want, err := gentemplate.Template(root)
	if err != nil {
		return err
	}
	if err := write(check, path, gentemplate.FirstDifference(have, want), have, want); err != nil {
		return err
	}
	have, want, err = accesstable.Document(root)
	if err != nil {
		return err
	}
	diff := gentemplate.FirstDifferenceIn(accesstable.DocPath, "pkg/apigw's and pkg/mcp's tables", have, want)
	return write(check, filepath.Join(root, accesstable.DocPath), diff, have, want)
}

// write makes path want, or with check fails with diff, where it is not.
func write(check bool, path, diff string, have, want []byte) error {
	if check {
		if diff != "" {
			return fmt.Errorf("%s; run go run ./internal/cmd/gentemplate", diff)
		}
		return nil
	}
	if bytes.Equal(have, want) {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, want, info.Mode().Perm())
}
