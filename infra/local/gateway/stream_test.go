package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/internal/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/dynamostream"
)

// failing is a function whose every invocation fails.
type failing struct{ invokes int }

func (f *failing) Invoke(context.Context, string, []byte) ([]byte, error) {
	f.invokes++
	return []byte(`{"errorType":"Runtime.ExitError","errorMessage":"the table is unavailable"}`), nil
}

// sent is an on-failure destination that keeps what it is sent.
type sent struct {
	mu     sync.Mutex
	queue  []string
	bodies []string
}

func (s *sent) Send(_ context.Context, queue, body string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue, s.bodies = append(s.queue, queue), append(s.bodies, body)
	return nil
}

func (s *sent) Receive(context.Context, string, int, time.Duration) ([]events.SQSMessage, error) {
	return nil, errors.New("not a source")
}

func (s *sent) Delete(context.Context, string, string) error { return errors.New("not a source") }

func records(at ...time.Time) []events.DynamoDBEventRecord {
	var out []events.DynamoDBEventRecord
	for i, t := range at {
		out = append(out, events.DynamoDBEventRecord{
			EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/local",
			Change:         events.DynamoDBStreamRecord{SequenceNumber: string(rune('a' + i)), ApproximateCreationDateTime: events.SecondsEpochTime{Time: t}},
		})
	}
	return out
}

// TestABatchGivenUpOnIsRecordedAsLambdaRecordsIt: after its retries, or once its oldest record
// is past the maximum age, a batch goes to the on-failure destination in Lambda's format, which
// redrive-stream reads (dynamostream.FailedBatch) with a window covering its records.
func TestABatchGivenUpOnIsRecordedAsLambdaRecordsIt(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	g := &Gateway{log: slog.New(slog.NewTextHandler(io.Discard, nil)), now: func() time.Time { return now }}
	for _, tc := range []struct {
		name      string
		at        []time.Time
		condition string
		invokes   int
	}{
		{"retries exhausted", []time.Time{now.Add(-1500 * time.Millisecond), now.Add(-200 * time.Millisecond)}, "RetryAttemptsExhausted", 3},
		{"too old to invoke", []time.Time{now.Add(-25 * time.Hour), now.Add(-time.Hour)}, "RecordAgeExceeded", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn, dlq := &failing{}, &sent{}
			s := &streamed{
				Stream:   samtemplate.Stream{MaxRetries: 2, MaxRecordAge: 24 * time.Hour, OnFailure: "Failures"},
				function: "deliver-events", pool: fn, queues: dlq,
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			g.invokeStream(ctx, s, records(tc.at...))
			if fn.invokes != tc.invokes || len(dlq.bodies) != 1 || dlq.queue[0] != "Failures" {
				t.Fatalf("%d invocations, sent %v to %v", fn.invokes, dlq.bodies, dlq.queue)
			}
			var fb dynamostream.FailedBatch
			if err := json.Unmarshal([]byte(dlq.bodies[0]), &fb); err != nil {
				t.Fatal(err)
			}
			from, to := fb.BatchInfo.Window()
			if fb.RequestContext.Condition != tc.condition || fb.BatchInfo.BatchSize != 2 || fb.BatchInfo.StartSequenceNumber != "a" || fb.BatchInfo.EndSequenceNumber != "b" ||
				from.After(tc.at[0]) || !to.After(tc.at[1]) {
				t.Errorf("%s\nwindow %v to %v", dlq.bodies[0], from, to)
			}
		})
	}
}
