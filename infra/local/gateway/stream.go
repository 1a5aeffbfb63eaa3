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
	pool     *Pool
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
// from the first record it names; after MaximumRetryAttempts the batch is dropped and logged,
// where Lambda would send it to the on-failure destination. One batch at a time per function.
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
		failedAt, err := g.invokeBatch(ctx, s, batch)
		if err == nil && failedAt < 0 {
			return
		}
		if s.MaxRetries >= 0 && attempt >= s.MaxRetries {
			g.log.Error("stream batch dropped after its retries (Lambda: the on-failure destination)", "function", s.function, "records", len(batch), "error", err)
			return
		}
		if err != nil && s.Bisect && len(batch) > 1 {
			g.invokeStream(ctx, s, batch[:len(batch)/2])
			g.invokeStream(ctx, s, batch[len(batch)/2:])
			return
		}
		if err == nil {
			batch = batch[failedAt:]
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
