package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/infra/local/ddbstream"
	"github.com/interrupthost/interrupthost/internal/devjwt"
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

// recorder is a function that keeps the records or messages of the batches it handled; its
// first failFirst invocations fail.
type recorder struct {
	mu        sync.Mutex
	failFirst int
	invokes   int
	handled   []string
}

func (r *recorder) Invoke(_ context.Context, _ string, event []byte) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.invokes++
	if r.invokes <= r.failFirst {
		return []byte(`{"errorType":"Runtime.ExitError","errorMessage":"the table is unavailable"}`), nil
	}
	var ev struct {
		Records []struct {
			EventSource string `json:"eventSource"`
			MessageID   string `json:"messageId"`
			DynamoDB    struct {
				Keys map[string]events.DynamoDBAttributeValue `json:"Keys"`
			} `json:"dynamodb"`
		} `json:"Records"`
	}
	if err := json.Unmarshal(event, &ev); err != nil {
		return nil, err
	}
	for _, rec := range ev.Records {
		if rec.EventSource == "aws:sqs" {
			r.handled = append(r.handled, rec.MessageID)
		} else {
			r.handled = append(r.handled, rec.DynamoDB.Keys["sk"].String())
		}
	}
	return []byte(`{"batchItemFailures":[]}`), nil
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.handled)
}

// deadLetters are queues holding one message each, by logical id, once; they keep what was
// deleted.
type deadLetters struct {
	mu      sync.Mutex
	waiting map[string]bool
	deleted []string
}

func (d *deadLetters) Send(context.Context, string, string) error {
	return errors.New("not a destination")
}

func (d *deadLetters) Receive(ctx context.Context, queue string, _ int, wait time.Duration) ([]events.SQSMessage, error) {
	d.mu.Lock()
	if d.waiting[queue] {
		d.waiting[queue] = false
		d.mu.Unlock()
		return []events.SQSMessage{{MessageId: "m-" + queue, ReceiptHandle: "r-" + queue, Body: "{}", EventSource: "aws:sqs"}}, nil
	}
	d.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-time.After(wait / 10):
	}
	return nil, nil
}

func (d *deadLetters) Delete(_ context.Context, queue, receipt string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deleted = append(d.deleted, queue+" "+receipt)
	return nil
}

func (d *deadLetters) gone() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Sorted(slices.Values(d.deleted))
}

// fromTemplate is the gateway the stack builds from the repository's template.yaml, its
// functions never started.
func fromTemplate(t *testing.T, queues Queues) *Gateway {
	t.Helper()
	path, err := samtemplate.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := samtemplate.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	overrides := map[string]string{"JwtIssuer": devjwt.IssuerAt(devjwt.GatewayURL), "JwtAudience": devjwt.Audiences, "AgentsClientId": devjwt.MCPClientID, "AWS::StackName": "t"}
	g, err := FromTemplate(tmpl, filepath.Join(t.TempDir(), "functions"), Options{
		Root:         filepath.Dir(path),
		URL:          devjwt.GatewayURL,
		Resolver:     samtemplate.Resolver{Template: tmpl, Overrides: overrides, Resources: map[string]string{"RunLogTable": "t", "KeyringSecret": "k"}},
		EnvOverrides: map[string]string{"PUBLIC_BASE_URL": "http://127.0.0.1:3000", "WEBHOOK_SECRET_PREFIX": "t/hooks/", "SUBSCRIPTION_SECRET_PREFIX": "t/subs/", "SLACK_SECRET_PREFIX": "t/slack/"},
		Queues:       queues,
		RIE:          filepath.Join(t.TempDir(), "aws-lambda-rie"), MaxInstances: 1,
		Logs: io.Discard, Log: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

// TestEveryStreamConsumerReadsTheWholeStream: the template's two consumers of the run-log
// table's stream, deliver-events and read-models, each read it from its own position, as two
// event source mappings do: each handles every commit once and in order, whatever the other
// does (read-models fails its first batch here, and is retried from its own start), and neither
// gets the items the filter drops (a waiting entry).
func TestEveryStreamConsumerReadsTheWholeStream(t *testing.T) {
	g := fromTemplate(t, nil)
	consumers := map[string]*recorder{}
	for _, s := range g.streams {
		r := &recorder{}
		if s.function == "read-models" {
			r.failFirst = 1
		}
		s.pool, consumers[s.function] = r, r
		if s.table != "t" {
			t.Errorf("%s reads the stream of %s", s.function, s.table)
		}
	}
	if names := slices.Sorted(maps.Keys(consumers)); !slices.Equal(names, []string{"deliver-events", "read-models"}) {
		t.Fatalf("the stream's consumers: %v", names)
	}

	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{}`))
	}))
	defer store.Close()
	target, _ := url.Parse(store.URL)
	proxy := ddbstream.NewProxy(target, slog.New(slog.DiscardHandler))
	proxy.Stream("t")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g.RunStreams(ctx, proxy)

	put := func(pk, sk string) {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"TableName":"t","Item":{"pk":{"S":"`+pk+`"},"sk":{"S":"`+sk+`"}}}`))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem")
		w := httptest.NewRecorder()
		proxy.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("put %s %s: %d %s", pk, sk, w.Code, w.Body)
		}
	}
	put("acme#run#r", "c#00000000000000000001")
	put("acme#run#r", "c#00000000000000000002")
	put("acme#waiting#", "r")
	put("acme#run#r", "c#00000000000000000003")
	want := []string{"c#00000000000000000001", "c#00000000000000000002", "c#00000000000000000003"}
	deadline := time.Now().Add(15 * time.Second)
	for name, r := range consumers {
		for len(r.seen()) < len(want) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if got := r.seen(); !slices.Equal(got, want) {
			t.Errorf("%s handled %v, want %v", name, got, want)
		}
	}
	rm := consumers["read-models"]
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.invokes < 2 {
		t.Errorf("read-models was invoked %d times", rm.invokes)
	}
}

// TestEveryDeadLetterQueueIsPolled: the SQS event source stand-in polls each stream
// consumer's dead-letter queue for its function (redrive-stream takes deliver-events', read-models
// its own), and deletes a message its function handled.
func TestEveryDeadLetterQueueIsPolled(t *testing.T) {
	dl := &deadLetters{waiting: map[string]bool{"DeliverEventsFailures": true, "ReadModelsFailures": true}}
	g := fromTemplate(t, dl)
	readers := map[string]*recorder{}
	for _, q := range g.queues {
		r := &recorder{}
		q.pool, readers[q.Queue+" "+q.function] = r, r
	}
	if keys := slices.Sorted(maps.Keys(readers)); !slices.Equal(keys, []string{"DeliverEventsFailures redrive-stream", "ReadModelsFailures read-models"}) {
		t.Fatalf("queues polled: %v", keys)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g.RunQueues(ctx)
	want := []string{"DeliverEventsFailures r-DeliverEventsFailures", "ReadModelsFailures r-ReadModelsFailures"}
	for deadline := time.Now().Add(10 * time.Second); !slices.Equal(dl.gone(), want) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if got := dl.gone(); !slices.Equal(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}
	for key, r := range readers {
		queue, _, _ := strings.Cut(key, " ")
		if got := r.seen(); !slices.Equal(got, []string{"m-" + queue}) {
			t.Errorf("%s handled %v", key, got)
		}
	}
}
