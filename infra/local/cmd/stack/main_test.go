package main

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/infra/local/gateway"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// TestTheMakefileBuildsAsTheStack: make run builds the stack, the emulator and the functions in
// one go build of its own (prebuild), which `stack run` must then find up to date: the same
// flags, the same emulator, the functions where the stack builds them.
func TestTheMakefileBuildsAsTheStack(t *testing.T) {
	tmpl, err := samtemplate.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(tmpl)
	vars := makeVariables(t, filepath.Join(root, "Makefile"))
	if got, want := shellWords(vars["GO_BUILD"]), append([]string{"go", "build"}, gateway.BuildFlags...); !slices.Equal(got, want) {
		t.Errorf("the Makefile's GO_BUILD is %q, want %q (gateway.BuildFlags)", got, want)
	}
	if got := vars["RIE"]; got != emulatorPackage {
		t.Errorf("the Makefile's RIE is %q, want %q", got, emulatorPackage)
	}
	if got, want := filepath.Join(root, vars["FUNCTIONS"]), newInstance(root, false).functions(); got != want {
		t.Errorf("the Makefile's FUNCTIONS is %s, want %s", got, want)
	}
	if got, want := filepath.Join(root, filepath.Dir(vars["STACK"]), "aws-lambda-rie"), emulator(root); got != want {
		t.Errorf("the Makefile links the emulator to %s, want %s", got, want)
	}
}

// makeVariables reads the simple assignments (NAME := value) of a Makefile.
func makeVariables(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), " := "); ok && !strings.ContainsAny(name, " \t") {
			vars[name] = strings.TrimSpace(value)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vars
}

// shellWords splits a command line as the shell does where only single quotes quote.
func shellWords(s string) []string {
	var words []string
	var word strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case !quoted && (r == ' ' || r == '\t'):
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}
