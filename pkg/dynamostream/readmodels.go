package dynamostream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Reindexer brings a run's read models up to its log (host.Host.Reindex), given the run's
// commits the batch carried, in order: it writes the entry as of the log, whichever of the
// run's commits prompted it, and calling it twice is harmless.
type Reindexer interface {
	Reindex(ctx context.Context, k runlog.Key, commits ...runlog.Commit) error
}

// BatchResponse is read-models' answer to either event source: the stream's and the queue's
// partial batch responses have this one shape (batchItemFailures, each an itemIdentifier).
type BatchResponse struct {
	BatchItemFailures []BatchItemFailure `json:"batchItemFailures"`
}

// BatchItemFailure names the first record (a stream's sequence number) or the message (a
// queue's id) to deliver again.
type BatchItemFailure struct {
	ItemIdentifier string `json:"itemIdentifier"`
}

// reindexAtOnce bounds the runs of one batch reindexed at once.
const reindexAtOnce = 8

// ReadModels is read-models' entry point (docs/design.md, "Read models"), for both of its event
// sources. A batch of the table's stream reindexes each run its commits belong to, once, after
// its last commit in the batch; a run that could not be reindexed because the table failed
// (interrupt.ErrUnavailable) is reported from its first record, for Lambda to retry from there,
// and one that cannot be reindexed at all (retrying cannot mend it) is logged and passed over,
// so that it holds up no other run. A message of the function's
// dead-letter queue is a batch the stream gave up on: every run with a commit in its window,
// read back from the table as the deliveries' redrive does (Redriver), is reindexed. The
// function publishes, per run, how long after its commit the read models caught up
// (metrics.ReadModelLag, from its first commit in the batch). An event of neither source is
// refused.
func ReadModels(r Reindexer, sc Scanner, segments int, log *slog.Logger, m *metrics.Log, now func() time.Time) func(context.Context, json.RawMessage) (BatchResponse, error) {
	if now == nil {
		now = time.Now
	}
	return func(ctx context.Context, raw json.RawMessage) (BatchResponse, error) {
		var probe struct {
			Records []struct {
				EventSource string `json:"eventSource"`
			} `json:"Records"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return BatchResponse{}, fmt.Errorf("dynamostream: read-models' event: %w", err)
		}
		if len(probe.Records) == 0 {
			return BatchResponse{}, nil
		}
		switch source := probe.Records[0].EventSource; source {
		case "aws:dynamodb":
			var ev events.DynamoDBEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return BatchResponse{}, fmt.Errorf("dynamostream: a stream batch: %w", err)
			}
			return reindexStream(ctx, r, ev, log, m, now), nil
		case "aws:sqs":
			var ev events.SQSEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return BatchResponse{}, fmt.Errorf("dynamostream: a queue batch: %w", err)
			}
			return reindexRedriven(ctx, r, sc, segments, ev, log), nil
		default:
			return BatchResponse{}, fmt.Errorf("dynamostream: read-models takes no event of source %q", source)
		}
	}
}

// touched is a run of a batch: where its first record is, when that commit was made, and the
// run's commits in the batch.
type touched struct {
	key     runlog.Key
	first   int
	firstAt time.Time
	commits []runlog.Commit
}

// runsOf are the batch's runs in the order of their first commit.
func runsOf(batch []runlog.StreamRecord) []touched {
	var runs []touched
	at := map[runlog.Key]int{}
	for i, c := range batch {
		j, ok := at[c.Key]
		if !ok {
			j = len(runs)
			at[c.Key] = j
			runs = append(runs, touched{key: c.Key, first: i, firstAt: c.Commit.At})
		}
		runs[j].commits = append(runs[j].commits, c.Commit)
	}
	return runs
}

// reindexAll reindexes runs, reindexAtOnce at a time; errs[i] is runs[i]'s.
func reindexAll(ctx context.Context, r Reindexer, runs []touched) []error {
	errs := make([]error, len(runs))
	sem := make(chan struct{}, reindexAtOnce)
	var wg sync.WaitGroup
	for i, t := range runs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = r.Reindex(ctx, t.key, t.commits...)
		})
	}
	wg.Wait()
	return errs
}

func reindexStream(ctx context.Context, r Reindexer, ev events.DynamoDBEvent, log *slog.Logger, m *metrics.Log, now func() time.Time) BatchResponse {
	batch, ids := commitsOf(ev, log)
	runs := runsOf(batch)
	errs := reindexAll(ctx, r, runs)
	var resp BatchResponse
	failedAt, failures := -1, 0
	for i, err := range errs {
		switch {
		case err == nil:
			m.Duration(metrics.ReadModelLag, now().Sub(runs[i].firstAt))
		case errors.Is(err, interrupt.ErrUnavailable) || ctx.Err() != nil:
			failures++
			if failedAt < 0 || runs[i].first < failedAt {
				failedAt = runs[i].first
			}
			log.Error("reindex", "runId", runs[i].key.RunID, "error", err.Error())
		default:
			failures++
			log.Error("a run cannot be reindexed; passed over", "runId", runs[i].key.RunID, "error", err.Error())
		}
	}
	if failedAt >= 0 {
		resp.BatchItemFailures = []BatchItemFailure{{ItemIdentifier: ids[failedAt]}}
	}
	if len(ev.Records) > 0 {
		log.Info("read models", "records", len(ev.Records), "commits", len(batch), "runs", len(runs), "failed", failures)
	}
	return resp
}

func reindexRedriven(ctx context.Context, r Reindexer, sc Scanner, segments int, ev events.SQSEvent, log *slog.Logger) BatchResponse {
	var resp BatchResponse
	for _, msg := range ev.Records {
		fb, err := failedBatch(msg.Body)
		if err != nil {
			log.Error("a dead-letter message is no failed stream batch; passed over", "messageId", msg.MessageId, "error", err.Error())
			continue
		}
		from, to := fb.BatchInfo.Window()
		batch, err := redriven(ctx, sc, from, to, segments)
		runs := runsOf(batch)
		if err == nil {
			err = errors.Join(reindexAll(ctx, r, runs)...)
		}
		attrs := []any{"messageId", msg.MessageId, "condition", fb.RequestContext.Condition, "shardId", fb.BatchInfo.ShardID,
			"from", from.Format(time.RFC3339), "to", to.Format(time.RFC3339), "commits", len(batch), "runs", len(runs)}
		if err != nil {
			resp.BatchItemFailures = append(resp.BatchItemFailures, BatchItemFailure{ItemIdentifier: msg.MessageId})
			log.Error("redrive", append(attrs, "error", err.Error())...)
			continue
		}
		log.Info("redrive", attrs...)
	}
	return resp
}
