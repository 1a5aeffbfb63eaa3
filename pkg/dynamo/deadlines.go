package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// The due index and the sweep's cursor share the table:
//
//	due#<minute, RFC 3339>  <Due.Position>  an interrupt due in that minute, a follow-up of
//	                                        one (a reminder, an escalation), or an ended
//	                                        run's retention
//	sweep                   cursor          where the expiry sweep goes on
//
// Due entries carry expiresAt (the table's TTL attribute) a week past their deadline: by then
// the sweep has long handled them.
const dueRetention = 7 * 24 * time.Hour

func duePartition(minute time.Time) types.AttributeValue {
	return s("due#" + minute.UTC().Truncate(time.Minute).Format(time.RFC3339))
}

// Schedule files d under its deadline's minute.
func (l *Table) Schedule(ctx context.Context, d runlog.Due) error {
	if !(runlog.Key{Tenant: d.Tenant, RunID: d.RunID}).Valid() {
		return fmt.Errorf("dynamo: due entry of run %q of tenant %q: %w", d.RunID, d.Tenant, runlog.ErrInvalidKey)
	}
	item := map[string]types.AttributeValue{
		attrPK: duePartition(d.Deadline), attrSK: s(d.Position()),
		"tenant": s(d.Tenant), "runId": s(d.RunID), "interruptId": s(d.InterruptID),
		"deadline": n(d.Deadline.UnixMilli()), attrExpires: n(d.Deadline.Add(dueRetention).Unix()), "seq": n(d.Seq),
	}
	if d.Nudge != "" {
		item["nudge"], item["reminder"] = s(d.Nudge), n(int64(d.Reminder))
	}
	_, err := l.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: item})
	if err != nil {
		return classify("schedule", err)
	}
	return nil
}

// Due lists the entries of minute after the position after, at most limit, with one Query.
func (l *Table) Due(ctx context.Context, minute time.Time, after string, limit int) ([]runlog.Due, error) {
	out, err := l.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(limit)),
		KeyConditionExpression:    aws.String("pk = :pk AND sk > :after"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": duePartition(minute), ":after": s(after)},
	})
	if err != nil {
		return nil, classify("due", err)
	}
	due := make([]runlog.Due, 0, len(out.Items))
	for _, item := range out.Items {
		ms, err := strconv.ParseInt(num(item["deadline"]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("dynamo: due entry %s: %w", str(item[attrSK]), err)
		}
		seq, _ := strconv.ParseInt(num(item["seq"]), 10, 64)
		reminder, _ := strconv.Atoi(num(item["reminder"])) // none on an entry filed before follow-ups
		due = append(due, runlog.Due{
			Tenant: str(item["tenant"]), RunID: str(item["runId"]), InterruptID: str(item["interruptId"]), Deadline: time.UnixMilli(ms).UTC(), Seq: seq,
			Nudge: str(item["nudge"]), Reminder: reminder,
		})
	}
	return due, nil
}

var cursorKey = map[string]types.AttributeValue{attrPK: s("sweep"), attrSK: s("cursor")}

// SweepCursor is the cursor, zero before the first move.
func (l *Table) SweepCursor(ctx context.Context) (runlog.SweepCursor, error) {
	item, err := l.item(ctx, cursorKey)
	if err != nil || item == nil {
		return runlog.SweepCursor{}, err
	}
	var c runlog.SweepCursor
	if c.Minute, err = time.Parse(time.RFC3339, str(item["minute"])); err != nil {
		return c, fmt.Errorf("dynamo: sweep cursor: %w", err)
	}
	c.After = str(item["after"])
	if done, ok := item["done"].(*types.AttributeValueMemberL); ok {
		for _, v := range done.Value {
			c.Done = append(c.Done, str(v))
		}
	}
	if c.Version, err = strconv.ParseInt(num(item["v"]), 10, 64); err != nil {
		return c, fmt.Errorf("dynamo: sweep cursor: %w", err)
	}
	return c, nil
}

// MoveSweep moves the cursor from from to to with a write conditional on from's version.
func (l *Table) MoveSweep(ctx context.Context, from, to runlog.SweepCursor) error {
	item := map[string]types.AttributeValue{
		attrPK: cursorKey[attrPK], attrSK: cursorKey[attrSK],
		"minute": s(to.Minute.UTC().Format(time.RFC3339)), "after": s(to.After), "v": n(from.Version + 1),
	}
	if len(to.Done) > 0 {
		done := make([]types.AttributeValue, len(to.Done))
		for i, p := range to.Done {
			done[i] = s(p)
		}
		item["done"] = &types.AttributeValueMemberL{Value: done}
	}
	in := &dynamodb.PutItemInput{TableName: &l.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}
	if from.Version > 0 {
		in.ConditionExpression = aws.String("v = :v")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": n(from.Version)}
	}
	_, err := l.db.PutItem(ctx, in)
	if IsCondCheckFailed(err) {
		return runlog.ErrSeqTaken
	}
	if err != nil {
		return classify("move sweep", err)
	}
	return nil
}

func num(v types.AttributeValue) string {
	if nv, ok := v.(*types.AttributeValueMemberN); ok {
		return nv.Value
	}
	return ""
}

// Retain gives the run's items (its commits, checkpoint and archive) the expiry the table's TTL
// attribute deletes them at: at most budget of them per call, those that have none yet, so a
// call that answers more picks up where the last one stopped. An ended run takes no more commits,
// and its checkpoint and archive are written right after the commit they follow.
func (l *Table) Retain(ctx context.Context, k runlog.Key, expires time.Time, budget int) (more bool, err error) {
	pk, err := partition(k)
	if err != nil {
		return false, err
	}
	in := &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk"),
		FilterExpression:          aws.String("attribute_not_exists(expiresAt)"),
		ProjectionExpression:      aws.String("sk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(pk)},
	}
	var sks []string
	for len(sks) <= budget {
		page, err := l.db.Query(ctx, in)
		if err != nil {
			return false, classify("retain", err)
		}
		for _, item := range page.Items {
			sks = append(sks, str(item[attrSK]))
		}
		if page.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	more = len(sks) > budget
	sks = sks[:min(len(sks), budget)]
	return more, each(len(sks), func(i int) error {
		_, err := l.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &l.table, Key: map[string]types.AttributeValue{attrPK: s(pk), attrSK: s(sks[i])},
			UpdateExpression:          aws.String("SET expiresAt = :t"),
			ConditionExpression:       aws.String("attribute_exists(sk)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": n(expires.Unix())},
		})
		if err != nil && !IsCondCheckFailed(err) {
			return classify("retain", err)
		}
		return nil
	})
}
