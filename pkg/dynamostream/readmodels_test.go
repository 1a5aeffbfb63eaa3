package dynamostream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/dynamostream"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// reindexer keeps the runs it is asked to reindex and fails those fail names with its error.
type reindexer struct {
	mu   sync.Mutex
	got  []runlog.Key
	fail map[string]error
}

func (r *reindexer) Reindex(_ context.Context, k runlog.Key, _ ...runlog.Commit) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, k)
	return r.fail[k.RunID]
}

func (r *reindexer) runs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, k := range r.got {
		out = append(out, k.Tenant+"/"+k.RunID)
	}
	slices.Sort(out)
	return out
}

func raw(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadModelsReindexEachRunOnce: a stream batch reindexes each run its new commits belong to
// once (a retention update is no new commit), and publishes how long after its last commit in
// the batch the run's read models caught up.
func TestReadModelsReindexEachRunOnce(t *testing.T) {
	r := &reindexer{}
	var out bytes.Buffer
	m := metrics.New(&out, "test")
	now := func() time.Time { return time.Date(2026, 11, 30, 9, 0, 1, 123_000_000, time.UTC) }
	handle := dynamostream.ReadModels(r, failingScan{}, 1, slog.New(slog.DiscardHandler), m, now)
	resp, err := handle(context.Background(), raw(t, event(t)))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v %v", resp, err)
	}
	if got, want := r.runs(), []string{"acme/run-1", "acme/run-7", "globex/run-9"}; !slices.Equal(got, want) {
		t.Errorf("reindexed %v, want %v", got, want)
	}
	points, err := metrics.Read(&out)
	if err != nil {
		t.Fatal(err)
	}
	// run-1's commit was made at 09:00:00.123, a second before now.
	if len(points) != 3 || points[0].Name != metrics.ReadModelLag || points[0].Value != 1 {
		t.Errorf("lag points %+v", points)
	}
}

// TestReadModelsRetryFromTheFailedRun: a run that could not be reindexed because the table
// failed is retried from its first record in the batch (the runs after it are reindexed again,
// harmlessly); one that cannot be reindexed at all is passed over, logged, and holds up no other.
func TestReadModelsRetryFromTheFailedRun(t *testing.T) {
	unavailable := fmt.Errorf("the table: %w", interrupt.ErrUnavailable)
	r := &reindexer{fail: map[string]error{"run-9": unavailable, "run-7": errors.New("an entry that does not fit")}}
	var logs bytes.Buffer
	resp, err := dynamostream.ReadModels(r, failingScan{}, 1, slog.New(slog.NewJSONHandler(&logs, nil)), nil, nil)(context.Background(), raw(t, event(t)))
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "103" {
		t.Fatalf("%+v %v, want a retry from 103", resp, err)
	}
	if !strings.Contains(logs.String(), `"runId":"run-7"`) {
		t.Errorf("the run passed over was not logged: %s", logs.String())
	}
}

// TestReadModelsRefuseOtherEvents: an event of neither the stream nor the queue is an error (a
// mis-wired event source), and an empty one nothing.
func TestReadModelsRefuseOtherEvents(t *testing.T) {
	handle := dynamostream.ReadModels(&reindexer{}, failingScan{}, 1, slog.New(slog.DiscardHandler), nil, nil)
	if _, err := handle(context.Background(), json.RawMessage(`{"Records":[{"eventSource":"aws:s3"}]}`)); err == nil {
		t.Error("an S3 event was taken")
	}
	if resp, err := handle(context.Background(), json.RawMessage(`{"Records":[]}`)); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Errorf("an empty event: %+v %v", resp, err)
	}
}

// TestReadModelsRedriveFromTheTable: a dead-lettered batch reindexes every run with a commit in
// its window, read back from the local DynamoDB; one whose window could not be read is reported
// for SQS to deliver again, and one that is no failed batch passed over.
func TestReadModelsRedriveFromTheTable(t *testing.T) {
	ctx := context.Background()
	db, table := localaws.NewTable(t)
	log := dynamo.NewTable(db, table)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for run, at := range map[string]time.Duration{"r1": 5 * time.Second, "r2": 7 * time.Second, "old": -time.Hour} {
		c := runlog.Commit{Seq: 1, ID: run, At: t0.Add(at), Events: []runlog.Event{
			{Type: interrupt.EventRequested, NodeID: "n", InterruptID: "int_" + run, Payload: json.RawMessage(`{"kind":"custom","key":"k","data":{"customKind":"x"}}`)},
		}}
		if err := log.Append(ctx, runlog.Key{Tenant: "acme", RunID: run}, c); err != nil {
			t.Fatal(err)
		}
	}
	r := &reindexer{}
	var logs bytes.Buffer
	ev := sqsEvent(`{"not":"a batch"}`, failedBatch)
	for i := range ev.Records {
		ev.Records[i].EventSource = "aws:sqs"
	}
	resp, err := dynamostream.ReadModels(r, log, 2, slog.New(slog.NewJSONHandler(&logs, nil)), nil, nil)(ctx, raw(t, ev))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v %v", resp, err)
	}
	if got, want := r.runs(), []string{"acme/r1", "acme/r2"}; !slices.Equal(got, want) {
		t.Errorf("reindexed %v, want %v", got, want)
	}
	if !strings.Contains(logs.String(), `"messageId":"m0"`) {
		t.Errorf("the message that is no batch was not logged: %s", logs.String())
	}
	resp, err = dynamostream.ReadModels(r, failingScan{}, 1, slog.New(slog.DiscardHandler), nil, nil)(ctx, raw(t, ev))
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
		t.Errorf("an unreadable window: %+v %v", resp, err)
	}
}
