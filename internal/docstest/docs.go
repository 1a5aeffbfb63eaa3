// Package docstest reads the shell blocks of README.md and docs/*.md and says which of them the
// docs' test runs against the local stack, and why the others are not run. The docs are walks a
// newcomer pastes: a block that drifted from the host (a missing Content-Type, an undefined
// variable, a run id that collides) fails someone's first hour, so `make test` runs every block
// that talks to the stack (README, "The docs are tested"; docs/design.md, "Local stack").
package docstest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Block is one fenced block of a doc, where it stands, and the reason a `<!-- not run: why -->`
// comment right before it gives for not running it: what the test needs to run it in order,
// to report it, and to name it when it fails.
type Block struct {
	File   string // the doc's path from the repository root
	Line   int    // the line of the opening fence, from 1
	Lang   string // the fence's info string: "sh", "json", "" ...
	Text   string // the block's lines, without the fence's indentation
	NotRun string // the reason of a not-run comment right before the block, "" when none
}

// Where names the block as a reader finds it: file:line of its opening fence.
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// stack is what a block that talks to the local stack names: the gateway's address in either
// form, the development tokens' command, the operator's command line.
var stack = regexp.MustCompile(`\b(?:localhost|127\.0\.0\.1):3000\b|devtoken|ihctl`)

// TalksToStack says whether the block names the local stack (the rule README states): only such
// a block needs a stack, so only such a block is run.
func (b Block) TalksToStack() bool { return stack.MatchString(b.Text) }

// Shell says whether the block is a shell block, the only kind the test runs.
func (b Block) Shell() bool { return b.Lang == "sh" || b.Lang == "bash" }

// Run says whether the test runs the block, and otherwise why not, in words for its report.
func (b Block) Run() (bool, string) {
	switch {
	case !b.Shell():
		return false, "not a shell block"
	case !b.TalksToStack():
		return false, "does not talk to the stack"
	case b.NotRun != "":
		return false, "not run: " + b.NotRun
	}
	return true, ""
}

var (
	fence  = regexp.MustCompile("^( *)```(.*)$")
	notRun = regexp.MustCompile(`^\s*<!--\s*not run\b(.*?)-->\s*$`)
)

// Parse reads the fenced blocks of one doc, src being its text and file its path from the
// repository root. A not-run comment without a reason, or one that no block follows, is an
// error: the reason is what the test reports, and a stray comment would read as one that
// excludes a block.
func Parse(file, src string) ([]Block, error) {
	lines := strings.Split(src, "\n")
	var blocks []Block
	pending, pendingLine := "", 0
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := notRun.FindStringSubmatch(line); m != nil {
			if pending != "" {
				return nil, fmt.Errorf("%s:%d: a not-run comment that no block follows", file, pendingLine)
			}
			reason := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m[1]), ":"))
			if reason == "" {
				return nil, fmt.Errorf("%s:%d: a not-run comment says no reason (<!-- not run: why -->)", file, i+1)
			}
			pending, pendingLine = reason, i+1
			continue
		}
		m := fence.FindStringSubmatch(line)
		if m == nil {
			if pending != "" && strings.TrimSpace(line) != "" {
				return nil, fmt.Errorf("%s:%d: a not-run comment that no block follows", file, pendingLine)
			}
			continue
		}
		indent, lang := m[1], strings.TrimSpace(m[2])
		b := Block{File: file, Line: i + 1, Lang: lang, NotRun: pending}
		pending = ""
		var text []string
		closed := false
		for i++; i < len(lines); i++ {
			if strings.TrimRight(lines[i], " ") == indent+"```" {
				closed = true
				break
			}
			text = append(text, strings.TrimPrefix(lines[i], indent))
		}
		if !closed {
			return nil, fmt.Errorf("%s: the block of line %d is never closed", b.Where(), b.Line)
		}
		b.Text = strings.Join(text, "\n")
		blocks = append(blocks, b)
	}
	if pending != "" {
		return nil, fmt.Errorf("%s:%d: a not-run comment that no block follows", file, pendingLine)
	}
	return blocks, nil
}

var (
	// literalRun is a run path whose id is written out: two walks, or one walked twice, on a
	// shared stack would meet in it.
	literalRun = regexp.MustCompile(`/runs/([A-Za-z0-9._:-]+)`)
	jsonBody   = regexp.MustCompile(`(?:^|\s)(?:-d|--data|--data-raw|--data-binary)\s+['"]\{`)
	browser    = regexp.MustCompile(`(?m)^\s*chromium\s`)
	serves     = regexp.MustCompile(`(?m)^\s*make run\b`)
)

// commands are the block's commands as bash reads them: continued lines joined, comments
// dropped.
func commands(text string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") && cur.Len() == 0 {
			continue
		}
		if s, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(s)
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// Check holds a block to the rules a walk keeps, so that a reader pasting it, or two readers
// on one stack, get what it says: every JSON body sent with its Content-Type (the host answers
// 415 otherwise), a run of its own in every run path of a block that runs, no `make run` in
// one (it would hold the test until its timeout), the way to get a
// browser where it opens one, and no shell example outside a labelled block where the
// selection could not see it. It answers what is wrong, nothing when the block keeps them.
func Check(b Block) []string {
	var problems []string
	if b.Lang == "" && b.TalksToStack() {
		problems = append(problems, "an unlabelled block that talks to the stack: label it sh, so that the test runs it or says why not")
	}
	if !b.Shell() {
		return problems
	}
	for _, c := range commands(b.Text) {
		if strings.Contains(c, "curl ") && jsonBody.MatchString(c) && !strings.Contains(c, "Content-Type: application/json") {
			problems = append(problems, fmt.Sprintf("a JSON body without -H 'Content-Type: application/json' (415): %.80s", strings.TrimSpace(c)))
		}
	}
	if run, _ := b.Run(); run {
		if serves.MatchString(b.Text) {
			problems = append(problems, "runs make run, which serves until Ctrl-C: give it a not-run comment")
		}
		for _, m := range literalRun.FindAllStringSubmatch(b.Text, -1) {
			problems = append(problems, fmt.Sprintf("the run id %q is written out: give the walk a run of its own (RUN=name-$(date +%%s))", m[1]))
		}
	}
	if browser.MatchString(b.Text) && !strings.Contains(b.Text, "make browser") {
		problems = append(problems, "opens chromium without naming make browser, which installs it")
	}
	return problems
}

// Docs are the docs whose blocks the test reads, from the repository root: README.md first,
// then docs/*.md by name, the order the README leads a reader in.
func Docs(root string) ([]string, error) {
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(guides)
	docs := []string{"README.md"}
	for _, g := range guides {
		docs = append(docs, filepath.ToSlash(strings.TrimPrefix(g, root+string(filepath.Separator))))
	}
	return docs, nil
}

// Root is the repository root: the nearest directory at or above dir holding go.mod and
// README.md, where the blocks run, as a reader runs them.
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no repository root (go.mod beside README.md) above %s", dir)
		}
		dir = parent
	}
}
