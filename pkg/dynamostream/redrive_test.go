package dynamostream_test

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/dynamostream"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// failedBatch is what Lambda sent to the on-failure destination for a batch whose records
// arrived from 09:00:05 to 09:00:07 (whole seconds, as Lambda writes them for DynamoDB).
//
//go:embed testdata/failed-batch.json
var failedBatch string

// hooks is a receiver on 127.0.0.1 that verifies each delivery with the Standard Webhooks
// reference library and keeps its webhook-id.
type hooks struct {
	t      *testing.T
	secret string
	mu     sync.Mutex
	ids    []string
}

func (h *hooks) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	wh, err := standardwebhooks.NewWebhook(h.secret)
	if err == nil {
		err = wh.VerifyIgnoringTimestamp(body, req.Header)
	}
	if err != nil {
		h.t.Errorf("a delivery does not verify: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	h.mu.Lock()
	h.ids = append(h.ids, req.Header.Get("webhook-id"))
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (h *hooks) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ids)
}

func sqsEvent(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprint("m", i), Body: b})
	}
	return ev
}

// TestRedriveDeliversWhatTheStreamDropped: the commits a failed batch's window holds, written to
// the table but never delivered (as when deliver-events gave up on them), reach a subscription
// that existed then, in seq order, each once however often the message comes; commits outside
// the window and a subscription made since get nothing. Against the local DynamoDB.
func TestRedriveDeliversWhatTheStreamDropped(t *testing.T) {
	ctx := context.Background()
	db, table := localaws.NewTable(t)
	log, store := dynamo.NewTable(db, table), dynamo.NewOutbound(db, table)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := testclock.New(t0.Add(-time.Hour))
	secrets := inmem.NewSecrets()
	subs := &outbound.Subscriptions{Store: store, Secrets: secrets, Targets: outbound.Targets{AllowPrivate: true}, Now: clock.Now}
	subscribe := func() (*hooks, outbound.Subscription) {
		h := &hooks{t: t}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		created, err := subs.Create(ctx, interrupt.Principal{Subject: "ops", Tenant: "acme"}, outbound.Request{URL: srv.URL, Events: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		h.secret = created.Secret
		return h, created.Subscription
	}
	then, _ := subscribe()
	for _, c := range []struct {
		run string
		seq int64
		at  time.Duration
	}{
		{"r1", 1, 4500 * time.Millisecond}, {"r1", 2, 6250 * time.Millisecond}, {"r1", 3, 7900 * time.Millisecond},
		{"r1", 4, 8100*time.Millisecond + dynamostream.RedriveSkew}, // after the last arrival's second and the skew: the stream delivered it
		{"r2", 1, -time.Hour}, // long before
		{"r3", 1, -dynamostream.RedriveMargin + 5*time.Second + 500*time.Millisecond}, // stamped well before its record arrived
	} {
		commit := runlog.Commit{Seq: c.seq, ID: fmt.Sprint(c.run, c.seq), At: t0.Add(c.at), Events: []runlog.Event{
			{Type: interrupt.EventRequested, NodeID: "n", InterruptID: fmt.Sprint("int_", c.run, c.seq), Payload: json.RawMessage(fmt.Sprintf(`{"kind":"custom","key":"k%d","data":{"customKind":"x"}}`, c.seq))},
		}}
		if err := log.Append(ctx, runlog.Key{Tenant: "acme", RunID: c.run}, commit); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(t0.Add(30 * time.Minute))
	since, _ := subscribe()
	clock.Set(t0.Add(24 * time.Hour))
	d := &outbound.Deliverer{Store: store, Log: log, Secrets: secrets, Client: outbound.NewHTTPClient(true), Links: outbound.Links{BaseURL: "https://host.example"}, Now: clock.Now}
	var logs bytes.Buffer
	redrive := dynamostream.Redriver(d, log, 3, slog.New(slog.NewJSONHandler(&logs, nil)))
	for range 2 {
		resp, err := redrive(ctx, sqsEvent(failedBatch))
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("redrive: %+v %v\n%s", resp, err, logs.String())
		}
	}
	if want := []string{"r1:1:0", "r1:2:0", "r1:3:0", "r3:1:0"}; !slices.Equal(slices.Sorted(slices.Values(then.got())), want) {
		t.Errorf("the subscription of then got %v, want %v", then.got(), want)
	}
	if got := then.got(); slices.Index(got, "r1:1:0") > slices.Index(got, "r1:3:0") {
		t.Errorf("out of order: %v", got)
	}
	if got := since.got(); len(got) != 0 {
		t.Errorf("a subscription made after the commits got %v", got)
	}
}

// failingScan is a table whose Scan fails.
type failingScan struct{}

func (failingScan) CommitsBetween(context.Context, time.Time, time.Time, int, func(runlog.Key, runlog.Commit) error) error {
	return errors.New("the table is unavailable")
}

// TestRedriveReportsWhatItCouldNotRead: a message whose commits could not be read is reported
// for SQS to deliver again; one that is no failed batch is passed over, logged.
func TestRedriveReportsWhatItCouldNotRead(t *testing.T) {
	var logs bytes.Buffer
	redrive := dynamostream.Redriver(&recorder{}, failingScan{}, 1, slog.New(slog.NewJSONHandler(&logs, nil)))
	resp, err := redrive(context.Background(), sqsEvent(`{"not":"a batch"}`, failedBatch))
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
		t.Fatalf("%+v %v", resp, err)
	}
	if !bytes.Contains(logs.Bytes(), []byte(`"messageId":"m0"`)) {
		t.Errorf("the message that is no batch was not logged: %s", logs.String())
	}
}

// TestTheWindowCoversTheBatch: from the first arrival less the margin to the end of the last
// arrival's second and the skew.
func TestTheWindowCoversTheBatch(t *testing.T) {
	var fb dynamostream.FailedBatch
	if err := json.Unmarshal([]byte(failedBatch), &fb); err != nil {
		t.Fatal(err)
	}
	from, to := fb.BatchInfo.Window()
	if want := time.Date(2026, 11, 30, 8, 58, 5, 0, time.UTC); !from.Equal(want) {
		t.Errorf("from %v, want %v", from, want)
	}
	if want := time.Date(2026, 11, 30, 9, 0, 13, 0, time.UTC); !to.Equal(want) {
		t.Errorf("to %v, want %v", to, want)
	}
	if fb.RequestContext.Condition != "RecordAgeExceeded" || fb.BatchInfo.BatchSize != 4 {
		t.Errorf("read %+v", fb)
	}
}
