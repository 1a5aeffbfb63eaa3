package docstest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/docstest"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []docstest.Block // Text, Lang, Line, NotRun
		err       string
	}{
		{name: "a block", src: "text\n```sh\necho hi\n```\n",
			want: []docstest.Block{{Line: 2, Lang: "sh", Text: "echo hi"}}},
		{name: "indented in a list", src: "1. step\n\n   ```sh\n   curl localhost:3000\n     -d x\n   ```\n",
			want: []docstest.Block{{Line: 3, Lang: "sh", Text: "curl localhost:3000\n  -d x"}}},
		{name: "a not-run comment", src: "<!-- not run: it serves until Ctrl-C -->\n```sh\nmake run\n```\n```\nplain\n```\n",
			want: []docstest.Block{{Line: 2, Lang: "sh", Text: "make run", NotRun: "it serves until Ctrl-C"}, {Line: 5, Text: "plain"}}},
		{name: "a blank line between", src: "<!-- not run: why -->\n\n```sh\nx\n```\n",
			want: []docstest.Block{{Line: 3, Lang: "sh", Text: "x", NotRun: "why"}}},
		{name: "no reason", src: "<!-- not run -->\n```sh\nx\n```\n", err: "says no reason"},
		{name: "no block follows", src: "<!-- not run: why -->\nprose\n```sh\nx\n```\n", err: "no block follows"},
		{name: "at the end", src: "```sh\nx\n```\n<!-- not run: why -->\n", err: "no block follows"},
		{name: "never closed", src: "```sh\nx\n", err: "never closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := docstest.Parse("doc.md", tc.src)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				tc.want[i].File = "doc.md"
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    docstest.Block
		run  bool
		why  string
	}{
		{"the gateway", docstest.Block{Lang: "sh", Text: "curl -s localhost:3000/runs/$RUN"}, true, ""},
		{"its other spelling", docstest.Block{Lang: "bash", Text: "curl http://127.0.0.1:3000/inbox"}, true, ""},
		{"a development token", docstest.Block{Lang: "sh", Text: "T=$(go run ./infra/local/cmd/devtoken -sub a)"}, true, ""},
		{"the operator's command line", docstest.Block{Lang: "sh", Text: "ihctl pending"}, true, ""},
		{"a deploy", docstest.Block{Lang: "sh", Text: "sam deploy --guided"}, false, "does not talk to the stack"},
		{"excluded", docstest.Block{Lang: "sh", Text: "make run  # 127.0.0.1:3000", NotRun: "it serves"}, false, "not run: it serves"},
		{"JSON", docstest.Block{Lang: "json", Text: `{"url": "http://127.0.0.1:3000/mcp"}`}, false, "not a shell block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, why := tc.b.Run()
			if run != tc.run || why != tc.why {
				t.Errorf("Run() = %v, %q; want %v, %q", run, why, tc.run, tc.why)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    docstest.Block
		want string // a problem containing this, "" for none
	}{
		{"a walk", docstest.Block{Lang: "sh", Text: "RUN=quick-$(date +%s)\ncurl -s -X POST localhost:3000/runs/$RUN/interrupts \\\n  -H 'Content-Type: application/json' -d '{\"nodeId\":\"a\"}'"}, ""},
		{"no Content-Type", docstest.Block{Lang: "sh", Text: "curl -s -X PUT localhost:3000/contacts/principal/alice \\\n  -d '{\"slack\":\"U0ALICE\"}'"}, "Content-Type"},
		{"no Content-Type, not run", docstest.Block{Lang: "sh", NotRun: "why", Text: "curl -X PUT localhost:3000/local-faults -d '{}'"}, "Content-Type"},
		{"a form body", docstest.Block{Lang: "sh", Text: "curl -u a:b -d grant_type=client_credentials https://example.com/token"}, ""},
		{"a literal run", docstest.Block{Lang: "sh", Text: "curl localhost:3000/runs/run-1/interrupts -H 'Content-Type: application/json' -d '{}'"}, `"run-1"`},
		{"a literal run, not run", docstest.Block{Lang: "sh", NotRun: "a deployed host", Text: "ihctl run run-1"}, ""},
		{"make run", docstest.Block{Lang: "sh", Text: "make run    # the API on http://127.0.0.1:3000"}, "not-run comment"},
		{"make run, not run", docstest.Block{Lang: "sh", NotRun: "it serves", Text: "make run    # the API on http://127.0.0.1:3000"}, ""},
		{"a browser", docstest.Block{Lang: "sh", Text: "chromium http://127.0.0.1:3000/approve/$TOKEN"}, "make browser"},
		{"a browser, named", docstest.Block{Lang: "sh", Text: "# make browser installs it\nchromium http://127.0.0.1:3000/approve/$TOKEN"}, ""},
		{"unlabelled", docstest.Block{Text: "curl localhost:3000/inbox"}, "unlabelled"},
		{"unlabelled, elsewhere", docstest.Block{Text: "curl \"$API/integrations/slack\""}, ""},
		{"a comment", docstest.Block{Lang: "sh", Text: "# -d '{\"a\":1}' without a header, in words\ntrue"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := docstest.Check(tc.b)
			if tc.want == "" {
				if len(got) > 0 {
					t.Errorf("problems %q, want none", got)
				}
				return
			}
			if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("problems %q, want one naming %q", got, tc.want)
			}
		})
	}
}

func TestRewrite(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"curl localhost:3000/runs/$RUN", "curl 127.0.0.1:40123/runs/$RUN"},
		{"curl http://127.0.0.1:3000/inbox", "curl http://127.0.0.1:40123/inbox"},
		{"devtoken -sub ops -tenant acme -scopes x # tenant acme", "devtoken -sub ops -tenant docs-t1 -scopes x # tenant docs-t1"},
		{"acmeish acme-corp alice@example.com", "acmeish docs-t1-corp alice@example.com"},
		{"127.0.0.1:30000 localhost:8000", "127.0.0.1:30000 localhost:8000"},
	} {
		if got := docstest.Rewrite(tc.in, "http://127.0.0.1:40123", "docs-t1"); got != tc.want {
			t.Errorf("Rewrite(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestAFailureNamesTheDocsLine runs a script of two blocks, the second failing on its second
// command, and reads the failure back as that command's line in the doc: what a broken block's
// report says. It needs bash alone, no stack.
func TestAFailureNamesTheDocsLine(t *testing.T) {
	blocks := []docstest.Block{
		{File: "doc.md", Line: 3, Lang: "sh", Text: "X=$(echo devtoken)"},
		{File: "doc.md", Line: 10, Lang: "sh", Text: "echo \"$X\"\nfalse\necho never"},
	}
	for _, tc := range []struct {
		name, text, want string
	}{
		{"a failing command", "false", "the command at doc.md:12"},
		{"an undefined variable", "echo $UNDEFINED", "the command at doc.md:12"},
		{"an unexpected status", "EXPECT=409 curl --silent http://127.0.0.1:1/", "the command at doc.md:12"},
		{"a curl that fails", "curl --silent http://127.0.0.1:1/", "the command at doc.md:12"},
		{"a page that fails", "chromium http://127.0.0.1:1/approve/x  # make browser", "the command at doc.md:12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocks[1].Text = "echo \"$X\" devtoken\n" + tc.text + "\necho never"
			s := docstest.NewScript(blocks, "http://127.0.0.1:1", "docs-t")
			out, err := exec.Command("bash", "-c", s.Text).CombinedOutput()
			if err == nil {
				t.Fatalf("the script succeeded:\n%s", out)
			}
			if strings.Contains(string(out), "never") {
				t.Errorf("the script went on past the failure:\n%s", out)
			}
			if got := s.Failure(string(out)); got != tc.want {
				t.Errorf("Failure = %q, want %q\n%s", got, tc.want, out)
			}
		})
	}
}

// file is one doc as the test reads it.
type file struct {
	name   string
	blocks []docstest.Block
}

// docs reads every doc, failing on one that does not parse.
func docs(t *testing.T) (string, []file) {
	t.Helper()
	root, err := docstest.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	names, err := docstest.Docs(root)
	if err != nil {
		t.Fatal(err)
	}
	var files []file
	for _, name := range names {
		src, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := docstest.Parse(name, string(src))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, file{name, blocks})
	}
	return root, files
}

// TestTheDocsBlocksAreSelected reads every doc and reports, block by block, which the stack test
// runs and why each other is not run; every block keeps the rules of Check. It runs under
// -short too, on any clone: a block that would not run, or could not run twice, is found
// without a stack.
func TestTheDocsBlocksAreSelected(t *testing.T) {
	_, files := docs(t)
	ran := 0
	for _, f := range files {
		for _, b := range f.blocks {
			for _, p := range docstest.Check(b) {
				t.Errorf("%s: %s", b.Where(), p)
			}
			if !b.Shell() {
				continue
			}
			if run, why := b.Run(); run {
				ran++
				t.Logf("%s: runs", b.Where())
			} else {
				t.Logf("%s: skipped, %s", b.Where(), why)
			}
		}
	}
	// The README's first request is the walk every newcomer takes: it must be among them.
	if !slices.ContainsFunc(files[0].blocks, func(b docstest.Block) bool { run, _ := b.Run(); return run }) {
		t.Errorf("no block of %s runs: its first request must", files[0].name)
	}
	if ran == 0 {
		t.Error("no block runs")
	}
}

// perFile bounds one doc's walk: it waits on the stream's deliveries (a second or two each)
// and builds the commands it runs with go run, once cached.
const perFile = 5 * time.Minute

// TestTheDocsCommandsRun runs, for each doc, its blocks that talk to the stack in order in one
// bash, from the repository root, against the stack stack exec started (GATEWAY_URL), with a
// fresh tenant for the doc in place of acme. Without a stack it fails, as every test of the
// stack does, unless -short: then TestTheDocsBlocksAreSelected is what runs.
func TestTheDocsCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("the docs' commands need the stack; -short checks their selection only")
	}
	gateway := os.Getenv("GATEWAY_URL")
	if gateway == "" {
		t.Fatal("GATEWAY_URL is unset: run under the stack (make test, or .local/bin/stack exec -- go test ./internal/docstest/)")
	}
	root, files := docs(t)
	stamp := time.Now().UnixNano()
	for _, f := range files {
		var run []docstest.Block
		for _, b := range f.blocks {
			if ok, why := b.Run(); ok {
				run = append(run, b)
			} else if b.Shell() {
				t.Logf("%s: skipped, %s", b.Where(), why)
			}
		}
		if len(run) == 0 {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			tenant := fmt.Sprintf("docs-%s-%d", strings.TrimSuffix(filepath.Base(f.name), ".md"), stamp)
			s := docstest.NewScript(run, gateway, tenant)
			out, err := runScript(t, root, s.Text)
			if err != nil {
				t.Fatalf("%s failed (%v) in %s, tenant %s; its output:\n%s", f.name, err, s.Failure(out), tenant, out)
			}
			for _, b := range run {
				t.Logf("%s: ran", b.Where())
			}
			if testing.Verbose() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// runScript runs a doc's script in bash from root, its output (stdout and stderr, interleaved as
// a reader sees them) through a pipe the test holds, so that Run returns when bash does even if
// a block left a receiver in the background holding the pipe; the process group, that receiver
// with it, is killed when bash ends or the time is up, which closes the pipe.
func runScript(t *testing.T, root, script string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), perFile)
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out strings.Builder
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = io.Copy(&out, r)
	}()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	runErr := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the blocks left in the background
	}
	w.Close()
	<-read
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		runErr = fmt.Errorf("not done after %v: %w", perFile, runErr)
	}
	return out.String(), runErr
}
