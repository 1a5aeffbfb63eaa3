package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/infra/local/ddbstream"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// streamed is a function that reads a table's stream.
type streamed struct {
	samtemplate.Stream
	function string
	table    string
	filters  []ddbstream.Filter
	pool     invoker
	// queues holds the stream's on-failure destination (Stream.OnFailure), when it has one.
	queues Queues
}

// invoker runs a function (Pool).
type invoker interface {
	Invoke(ctx context.Context, requestID string, event []byte) ([]byte, error)
}

// Streams gives the stream of a table by name (ddbstream.Proxy).
type Streams interface {
	Stream(table string) *ddbstream.Stream
}

// RunStreams stands in for Lambda's DynamoDB event source mapping: for each stream event of the
// template it reads the table's stream from its start, in order, and invokes the function under
// the emulator with the batches Lambda would send (BatchSize records, gathered for at most the
// batching window, filtered by the event's patterns). A batch the function fails is retried
// with backoff, split in two first when the event bisects; a partial batch response retries
// from the first record it names; after MaximumRetryAttempts, or once its oldest record is older
// than MaximumRecordAgeInSeconds, the batch is given up on: recorded in the on-failure
// destination as Lambda records it (deadLetter), or dropped and logged without one. One batch
// at a time per function.
func (g *Gateway) RunStreams(ctx context.Context, src Streams) {
	for _, s := range g.streams {
		st := src.Stream(s.table)
		context.AfterFunc(ctx, st.Wake)
		go g.consume(ctx, s, st)
	}
}

func (g *Gateway) consume(ctx context.Context, s *streamed, st *ddbstream.Stream) {
	for pos := 0; ctx.Err() == nil; {
		recs, next := st.Read(pos, s.BatchSize, ctx.Done())
		if len(recs) == 0 {
			return
		}
		if len(recs) < s.BatchSize && s.BatchingWindow > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.BatchingWindow):
			}
			recs, next = st.Read(pos, s.BatchSize, ctx.Done())
		}
		pos = next
		var batch []events.DynamoDBEventRecord
		for _, r := range recs {
			if s.passes(r) {
				batch = append(batch, r)
			}
		}
		g.invokeStream(ctx, s, batch)
	}
}

func (s *streamed) passes(r events.DynamoDBEventRecord) bool {
	if len(s.filters) == 0 {
		return true
	}
	for _, f := range s.filters {
		if f.Match(r) {
			return true
		}
	}
	return false
}

// invokeStream delivers one batch, retrying as the event source mapping does.
func (g *Gateway) invokeStream(ctx context.Context, s *streamed, batch []events.DynamoDBEventRecord) {
	for attempt := 0; len(batch) > 0 && ctx.Err() == nil; attempt++ {
		if s.MaxRecordAge > 0 && g.now().Sub(batch[0].Change.ApproximateCreationDateTime.Time) > s.MaxRecordAge {
			g.giveUp(ctx, s, batch, conditionRecordAge, attempt, nil)
			return
		}
		failedAt, err := g.invokeBatch(ctx, s, batch)
		if err == nil && failedAt < 0 {
			return
		}
		if err == nil {
			batch = batch[failedAt:]
		}
		if s.MaxRetries >= 0 && attempt >= s.MaxRetries {
			g.giveUp(ctx, s, batch, conditionRetries, attempt+1, err)
			return
		}
		if err != nil && s.Bisect && len(batch) > 1 {
			g.invokeStream(ctx, s, batch[:len(batch)/2])
			g.invokeStream(ctx, s, batch[len(batch)/2:])
			return
		}
		g.log.Warn("stream batch retried", "function", s.function, "records", len(batch), "attempt", attempt+1, "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(min(time.Duration(1<<attempt)*200*time.Millisecond, 10*time.Second)):
		}
	}
}

// invokeBatch invokes the function once: failedAt is the index of the first record its partial
// batch response names (-1: none), err a failed invocation.
func (g *Gateway) invokeBatch(ctx context.Context, s *streamed, batch []events.DynamoDBEventRecord) (failedAt int, err error) {
	event, err := json.Marshal(events.DynamoDBEvent{Records: batch})
	if err != nil {
		return -1, err
	}
	id := newRequestID()
	out, err := s.pool.Invoke(ctx, id, event)
	if err != nil {
		return -1, err
	}
	var resp struct {
		events.DynamoDBEventResponse
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return -1, fmt.Errorf("the function answered %.200s: %w", out, err)
	}
	if resp.ErrorType != "" {
		return -1, errors.New(resp.ErrorType + ": " + resp.ErrorMessage)
	}
	if !s.PartialBatch || len(resp.BatchItemFailures) == 0 {
		return -1, nil
	}
	first := -1
	for _, f := range resp.BatchItemFailures {
		for i, r := range batch {
			if r.Change.SequenceNumber == f.ItemIdentifier && (first < 0 || i < first) {
				first = i
			}
		}
	}
	if first < 0 { // Lambda fails the whole batch when a reported id is not in it
		return -1, errors.New("the partial batch response names a record not in the batch")
	}
	return first, nil
}

