// Package dynamostream maps the run-log table's DynamoDB stream, as Lambda delivers it to
// deliver-events, onto the outbound deliverer: each new commit of a run, in the stream's order,
// and a partial batch response naming the first commit not fully handled, from which Lambda
// retries (docs/engines.md, "Outbound events"). A new commit is an inserted one, or one written over an
// expired commit (a new run of a retired id: a MODIFY whose old image is another commit); a
// MODIFY of the same commit (its retention) is not news.
package dynamostream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Deliverer delivers a batch of commits (outbound.Deliverer); errs[i] is batch[i]'s.
type Deliverer interface {
	Commits(ctx context.Context, batch []runlog.StreamRecord) (outbound.Report, []error)
}

// Handler is deliver-events' entry point. The template's filter passes only inserted and
// modified commits; the handler checks again and passes over anything else. A commit that cannot be read is
// logged and passed over (retrying cannot mend it); a commit whose deliveries hit a store
// failure is reported, with every later record, for Lambda to retry.
func Handler(d Deliverer, log *slog.Logger) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		batch, ids := commitsOf(ev, log)
		var resp events.DynamoDBEventResponse
		if len(batch) == 0 {
			return resp, nil
		}
		report, errs := d.Commits(ctx, batch)
		attrs := []any{"records", len(ev.Records), "commits", report.Commits, "delivered", report.Delivered, "retrying", report.Retrying, "failed", report.Failed}
		for i, err := range errs {
			if err != nil {
				resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: ids[i]}}
				log.Error("deliveries", append(attrs, "retryFrom", ids[i], "runId", batch[i].Key.RunID, "seq", batch[i].Commit.Seq, "error", err.Error())...)
				return resp, nil
			}
		}
		log.Info("deliveries", attrs...)
		return resp, nil
	}
}

// commitsOf are the batch's new commits in stream order, with their records' sequence numbers;
// a commit that cannot be read is logged and passed over (retrying cannot mend it).
func commitsOf(ev events.DynamoDBEvent, log *slog.Logger) (batch []runlog.StreamRecord, ids []string) {
	for _, r := range ev.Records {
		c, ok, err := committed(r)
		if err != nil {
			log.Error("a commit on the stream cannot be read; passed over", "sequenceNumber", r.Change.SequenceNumber, "error", err.Error())
			continue
		}
		if ok {
			batch = append(batch, c)
			ids = append(ids, r.Change.SequenceNumber)
		}
	}
	return batch, ids
}

// committed reads a record: ok for a new commit (inserted, or written over another commit).
func committed(r events.DynamoDBEventRecord) (c runlog.StreamRecord, ok bool, err error) {
	switch events.DynamoDBOperationType(r.EventName) {
	case events.DynamoDBOperationTypeInsert, events.DynamoDBOperationTypeModify:
	default:
		return c, false, nil
	}
	item, err := Item(r.Change.NewImage)
	if err != nil {
		return c, false, err
	}
	if c.Key, c.Commit, ok, err = dynamo.CommitOf(item); err != nil || !ok {
		return c, false, err
	}
	if r.EventName == string(events.DynamoDBOperationTypeModify) {
		old, err := Item(r.Change.OldImage)
		if err != nil {
			return c, false, err
		}
		_, before, wasCommit, err := dynamo.CommitOf(old)
		if err != nil {
			return c, false, err
		}
		if wasCommit && before.ID == c.Commit.ID {
			return c, false, nil // the same commit, an attribute changed (its retention)
		}
		c.Rewrite = true
	}
	return c, true, nil
}

// Item converts a stream image into the SDK's attribute values, which package dynamo reads.
func Item(image map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	out := make(map[string]types.AttributeValue, len(image))
	for k, v := range image {
		av, err := value(v)
		if err != nil {
			return nil, fmt.Errorf("dynamostream: attribute %s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func value(v events.DynamoDBAttributeValue) (types.AttributeValue, error) {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		if _, err := strconv.ParseFloat(v.Number(), 64); err != nil {
			return nil, fmt.Errorf("number %q", v.Number())
		}
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		list := make([]types.AttributeValue, 0, len(v.List()))
		for _, e := range v.List() {
			av, err := value(e)
			if err != nil {
				return nil, err
			}
			list = append(list, av)
		}
		return &types.AttributeValueMemberL{Value: list}, nil
	case events.DataTypeMap:
		m, err := Item(v.Map())
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, errors.New("an attribute of no known type")
}
