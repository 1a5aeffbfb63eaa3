package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// Queues are the template's SQS queues by logical id (package queues over moto).
type Queues interface {
	Send(ctx context.Context, queue, body string) error
	Receive(ctx context.Context, queue string, max int, wait time.Duration) ([]events.SQSMessage, error)
	Delete(ctx context.Context, queue, receipt string) error
}

// queued is a function with an SQS event.
type queued struct {
	samtemplate.QueueEvent
	function string
	pool     invoker
	queues   Queues
}

// queueWait is how long one receive waits for a message (SQS long polling), so that a quiet
// queue costs one call per wait, as Lambda's poller does.
const queueWait = time.Second

// RunQueues stands in for Lambda's SQS event source mapping: for each SQS event of the template
// it polls the queue and invokes the function with up to BatchSize messages at a time, then
// deletes those it handled: all of them, unless the invocation failed (none) or its partial
// batch response names some (those stay). A message left is received again once its visibility
// timeout passes, and moves to the queue's dead-letter queue after its redrive policy's
// receives, as SQS does. One batch at a time per event.
func (g *Gateway) RunQueues(ctx context.Context) {
	for _, q := range g.queues {
		go g.poll(ctx, q)
	}
}

func (g *Gateway) poll(ctx context.Context, q *queued) {
	for ctx.Err() == nil {
		msgs, err := q.queues.Receive(ctx, q.Queue, q.BatchSize, queueWait)
		if err != nil {
			if ctx.Err() == nil {
				g.log.Warn("queue receive", "function", q.function, "queue", q.Queue, "error", err.Error())
				select {
				case <-ctx.Done():
				case <-time.After(queueWait):
				}
			}
			continue
		}
		if len(msgs) == 0 {
			continue
		}
		for _, m := range g.handled(ctx, q, msgs) {
			if err := q.queues.Delete(ctx, q.Queue, m.ReceiptHandle); err != nil {
				g.log.Warn("queue delete", "function", q.function, "queue", q.Queue, "messageId", m.MessageId, "error", err.Error())
			}
		}
	}
}

// handled invokes the function with msgs and answers those it handled.
func (g *Gateway) handled(ctx context.Context, q *queued, msgs []events.SQSMessage) []events.SQSMessage {
	event, err := json.Marshal(events.SQSEvent{Records: msgs})
	if err != nil {
		g.log.Error("queue event", "function", q.function, "error", err.Error())
		return nil
	}
	out, err := q.pool.Invoke(ctx, newRequestID(), event)
	var resp struct {
		events.SQSEventResponse
		ErrorType string `json:"errorType"`
	}
	if err == nil {
		err = json.Unmarshal(out, &resp)
	}
	if err != nil || resp.ErrorType != "" {
		g.log.Warn("queue batch failed; its messages come back after their visibility timeout", "function", q.function, "messages", len(msgs), "error", err, "errorType", resp.ErrorType)
		return nil
	}
	if !q.PartialBatch {
		return msgs
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var done []events.SQSMessage
	for _, m := range msgs {
		if !failed[m.MessageId] {
			done = append(done, m)
		}
	}
	return done
}
