package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/metrics"
)

// functionLog is the stack's log of its functions' output: what Lambda sends to CloudWatch Logs.
func functionLog(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("STACK_FUNCTION_LOG"); p != "" {
		return p
	}
	return filepath.Join(root(t), ".local", "logs", "functions.log")
}

// logPoints are the metrics CloudWatch Logs would extract from the functions' output so far.
func logPoints(t testing.TB) []metrics.Point {
	t.Helper()
	f, err := os.Open(functionLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps, err := metrics.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestFunctionsPublishMetrics: the functions' binaries, configured by the template, write EMF
// lines under the stack's namespace: an interrupt requested and resolved, the caller who came
// second (409), and the scheduled sweep's lag all reach the log, and every EMF line in it is
// one CloudWatch would accept.
func TestFunctionsPublishMetrics(t *testing.T) {
	localaws.NeedsStack(t)
	t.Parallel()
	before := logPoints(t)
	eng, alice := jwt(t, engine), jwt(t, approver)
	run := newRun("metrics")
	if a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"n","payload":`+example(t, "custom")+`}`); a.Status != 201 {
		t.Fatalf("request: %d %s", a.Status, a.Body)
	}
	for _, want := range []int{200, 409} {
		if a := do(t, "POST", "/runs/"+run+"/interrupts/n", alice, `{"resumeValue":{}}`); a.Status != want {
			t.Fatalf("resolve: %d %s, want %d", a.Status, a.Body, want)
		}
	}
	custom := metrics.Dim{Name: metrics.DimKind, Value: "custom"}
	grew := []struct {
		name metrics.Name
		dims []metrics.Dim
	}{
		{metrics.Requested, []metrics.Dim{custom}},
		{metrics.Resolved, []metrics.Dim{custom}},
		{metrics.Conflicts, []metrics.Dim{{Name: metrics.DimCode, Value: "interrupt_already_resolved"}}},
	}
	// The emulator copies a function's output to the log as it comes: the lines may trail the
	// answer by a moment.
	var after []metrics.Point
	for until := time.Now().Add(15 * time.Second); ; <-time.After(100 * time.Millisecond) {
		after = logPoints(t)
		missing := 0
		for _, g := range grew {
			if metrics.Total(after, g.name, g.dims...) <= metrics.Total(before, g.name, g.dims...) {
				missing++
			}
		}
		if len(after) > len(before) && hasSweepLag(after[len(before):]) && missing == 0 {
			break
		}
		if time.Now().After(until) {
			for _, g := range grew {
				t.Errorf("%s %v: %v before, %v after", g.name, g.dims, metrics.Total(before, g.name, g.dims...), metrics.Total(after, g.name, g.dims...))
			}
			t.Fatalf("after 15 s the log has %d new points, a sweep's lag among them: %v", len(after)-len(before), hasSweepLag(after[len(before):]))
		}
	}
	want := "InterruptHost/" + os.Getenv("TABLE_NAME")
	for _, p := range after {
		if p.Namespace != want {
			t.Fatalf("a point in namespace %q, want the stack's %q: %+v", p.Namespace, want, p)
		}
	}
}

func hasSweepLag(ps []metrics.Point) bool {
	for _, p := range ps {
		if p.Name == metrics.SweepLag && p.Unit == metrics.Seconds {
			return true
		}
	}
	return false
}
