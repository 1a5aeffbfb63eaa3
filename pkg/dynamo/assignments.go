package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// A decider's inbox is one partition, an entry an item at its place:
//
//	<tenant>#inbox#<ref>  <place>  seq, origin, assignment: the run's commit the entry
//	                               reflects, the run's first commit's id ("o:<id>"), and the
//	                               entry (JSON)
//
// A ref longer than maxInboxRef bytes is named by its SHA-256. "#inbox#" is in no other
// partition key (tenant, run and subscription ids hold no '#'), which is what the roles'
// PutItem and DeleteItem conditions name. Entries carry no expiry: they are removed by the
// reindex of the commit that closes their interrupt, and a stale one by the reader that finds
// it (docs/design.md, "The inbox").
const attrAssignment = "assignment"

// maxInboxRef is the longest ref an inbox's partition key holds as it is.
const maxInboxRef = 512

func inboxPartition(tenant, ref string) string {
	if len(ref) > maxInboxRef {
		sum := sha256.Sum256([]byte(ref))
		ref = "sha256:" + hex.EncodeToString(sum[:])
	}
	return tenant + "#inbox#" + ref
}

func assignmentKey(a runlog.Assignment) (map[string]types.AttributeValue, error) {
	if !a.Key.Valid() || a.Ref == "" {
		return nil, fmt.Errorf("dynamo: inbox entry of run %q of tenant %q in %q: %w", a.Key.RunID, a.Key.Tenant, a.Ref, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s(inboxPartition(a.Key.Tenant, a.Ref)), attrSK: s(a.Place())}, nil
}

// FileAssignment files a with one put, conditional on no entry of a later commit of the same run
// being at its place.
func (l *Table) FileAssignment(ctx context.Context, a runlog.Assignment) error {
	item, err := assignmentKey(a)
	if err != nil {
		return err
	}
	a.Summary.Inboxes = nil // the waiting entry's, not the inbox's
	b, err := runlog.Marshal(a)
	if err != nil {
		return err
	}
	item[attrSeq], item[attrOrigin], item[attrAssignment] = n(a.Seq), s("o:"+a.Origin), s(string(b))
	_, err = l.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &l.table, Item: item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR origin <> :origin OR seq <= :seq"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":seq": n(a.Seq), ":origin": s("o:" + a.Origin)},
	})
	if err != nil && !IsCondCheckFailed(err) {
		return classify("file inbox entry", err)
	}
	return nil
}

// UnfileAssignment deletes the entry at a's place with one delete, conditional on its being of
// another run of the id, or of a's commit or an earlier one.
func (l *Table) UnfileAssignment(ctx context.Context, a runlog.Assignment) error {
	key, err := assignmentKey(a)
	if err != nil {
		return err
	}
	_, err = l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &l.table, Key: key,
		ConditionExpression:       aws.String("origin <> :origin OR seq <= :seq"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":seq": n(a.Seq), ":origin": s("o:" + a.Origin)},
	})
	if err != nil && !IsCondCheckFailed(err) {
		return classify("unfile inbox entry", err)
	}
	return nil
}

// Assigned lists the tenant's inbox ref after place after, in place order, with consistent
// Queries (one, unless a page of them passes 1 MB).
func (l *Table) Assigned(ctx context.Context, tenant, ref, after string, limit int) ([]runlog.Assignment, error) {
	if !runlog.ValidID(tenant) || ref == "" {
		return nil, fmt.Errorf("dynamo: inbox %q of tenant %q: %w", ref, tenant, runlog.ErrInvalidKey)
	}
	// Paged through: a Query stops at 1 MB, which entries of long titles and many voters can
	// reach before limit; a short answer would read as the end of the inbox.
	var items []map[string]types.AttributeValue
	var start map[string]types.AttributeValue
	for len(items) < limit {
		out, err := l.db.Query(ctx, &dynamodb.QueryInput{
			TableName: &l.table, ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(limit - len(items))), ExclusiveStartKey: start,
			KeyConditionExpression:    aws.String("pk = :pk AND sk > :after"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(inboxPartition(tenant, ref)), ":after": s(after)},
		})
		if err != nil {
			return nil, classify("inbox", err)
		}
		items = append(items, out.Items...)
		if start = out.LastEvaluatedKey; len(start) == 0 {
			break
		}
	}
	found := make([]runlog.Assignment, 0, len(items))
	for _, item := range items {
		var a runlog.Assignment
		if err := json.Unmarshal([]byte(str(item[attrAssignment])), &a); err != nil {
			return nil, fmt.Errorf("dynamo: inbox entry %s: %w", str(item[attrSK]), err)
		}
		seq, err := strconv.ParseInt(num(item[attrSeq]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("dynamo: inbox entry %s: %w", str(item[attrSK]), err)
		}
		origin, ok := strings.CutPrefix(str(item[attrOrigin]), "o:")
		if !ok {
			return nil, fmt.Errorf("dynamo: inbox entry %s has no origin", str(item[attrSK]))
		}
		a.Seq, a.Origin = seq, origin
		found = append(found, a)
	}
	return found, nil
}
