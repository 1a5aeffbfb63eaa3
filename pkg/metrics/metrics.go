// Package metrics writes the functions' metrics in CloudWatch's Embedded Metric Format (EMF):
// one JSON object per line on the function's standard output, from which CloudWatch Logs
// extracts the metrics. Publishing them costs no API call and no latency, only the log line
// (docs/operations.md, "Metrics"). Lambda's JSON log format passes a line that is already a
// JSON object through as it is, so the lines reach CloudWatch Logs whole.
package metrics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Name is a metric the functions publish; docs/operations.md lists each with its dimensions.
type Name string

// The metrics. Counts are per event, so a statistic of Sum over a period is how many happened.
const (
	// Requested, Resolved and Expired count the interrupts committed as requested, resolved and
	// expired, by Kind: the commit is the host's one write, so each is counted once however
	// many callers raced for it.
	Requested Name = "InterruptsRequested"
	Resolved  Name = "InterruptsResolved"
	Expired   Name = "InterruptsExpired"
	// DecisionTime is how long an interrupt waited from its request to its resolution, by Kind,
	// one value per resolution: its percentiles say how long people (and providers) take.
	DecisionTime Name = "DecisionTime"
	// Conflicts counts the 409 answers by Code: the losers of a race to resolve an interrupt,
	// and the callers who came after the winner.
	Conflicts Name = "Conflicts"
	// WriteRaces counts the commits that lost the race for their seq and were decided again
	// on the newer log: contention on one run.
	WriteRaces Name = "WriteRacesRetried"
	// Webhooks counts the provider events received, by Outcome: the ingest's outcome for a
	// verified event (resolved, buffered, duplicate, refused), else the refusal's code.
	Webhooks Name = "WebhookEvents"
	// SlackClicks counts the requests of tenants' Slack apps, by Outcome: what became of a
	// verified click (recorded, refused, asked, ignored), else the refusal's code.
	SlackClicks Name = "SlackClicks"
	// TeamsActivities counts the activities tenants' Teams bots receive, by Outcome: what
	// became of a verified one (recorded, refused, refreshed, ignored), else the refusal's code.
	TeamsActivities Name = "TeamsActivities"
	// Delivered and DeliveryFailures count the outbound events a receiver accepted and the
	// attempts it did not (each goes to the retrier until its subscription gives up on it).
	Delivered        Name = "EventsDelivered"
	DeliveryFailures Name = "DeliveryFailures"
	// SweepLag is how long past its deadline the oldest entry a sweep found still due was: how
	// late an expiry is written. A sweep that runs reports it, 0 when nothing was overdue.
	SweepLag Name = "SweepLag"
	// ReadModelLag is how long after its commit a run's read models reflected it: one value per
	// run per stream batch, from its last commit in the batch.
	ReadModelLag Name = "ReadModelLag"
)

// Unit is CloudWatch's unit of a metric's values.
type Unit string

// The units the functions' metrics use.
const (
	Count   Unit = "Count"
	Seconds Unit = "Seconds"
)

// The dimensions' names: each metric above says which it is published under.
const (
	DimKind    = "Kind"
	DimCode    = "Code"
	DimOutcome = "Outcome"
)

// Dim is one dimension of a metric's value.
type Dim struct{ Name, Value string }

// Log writes metrics as EMF lines to one writer. It is safe for concurrent use, and a nil *Log
// writes nothing, so code that may run without metrics (tests, tools) need not check.
type Log struct {
	mu        sync.Mutex
	w         io.Writer
	namespace string
}

// New returns a Log writing to w under namespace (the template's METRICS_NAMESPACE, one per
// stack, so that two stacks in an account never add into each other's metrics).
func New(w io.Writer, namespace string) *Log {
	return &Log{w: w, namespace: namespace}
}

// Count counts one of the metric's events under dims.
func (l *Log) Count(name Name, dims ...Dim) { l.put(name, Count, 1, dims) }

// Duration records d, in seconds, under dims.
func (l *Log) Duration(name Name, d time.Duration, dims ...Dim) {
	l.put(name, Seconds, d.Seconds(), dims)
}

// directive is EMF's metadata: which members of the line are metrics, and under which
// dimensions (one set, naming the members that hold the dimensions' values; an empty set
// publishes the metric without dimensions).
type directive struct {
	Namespace  string     `json:"Namespace"`
	Dimensions [][]string `json:"Dimensions"`
	Metrics    []metric   `json:"Metrics"`
}

type metric struct {
	Name string `json:"Name"`
	Unit Unit   `json:"Unit"`
}

type metadata struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

// put writes one line: the metadata, each dimension's value, and the metric's value. A line
// that cannot be encoded (it always can: names and values are strings and a float) or written
// is dropped; a metric never fails what it measures.
func (l *Log) put(name Name, unit Unit, v float64, dims []Dim) {
	if l == nil {
		return
	}
	keys := make([]string, 0, len(dims))
	line := make(map[string]any, len(dims)+2)
	for _, d := range dims {
		keys = append(keys, d.Name)
		line[d.Name] = d.Value
	}
	line[string(name)] = v
	line["_aws"] = metadata{
		Timestamp: time.Now().UnixMilli(),
		CloudWatchMetrics: []directive{{
			Namespace:  l.namespace,
			Dimensions: [][]string{keys},
			Metrics:    []metric{{Name: string(name), Unit: unit}},
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(append(b, '\n'))
}

// Point is one metric value as CloudWatch extracts it from a line.
type Point struct {
	Namespace string
	Name      Name
	Unit      Unit
	Value     float64
	Dims      map[string]string
	At        time.Time
}

// Read extracts the metrics of EMF lines as CloudWatch Logs would, skipping the lines that are
// not EMF (a function's other log lines): the other half of Log, for the tests and for reading
// a local stack's function log. A line whose directive names a metric or dimension it does not
// hold is an error, as CloudWatch would reject it.
func Read(r io.Reader) ([]Point, error) {
	var out []Point
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var line map[string]json.RawMessage
		if json.Unmarshal(sc.Bytes(), &line) != nil || line["_aws"] == nil {
			continue
		}
		var md metadata
		if err := json.Unmarshal(line["_aws"], &md); err != nil {
			return nil, fmt.Errorf("metrics: _aws: %w", err)
		}
		for _, d := range md.CloudWatchMetrics {
			for _, set := range d.Dimensions {
				dims := make(map[string]string, len(set))
				for _, k := range set {
					var v string
					if err := json.Unmarshal(line[k], &v); err != nil {
						return nil, fmt.Errorf("metrics: dimension %q is not a string member: %s", k, sc.Bytes())
					}
					dims[k] = v
				}
				for _, m := range d.Metrics {
					var v float64
					if err := json.Unmarshal(line[m.Name], &v); err != nil {
						return nil, fmt.Errorf("metrics: metric %q is not a number member: %s", m.Name, sc.Bytes())
					}
					out = append(out, Point{Namespace: d.Namespace, Name: Name(m.Name), Unit: m.Unit, Value: v, Dims: dims, At: time.UnixMilli(md.Timestamp)})
				}
			}
		}
	}
	return out, sc.Err()
}

// Total is the sum of the values of name among ps that carry every one of dims.
func Total(ps []Point, name Name, dims ...Dim) float64 {
	var sum float64
	for _, p := range ps {
		if p.Name == name && slices.IndexFunc(dims, func(d Dim) bool { return p.Dims[d.Name] != d.Value }) < 0 {
			sum += p.Value
		}
	}
	return sum
}
