// Command gentemplate rewrites the per-function regions of template.yaml from
// functions/manifest.yaml and pkg/apigw's route table (package gentemplate); with -check it
// changes nothing and fails, naming the first differing line, while template.yaml is not what
// they generate, so CI catches an edit made to the generated text instead of the manifest.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

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
	have, want, err := gentemplate.Template(filepath.Dir(path))
	if err != nil {
		return err
	}
	if check {
		if diff := gentemplate.FirstDifference(have, want); diff != "" {
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
