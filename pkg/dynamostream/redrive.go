package dynamostream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// FailedBatch is what Lambda sends to a DynamoDB event source's on-failure destination for a
// batch it gave up on (Lambda developer guide, "Retaining discarded batches for a DynamoDB
// event source"): where the records were, not the records. By the time a batch of deliver-events
// gets there (MaximumRecordAgeInSeconds, a day) the stream no longer holds them, but the table
// still holds every commit they carried.
type FailedBatch struct {
	RequestContext struct {
		// Condition is RetryAttemptsExhausted or RecordAgeExceeded.
		Condition              string `json:"condition"`
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	Timestamp string    `json:"timestamp"`
	BatchInfo BatchInfo `json:"DDBStreamBatchInfo"`
}

// BatchInfo locates the batch in the stream; the arrival times are in whole seconds.
type BatchInfo struct {
	ShardID                         string    `json:"shardId"`
	StartSequenceNumber             string    `json:"startSequenceNumber"`
	EndSequenceNumber               string    `json:"endSequenceNumber"`
	ApproximateArrivalOfFirstRecord time.Time `json:"approximateArrivalOfFirstRecord"`
	ApproximateArrivalOfLastRecord  time.Time `json:"approximateArrivalOfLastRecord"`
	BatchSize                       int       `json:"batchSize"`
	StreamArn                       string    `json:"streamArn"`
}

// RedriveMargin is how long before its record reached the stream a commit may have been
// stamped: a commit takes its time before its put, and a writer may take up to its function's
// timeout (60 s at most in template.yaml) between the two. RedriveSkew allows for the writer's
// clock running ahead of the stream's: the window ends that long after the last arrival's
// second. Commits the window holds beyond the batch's cost nothing but their read (cursors pass
// them), so both err wide.
const (
	RedriveMargin = 2 * time.Minute
	RedriveSkew   = 5 * time.Second
)

// Window is the span of commit times the batch's records can carry.
func (b BatchInfo) Window() (from, to time.Time) {
	return b.ApproximateArrivalOfFirstRecord.Add(-RedriveMargin), b.ApproximateArrivalOfLastRecord.Truncate(time.Second).Add(time.Second + RedriveSkew)
}

// Scanner visits the table's commits made in [from, to] (dynamo.Table.CommitsBetween); visit
// may be called from several goroutines at once.
type Scanner interface {
	CommitsBetween(ctx context.Context, from, to time.Time, segments int, visit func(runlog.Key, runlog.Commit) error) error
}

// Redriver is redrive-stream's entry point: each message of the stream's dead-letter queue is
// a batch deliver-events gave up on, and every commit of the table made in the batch's window is
// delivered as if the stream brought it again, run by run in seq order. That may be more than
// the batch held (the window spans every shard), which costs nothing: a subscription's cursor
// passes a commit it delivered already, so only what was missed is sent, once. A message whose
// commits could not all be handled (the table failed) is reported for SQS to deliver again;
// one that is no failed batch is logged and passed over, as retrying cannot mend it.
func Redriver(d Deliverer, sc Scanner, segments int, log *slog.Logger) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			fb, err := failedBatch(m.Body)
			if err != nil {
				log.Error("a dead-letter message is no failed stream batch; passed over", "messageId", m.MessageId, "error", err.Error())
				continue
			}
			from, to := fb.BatchInfo.Window()
			batch, err := redriven(ctx, sc, from, to, segments)
			attrs := []any{"messageId", m.MessageId, "condition", fb.RequestContext.Condition, "shardId", fb.BatchInfo.ShardID,
				"from", from.Format(time.RFC3339), "to", to.Format(time.RFC3339), "commits", len(batch)}
			if err == nil {
				report, errs := d.Commits(ctx, batch)
				attrs = append(attrs, "delivered", report.Delivered, "retrying", report.Retrying, "failed", report.Failed)
				for i, e := range errs {
					if e != nil {
						err = e
						attrs = append(attrs, "runId", batch[i].Key.RunID, "seq", batch[i].Commit.Seq)
						break
					}
				}
			}
			if err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				log.Error("redrive", append(attrs, "error", err.Error())...)
				continue
			}
			log.Info("redrive", attrs...)
		}
		return resp, nil
	}
}

// failedBatch reads a dead-letter message as the failed stream batch it must be.
func failedBatch(body string) (FailedBatch, error) {
	var fb FailedBatch
	err := json.Unmarshal([]byte(body), &fb)
	if err == nil && (fb.BatchInfo.ApproximateArrivalOfFirstRecord.IsZero() || fb.BatchInfo.ApproximateArrivalOfLastRecord.IsZero()) {
		err = errors.New("no DDBStreamBatchInfo arrival times")
	}
	return fb, err
}

// redriven reads the commits of [from, to], ordered by run and seq, each marked Redriven.
func redriven(ctx context.Context, sc Scanner, from, to time.Time, segments int) ([]runlog.StreamRecord, error) {
	var mu sync.Mutex
	var batch []runlog.StreamRecord
	err := sc.CommitsBetween(ctx, from, to, segments, func(k runlog.Key, c runlog.Commit) error {
		mu.Lock()
		defer mu.Unlock()
		batch = append(batch, runlog.StreamRecord{Key: k, Commit: c, Redriven: true})
		return nil
	})
	slices.SortFunc(batch, func(a, b runlog.StreamRecord) int {
		return cmp.Or(cmp.Compare(a.Key.Tenant, b.Key.Tenant), cmp.Compare(a.Key.RunID, b.Key.RunID), cmp.Compare(a.Commit.Seq, b.Commit.Seq))
	})
	return batch, err
}
