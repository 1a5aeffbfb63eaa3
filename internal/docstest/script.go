package docstest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Prelude is what the script defines before a doc's first block: strict bash, a marker on
// each failure naming the script's line (which Script.Where maps back to the doc), and the
// two stand-ins README describes. curl fails on an HTTP error as with --fail-with-body, unless
// the command states the status it expects (EXPECT=409 curl ...: for a person pasting it an
// unused variable); then any other status fails it. chromium fetches the page instead of
// opening it, and fails on an error status: no browser is driven under go test, and what a
// person would click is the browser test's (infra/local/browser).
// Inside the functions a failure returns (|| return) rather than exits, so that set -e stops
// the script at the doc's command, where the ERR trap, which functions do not inherit, names it.
const Prelude = `set -euo pipefail
trap 'echo "docstest: failed at script line $LINENO (exit $?)" >&2' ERR
curl() {
  if [ -z "${EXPECT:-}" ]; then
    command curl --fail-with-body --write-out '%{stderr}[HTTP %{http_code}]\n' "$@" || return
    return 0
  fi
  local body status rc=0
  body=$(mktemp)
  status=$(command curl --output "$body" --write-out '%{http_code}' "$@") || rc=$?
  cat "$body"
  rm -f "$body"
  echo "[HTTP $status, expected $EXPECT]" >&2
  if [ "$rc" -ne 0 ]; then return "$rc"; fi
  if [ "$status" != "$EXPECT" ]; then echo "docstest: HTTP $status where the doc expects $EXPECT" >&2; return 1; fi
}
chromium() {
  echo "docstest: chromium stands for a browser: fetching ${*: -1}" >&2
  command curl --silent --show-error --fail-with-body --output /dev/null --write-out '%{stderr}[page: HTTP %{http_code}]\n' "${*: -1}" || return
}
`

// Script is one doc's runnable blocks as one bash script, and where each of its lines came
// from, so that a failure names the doc's line rather than the script's.
type Script struct {
	Text  string
	lines map[int]string // script line -> file:line
}

// Where names the doc's line a line of the script came from, "" for the prelude's.
func (s Script) Where(line int) string { return s.lines[line] }

// Rewrite makes a block's text run against the test's stack: the gateway's address in both of
// the docs' spellings becomes gateway's host and port, and the example tenant acme becomes
// tenant, a fresh one, so that a walk meets no state of another run or another doc.
func Rewrite(text, gateway, tenant string) string {
	hostport := strings.TrimPrefix(strings.TrimPrefix(gateway, "http://"), "https://")
	hostport = strings.TrimSuffix(hostport, "/")
	text = gatewayAddr.ReplaceAllLiteralString(text, hostport)
	return acme.ReplaceAllLiteralString(text, tenant)
}

var (
	gatewayAddr = regexp.MustCompile(`\b(?:localhost|127\.0\.0\.1):3000\b`)
	acme        = regexp.MustCompile(`\bacme\b`)
)

// NewScript assembles the blocks that run, in order, after the prelude: each announced on
// stderr by file and line, rewritten for the stack (Rewrite).
func NewScript(blocks []Block, gateway, tenant string) Script {
	var b strings.Builder
	b.WriteString(Prelude)
	line := strings.Count(Prelude, "\n") + 1
	s := Script{lines: map[int]string{}}
	for _, blk := range blocks {
		if run, _ := blk.Run(); !run {
			continue
		}
		fmt.Fprintf(&b, "echo %s >&2\n", strconv.Quote("=== "+blk.Where()))
		line++
		for i, l := range strings.Split(Rewrite(blk.Text, gateway, tenant), "\n") {
			b.WriteString(l)
			b.WriteString("\n")
			s.lines[line] = fmt.Sprintf("%s:%d", blk.File, blk.Line+1+i)
			line++
		}
	}
	s.Text = b.String()
	return s
}

// failedAt is where bash says it stopped: the ERR trap's line, or its own message's (an unset
// variable under set -u stops bash without the trap).
var failedAt = regexp.MustCompile(`docstest: failed at script line (\d+)|bash: line (\d+): `)

// Failure reads a run's output for where it stopped: the doc's line of the failing command
// when bash reported one, else the last block it began (a block that hung until the timeout).
func (s Script) Failure(output string) string {
	if m := failedAt.FindAllStringSubmatch(output, -1); m != nil {
		last := m[len(m)-1]
		n, _ := strconv.Atoi(last[1] + last[2])
		if w := s.Where(n); w != "" {
			return "the command at " + w
		}
	}
	if i := strings.LastIndex(output, "=== "); i >= 0 {
		where, _, _ := strings.Cut(output[i+4:], "\n")
		return "the block at " + where
	}
	return "the prelude"
}
