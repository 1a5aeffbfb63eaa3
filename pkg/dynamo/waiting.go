package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// A tenant's waiting index is one partition, a run an item:
//
//	<tenant>#waiting#  <runId>  seq, filedAt, origin, pending: the commit the entry reflects,
//	                            its time, the run's first commit's id (as "o:<id>": never
//	                            empty), and the pending interrupts' summaries (JSON)
//
// It is the table's only partition key that ends in "#" (an id never does), which is what the
// roles' PutItem and DeleteItem conditions name. Its items carry no expiry: a run may wait for as
// long as it lives, and a stale entry is repaired by the reader that finds it stale
// (docs/design.md, "Read models").
const (
	attrFiledAt = "filedAt"
	attrPending = "pending"
	attrOmitted = "omitted"
)

func waitingPartition(tenant string) string { return tenant + "#waiting#" }

func waitingKey(k runlog.Key) (map[string]types.AttributeValue, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("dynamo: waiting entry of run %q of tenant %q: %w", k.RunID, k.Tenant, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s(waitingPartition(k.Tenant)), attrSK: s(k.RunID)}, nil
}

// FileWaiting files w with one put, conditional on w replacing the entry there
// (runlog.Waiting.Replaces), which answers the entry it replaced (ReturnValues ALL_OLD).
// Summaries that would not fit one item (200 of them, each filed in many inboxes) are left out,
// and the entry says so (runlog.Waiting.Omitted): the list reads such a run from its log.
func (l *Table) FileWaiting(ctx context.Context, w runlog.Waiting) (runlog.Waiting, bool, error) {
	item, err := waitingKey(w.Key)
	if err != nil {
		return runlog.Waiting{}, false, err
	}
	pending, err := runlog.Marshal(w.Pending)
	if err != nil {
		return runlog.Waiting{}, false, err
	}
	item[attrSeq], item[attrFiledAt], item[attrOrigin], item[attrPending] = n(w.Seq), n(w.At.UnixMicro()), s("o:"+w.Origin), s(string(pending))
	if ItemSize(item) > MaxItemBytes {
		delete(item, attrPending)
		item[attrOmitted] = &types.AttributeValueMemberBOOL{Value: true}
	}
	out, err := l.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &l.table, Item: item, ReturnValues: types.ReturnValueAllOld,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR origin <> :origin OR seq <= :seq"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":seq": n(w.Seq), ":origin": s("o:" + w.Origin)},
	})
	switch {
	case IsCondCheckFailed(err):
		return runlog.Waiting{}, false, nil
	case err != nil:
		return runlog.Waiting{}, false, classify("file waiting", err)
	case len(out.Attributes) == 0:
		return runlog.Waiting{}, true, nil
	}
	prior, err := waitingOf(w.Key.Tenant, out.Attributes)
	return prior, true, err
}

// UnfileWaiting deletes w's run's entry with one delete, conditional on w removing it
// (runlog.Waiting.Removes): one of another run of the id, or of w's commit or an earlier one.
// It answers the entry removed (ReturnValues ALL_OLD).
func (l *Table) UnfileWaiting(ctx context.Context, w runlog.Waiting) (runlog.Waiting, bool, error) {
	key, err := waitingKey(w.Key)
	if err != nil {
		return runlog.Waiting{}, false, err
	}
	out, err := l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &l.table, Key: key, ReturnValues: types.ReturnValueAllOld,
		ConditionExpression:       aws.String("origin <> :origin OR seq <= :seq"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":seq": n(w.Seq), ":origin": s("o:" + w.Origin)},
	})
	switch {
	case IsCondCheckFailed(err):
		return runlog.Waiting{}, false, nil
	case err != nil:
		return runlog.Waiting{}, false, classify("unfile waiting", err)
	case len(out.Attributes) == 0:
		return runlog.Waiting{}, false, nil // there was none
	}
	prior, err := waitingOf(w.Key.Tenant, out.Attributes)
	return prior, true, err
}

// WaitingRuns lists the tenant's entries after run id after, in run id order, with one
// consistent Query.
func (l *Table) WaitingRuns(ctx context.Context, tenant, after string, limit int) ([]runlog.Waiting, error) {
	if !runlog.ValidID(tenant) {
		return nil, fmt.Errorf("dynamo: waiting runs of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	out, err := l.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(limit)),
		KeyConditionExpression:    aws.String("pk = :pk AND sk > :after"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(waitingPartition(tenant)), ":after": s(after)},
	})
	if err != nil {
		return nil, classify("waiting runs", err)
	}
	runs := make([]runlog.Waiting, 0, len(out.Items))
	for _, item := range out.Items {
		w, err := waitingOf(tenant, item)
		if err != nil {
			return nil, err
		}
		runs = append(runs, w)
	}
	return runs, nil
}

// waitingOf reads a waiting entry of tenant's index.
func waitingOf(tenant string, item map[string]types.AttributeValue) (runlog.Waiting, error) {
	seq, err := strconv.ParseInt(num(item[attrSeq]), 10, 64)
	if err != nil {
		return runlog.Waiting{}, fmt.Errorf("dynamo: waiting entry %s: %w", str(item[attrSK]), err)
	}
	at, err := strconv.ParseInt(num(item[attrFiledAt]), 10, 64)
	if err != nil {
		return runlog.Waiting{}, fmt.Errorf("dynamo: waiting entry %s: %w", str(item[attrSK]), err)
	}
	origin, ok := strings.CutPrefix(str(item[attrOrigin]), "o:")
	if !ok {
		return runlog.Waiting{}, fmt.Errorf("dynamo: waiting entry %s has no origin", str(item[attrSK]))
	}
	var pending []runlog.Summary
	if raw := str(item[attrPending]); raw != "" {
		if err := json.Unmarshal([]byte(raw), &pending); err != nil {
			return runlog.Waiting{}, fmt.Errorf("dynamo: waiting entry %s: %w", str(item[attrSK]), err)
		}
	}
	omitted, _ := item[attrOmitted].(*types.AttributeValueMemberBOOL)
	return runlog.Waiting{
		Key: runlog.Key{Tenant: tenant, RunID: str(item[attrSK])}, Seq: seq, At: time.UnixMicro(at).UTC(), Origin: origin, Pending: pending,
		Omitted: omitted != nil && omitted.Value,
	}, nil
}

// Newer reports whether the log of run k holds a commit after seq, live or expired, with one
// consistent Query that reads at most one item: none, when the log ends at seq (the reader's
// common case, one read unit whatever the commits hold), else the next commit. An expired one
// counts: the entry's run is gone, or its id was taken again.
func (l *Table) Newer(ctx context.Context, k runlog.Key, seq int64) (bool, error) {
	pk, err := partition(k)
	if err != nil {
		return false, err
	}
	out, err := l.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true), Limit: aws.Int32(1),
		KeyConditionExpression:    aws.String("pk = :pk AND sk BETWEEN :next AND :last"),
		ProjectionExpression:      aws.String("sk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(pk), ":next": s(sortKey(seq + 1)), ":last": s(sortKey(math.MaxInt64))},
	})
	if err != nil {
		return false, classify("newer", err)
	}
	return len(out.Items) > 0, nil
}