// Why an event source mapping gave up on a batch (Lambda's requestContext.condition).
const (
	conditionRetries   = "RetryAttemptsExhausted"
	conditionRecordAge = "RecordAgeExceeded"
)

// FailedBatch is the record Lambda sends to a DynamoDB event source's on-failure destination
// (Lambda developer guide, "Retaining discarded batches"): where the batch was in the stream,
// not its records. Arrival times are whole seconds, as Lambda writes them for DynamoDB.
type FailedBatch struct {
	RequestContext struct {
		RequestID              string `json:"requestId"`
		FunctionArn            string `json:"functionArn"`
		Condition              string `json:"condition"`
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	ResponseContext struct {
		StatusCode      int    `json:"statusCode"`
		ExecutedVersion string `json:"executedVersion"`
		FunctionError   string `json:"functionError,omitempty"`
	} `json:"responseContext"`
	Version   string `json:"version"`
	Timestamp string `json:"timestamp"`
	BatchInfo struct {
		ShardID                         string `json:"shardId"`
		StartSequenceNumber             string `json:"startSequenceNumber"`
		EndSequenceNumber               string `json:"endSequenceNumber"`
		ApproximateArrivalOfFirstRecord string `json:"approximateArrivalOfFirstRecord"`
		ApproximateArrivalOfLastRecord  string `json:"approximateArrivalOfLastRecord"`
		BatchSize                       int    `json:"batchSize"`
		StreamArn                       string `json:"streamArn"`
	} `json:"DDBStreamBatchInfo"`
}

// failedBatch is the on-failure record of batch.
func (g *Gateway) failedBatch(s *streamed, batch []events.DynamoDBEventRecord, condition string, invokes int, err error) FailedBatch {
	var fb FailedBatch
	fb.RequestContext.RequestID, fb.RequestContext.Condition, fb.RequestContext.ApproximateInvokeCount = newRequestID(), condition, invokes
	fb.RequestContext.FunctionArn = "arn:aws:lambda:us-east-1:000000000000:function:" + s.function
	fb.ResponseContext.StatusCode, fb.ResponseContext.ExecutedVersion = 200, "$LATEST"
	if err != nil {
		fb.ResponseContext.FunctionError = "Unhandled"
	}
	fb.Version, fb.Timestamp = "1.0", g.now().UTC().Format("2006-01-02T15:04:05.000Z")
	first, last := batch[0].Change, batch[len(batch)-1].Change
	arrival := func(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }
	bi := &fb.BatchInfo
	bi.ShardID, bi.StartSequenceNumber, bi.EndSequenceNumber = "shardId-local", first.SequenceNumber, last.SequenceNumber
	bi.ApproximateArrivalOfFirstRecord, bi.ApproximateArrivalOfLastRecord = arrival(first.ApproximateCreationDateTime.Time), arrival(last.ApproximateCreationDateTime.Time)
	bi.BatchSize, bi.StreamArn = len(batch), batch[0].EventSourceArn
	return fb
}

// giveUp records a batch the mapping gave up on in its on-failure destination, or drops it,
// logged, when it has none.
func (g *Gateway) giveUp(ctx context.Context, s *streamed, batch []events.DynamoDBEventRecord, condition string, invokes int, cause error) {
	attrs := []any{"function", s.function, "records", len(batch), "condition", condition, "error", cause}
	if s.OnFailure == "" || s.queues == nil {
		g.log.Error("stream batch dropped: no on-failure destination", attrs...)
		return
	}
	body, err := json.Marshal(g.failedBatch(s, batch, condition, invokes, cause))
	if err == nil {
		err = s.queues.Send(ctx, s.OnFailure, string(body))
	}
	if err != nil {
		g.log.Error("stream batch dropped: its on-failure destination refused it", append(attrs, "destination", s.OnFailure, "sendError", err.Error())...)
		return
	}
	g.log.Warn("stream batch sent to its on-failure destination", append(attrs, "destination", s.OnFailure)...)
}
