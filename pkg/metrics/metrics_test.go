package metrics_test

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xeipuuv/gojsonschema"

	"github.com/interrupthost/interrupthost/pkg/metrics"
)

// TestLinesAreEMF: every line Log writes is one JSON object that the Embedded Metric Format's
// document structure admits, and reads back as the value, unit and dimensions written.
func TestLinesAreEMF(t *testing.T) {
	t.Parallel()
	schema, err := gojsonschema.NewSchema(gojsonschema.NewReferenceLoader("file://" + must(filepath.Abs("testdata/emf.schema.json"))))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	l := metrics.New(&buf, "InterruptHost/test-stack")
	l.Count(metrics.Requested, metrics.Dim{Name: metrics.DimKind, Value: "approval"})
	l.Count(metrics.WriteRaces)
	l.Duration(metrics.SweepLag, 1500*time.Millisecond)

	sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
	lines := 0
	for sc.Scan() {
		lines++
		res, err := schema.Validate(gojsonschema.NewBytesLoader(sc.Bytes()))
		if err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", lines, err, sc.Bytes())
		}
		if !res.Valid() {
			t.Errorf("line %d is not an EMF document: %v: %s", lines, res.Errors(), sc.Bytes())
		}
	}
	if lines != 3 {
		t.Fatalf("%d lines, want 3:\n%s", lines, buf.String())
	}

	ps, err := metrics.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name  metrics.Name
		unit  metrics.Unit
		value float64
		dims  map[string]string
	}{
		{metrics.Requested, metrics.Count, 1, map[string]string{"Kind": "approval"}},
		{metrics.WriteRaces, metrics.Count, 1, map[string]string{}},
		{metrics.SweepLag, metrics.Seconds, 1.5, map[string]string{}},
	}
	if len(ps) != len(want) {
		t.Fatalf("read %d points, want %d: %+v", len(ps), len(want), ps)
	}
	for i, w := range want {
		p := ps[i]
		if p.Name != w.name || p.Unit != w.unit || p.Value != w.value || p.Namespace != "InterruptHost/test-stack" || len(p.Dims) != len(w.dims) {
			t.Errorf("point %d = %+v, want %+v", i, p, w)
		}
		for k, v := range w.dims {
			if p.Dims[k] != v {
				t.Errorf("point %d dimension %s = %q, want %q", i, k, p.Dims[k], v)
			}
		}
		if time.Since(p.At) > time.Hour || p.At.After(time.Now()) {
			t.Errorf("point %d timestamp %v is not the time it was written", i, p.At)
		}
	}
}

// TestReadRefusesWhatCloudWatchWould: a directive naming a member the line lacks, or a metric
// that is not a number, is an error; lines that are not EMF are skipped.
func TestReadRefusesWhatCloudWatchWould(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, log string
		ok        bool
	}{
		{"other lines skipped", `{"level":"INFO","msg":"request"}` + "\nplain text\n", true},
		{"metric missing", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[[]],"Metrics":[{"Name":"X"}]}]}}`, false},
		{"metric not a number", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[[]],"Metrics":[{"Name":"X"}]}]},"X":"1"}`, false},
		{"dimension missing", `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["Kind"]],"Metrics":[{"Name":"X"}]}]},"X":1}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ps, err := metrics.Read(strings.NewReader(tc.log))
			if (err == nil) != tc.ok {
				t.Fatalf("Read = %v, %v; want ok %v", ps, err, tc.ok)
			}
			if tc.ok && len(ps) != 0 {
				t.Errorf("read %v from lines that are not EMF", ps)
			}
		})
	}
}

// TestConcurrentLinesStayWhole: lines written at once from many goroutines (the deliverer's
// runs are delivered concurrently) are never interleaved.
func TestConcurrentLinesStayWhole(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := metrics.New(&buf, "ns")
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 20 {
				l.Count(metrics.Delivered)
			}
		})
	}
	wg.Wait()
	ps, err := metrics.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := metrics.Total(ps, metrics.Delivered); got != 1000 {
		t.Errorf("total %v from %d points, want 1000", got, len(ps))
	}
}

// TestANilLogWritesNothing: code built without metrics calls the same methods.
func TestANilLogWritesNothing(t *testing.T) {
	t.Parallel()
	var l *metrics.Log
	l.Count(metrics.Requested)
	l.Duration(metrics.SweepLag, time.Second)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
