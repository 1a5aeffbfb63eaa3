package main

import (
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestSideBySide holds the comparison to its meaning: means over the rounds, the ratio this
// tree over the baseline, CPU per invocation for the functions the cycle calls and per cycle
// for the rest, and nothing for a group neither side spent on.
func TestSideBySide(t *testing.T) {
	run := func(cycles int, cpu groups) result {
		st := &stats{cycles: cycles, steps: map[string][]time.Duration{
			"request": make([]time.Duration, cycles), "resolve": make([]time.Duration, cycles), "snapshot": make([]time.Duration, cycles),
		}}
		return result{cfg: config{clients: 8, duration: 10 * time.Second, surface: "run"}, stats: st, took: 10 * time.Second, cpu: cpu}
	}
	base := &side{name: "baseline", results: []result{
		run(1000, groups{"function get-run": 2 * time.Second, "dynalite": 3 * time.Second, "moto": 0}),
		run(1400, groups{"function get-run": 2 * time.Second, "dynalite": 3 * time.Second, "moto": 0}),
	}}
	this := &side{name: "this tree", results: []result{
		run(1800, groups{"function get-run": 900 * time.Millisecond, "dynalite": 3 * time.Second, "moto": 0}),
		run(1800, groups{"function get-run": 900 * time.Millisecond, "dynalite": 3 * time.Second, "moto": 0}),
	}}
	var out strings.Builder
	sideBySide(&out, base, this)
	for _, want := range []string{
		"mean of 2 round(s), 8 clients, 10s each, surface run",
		"cycles/s                                            120.000      180.000    1.50x",
		"CPU ms/invocation get-run                             1.714        0.500    0.29x",
		"CPU ms/cycle dynalite                                 2.571        1.667    0.65x",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "moto") || strings.Contains(out.String(), "CPU ms/cycle function get-run") {
		t.Errorf("a group neither side spent on, or a cycle function per cycle:\n%s", out.String())
	}
}

// TestAStackThatExitsWhileStarting: the tool reports it at once and its stop does not wait for
// an exit that has already happened (both watch the same closed channel).
func TestAStackThatExitsWhileStarting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing serves there
	stack := exec.Command("sh", "-c", "exit 3")
	if err := stack.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = stack.Wait(); close(exited) }()
	if err := awaitStack(url, exited); !errors.Is(err, errExited) {
		t.Fatalf("awaitStack: %v, want errExited", err)
	}
	done := make(chan struct{})
	go func() { stop(stack, exited); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("stop waited for a stack that had exited")
	}
}

func TestParseMarks(t *testing.T) {
	t.Parallel()
	for in, ok := range map[string]bool{"20,4000,20000": true, "20": true, " 20 , 40": true, "40,20": false, "20,20": false, "x": false, "-1": false, "": false} {
		if _, err := parseMarks(in); (err == nil) != ok {
			t.Errorf("%q: %v", in, err)
		}
	}
}
