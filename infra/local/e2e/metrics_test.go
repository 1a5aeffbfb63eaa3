package e2e

import (
	"io"
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

// logPoints are the metrics CloudWatch Logs would extract from the functions' output from
// byte offset from on.
func logPoints(t testing.TB, from int64) []metrics.Point {
	t.Helper()
	f, err := os.Open(functionLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := metrics.Read(io.NewSectionReader(f, from, end-from))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// since are the points of ps written at t0 or later.
func since(ps []metrics.Point, t0 time.Time) []metrics.Point {
	var out []metrics.Point
	for _, p := range ps {
		if !p.At.Before(t0.Truncate(time.Millisecond)) {
			out = append(out, p)
		}
	}
	return out
}

// TestFunctionsPublishMetrics: the functions' binaries, configured by the template, write EMF
// lines under the stack's namespace: an interrupt requested and resolved, the caller who came
// second (409), each counted once, and the scheduled sweep's lag all reach the log, and every
// EMF line written meanwhile is one CloudWatch would accept. Not parallel: no other test of
// the stack writes while it counts.
func TestFunctionsPublishMetrics(t *testing.T) {
	localaws.NeedsStack(t)
	info, err := os.Stat(functionLog(t))
	if err != nil {
		t.Fatal(err)
	}
	offset := info.Size()
	t0 := time.Now()
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
	counted := []struct {
		name metrics.Name
		dims []metrics.Dim
	}{
		{metrics.Requested, []metrics.Dim{custom}},
		{metrics.Resolved, []metrics.Dim{custom}},
		{metrics.Conflicts, []metrics.Dim{{Name: metrics.DimCode, Value: "interrupt_already_resolved"}}},
	}
	// The emulator copies a function's output to the log as it comes, so the lines may trail
	// the answers by a moment; the sweep reports once per schedule period.
	wait := 90 * time.Second
	if os.Getenv("STACK_SCHEDULE_PERIOD") != "" {
		wait = 15 * time.Second
	}
	var got []metrics.Point
	for until := time.Now().Add(wait); ; <-time.After(100 * time.Millisecond) {
		got = since(logPoints(t, offset), t0)
		complete := hasSweepLag(got)
		for _, c := range counted {
			complete = complete && metrics.Total(got, c.name, c.dims...) >= 1
		}
		if complete {
			break
		}
		if time.Now().After(until) {
			t.Fatalf("after %v the log has %d new points, a sweep's lag among them: %v", wait, len(got), hasSweepLag(got))
		}
	}
	for _, c := range counted {
		if n := metrics.Total(got, c.name, c.dims...); n != 1 {
			t.Errorf("%s %v counted %v times, want once", c.name, c.dims, n)
		}
	}
	want := "InterruptHost/" + os.Getenv("TABLE_NAME")
	for _, p := range got {
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
