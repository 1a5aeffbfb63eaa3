package ddbstream

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// TestRetention: a stream keeps a record for Retention after it was written, as DynamoDB Streams
// does, and positions stay where they were: a reader resumes after what it read, and one behind
// the oldest record kept starts there.
func TestRetention(t *testing.T) {
	s := &Stream{Table: "t"}
	s.cond = sync.NewCond(&s.mu)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	add := func(id string, at time.Time) {
		s.append(events.DynamoDBEventRecord{EventID: id, Change: events.DynamoDBStreamRecord{ApproximateCreationDateTime: events.SecondsEpochTime{Time: at}}})
	}
	ids := func(recs []events.DynamoDBEventRecord) (out []string) {
		for _, r := range recs {
			out = append(out, r.EventID)
		}
		return out
	}
	add("a", t0)
	add("b", t0.Add(time.Hour))
	recs, next := s.Read(0, 1, nil)
	if got := ids(recs); len(got) != 1 || got[0] != "a" || next != 1 {
		t.Fatalf("first read %v next %d, want [a] 1", got, next)
	}
	add("c", t0.Add(Retention+time.Minute)) // a is past retention now, b is not
	for _, tc := range []struct {
		from, next int
		want       string
	}{{0, 3, "bc"}, {1, 3, "bc"}, {2, 3, "c"}} {
		recs, next := s.Read(tc.from, 10, nil)
		if got := ids(recs); strings.Join(got, "") != tc.want || next != tc.next {
			t.Errorf("read from %d: %v next %d, want %s %d", tc.from, got, next, tc.want, tc.next)
		}
	}
	stop := make(chan struct{})
	close(stop)
	if recs, next := s.Read(3, 10, stop); len(recs) != 0 || next != 3 {
		t.Errorf("read past the end: %v %d", ids(recs), next)
	}
}
