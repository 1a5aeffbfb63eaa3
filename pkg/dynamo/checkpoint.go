package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// A run's partition holds, beside its commits (docs/deploying.md, "The run log's stored form"):
//
//	c#<seq, 20 digits>   a commit
//	c$                   the run's checkpoint: its live state after commit seq (runlog.Checkpoint)
//	x#<kind>#<sha256>    an archive item, named by its runlog.Ref (the name kept beside it)
//
// "c$" sorts after every commit, so one descending Query reads the checkpoint first and then the
// commits from the newest down to it, and stops there: the cost of a read is the checkpoint and at
// most about runlog.CheckpointEvery commits, however long the run. Commits are read by the range
// of their own keys, which leaves the other items out.
const (
	skCheckpoint = "c$"
	lastCommitSK = "c#99999999999999999999"
	attrState    = "state"
	attrValue    = "v"
	attrName     = "name"
	attrOrigin   = "origin"
	// lookupsAtOnce bounds the reads and writes of archive items one call sends at once.
	lookupsAtOnce = 8
)

func archiveKey(pk string, r runlog.Ref) map[string]types.AttributeValue {
	sum := sha256.Sum256([]byte(r.Name))
	return map[string]types.AttributeValue{attrPK: s(pk), attrSK: s("x#" + string(r.Kind) + "#" + hex.EncodeToString(sum[:16]))}
}

// Tail reads the run's newest live checkpoint (nil if none) and the commits after it, in order,
// with one consistent descending Query (paged further only when the checkpoint is older than
// usual, or absent: then to the run's first commit).
func (l *Table) Tail(ctx context.Context, k runlog.Key) (*runlog.Checkpoint, []runlog.Commit, error) {
	pk, err := partition(k)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now().Unix()
	in := &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true), ScanIndexForward: aws.Bool(false),
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :first AND :cp"),
		FilterExpression:       aws.String("attribute_not_exists(expiresAt) OR expiresAt > :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": s(pk), ":first": s(sortKey(1)), ":cp": s(skCheckpoint), ":now": n(now),
		},
		Limit: aws.Int32(runlog.CheckpointEvery + 2),
	}
	var cp *runlog.Checkpoint
	var commits []runlog.Commit
	for {
		page, err := l.db.Query(ctx, in)
		if err != nil {
			return nil, nil, classify("query", err)
		}
		for _, item := range page.Items {
			if str(item[attrSK]) == skCheckpoint {
				if cp, err = decodeCheckpoint(item); err != nil {
					return nil, nil, err
				}
				continue
			}
			c, err := decode(item)
			if err != nil {
				return nil, nil, err
			}
			if cp != nil && c.Seq <= cp.Seq {
				if c.Seq == cp.Seq && c.ID == cp.Commit {
					slices.Reverse(commits)
					return cp, commits, nil
				}
				cp = nil // not beside its commit: read the log whole
			}
			commits = append(commits, c)
		}
		if page.LastEvaluatedKey == nil {
			// Every commit read and none was the checkpoint's: it stands for no commit there is.
			slices.Reverse(commits)
			return nil, commits, nil
		}
		in.ExclusiveStartKey, in.Limit = page.LastEvaluatedKey, nil
	}
}

func decodeCheckpoint(item map[string]types.AttributeValue) (*runlog.Checkpoint, error) {
	var cp runlog.Checkpoint
	if err := json.Unmarshal([]byte(str(item[attrState])), &cp); err != nil {
		return nil, fmt.Errorf("dynamo: checkpoint: %w", err)
	}
	return &cp, nil
}

// Checkpoint writes the archive items, then cp, unless a newer checkpoint of the same run is
// there already (one of an earlier run of the id, or expired, is written over).
// Nothing is written over an archive item but the same value (both are derived from the log), so
// a writer that dies midway leaves only items the next checkpoint writes again.
func (l *Table) Checkpoint(ctx context.Context, k runlog.Key, cp *runlog.Checkpoint, archive []runlog.Found) error {
	pk, err := partition(k)
	if err != nil {
		return err
	}
	state, err := runlog.Marshal(cp)
	if err != nil {
		return err
	}
	item := map[string]types.AttributeValue{attrPK: s(pk), attrSK: s(skCheckpoint), attrSeq: n(cp.Seq), attrState: s(string(state)), attrOrigin: s(cp.Origin)}
	if size := ItemSize(item); size > MaxItemBytes {
		return &runlog.TooLargeError{Size: size, Limit: MaxItemBytes}
	}
	err = each(len(archive), func(i int) error {
		f := archive[i]
		a := archiveKey(pk, f.Ref)
		a[attrName], a[attrValue], a[attrOrigin] = s(f.Name), s(string(f.Value)), s(f.Origin)
		if size := ItemSize(a); size > MaxItemBytes {
			return &runlog.TooLargeError{Size: size, Limit: MaxItemBytes}
		}
		in := &dynamodb.PutItemInput{TableName: &l.table, Item: a}
		if f.Seq > 0 { // a value that changes: the newest stays, whoever writes last
			a[attrSeq] = n(f.Seq)
			in.ConditionExpression = aws.String("attribute_not_exists(sk) OR seq < :seq OR origin <> :origin")
			in.ExpressionAttributeValues = map[string]types.AttributeValue{":seq": n(f.Seq), ":origin": s(f.Origin)}
		}
		_, err := l.db.PutItem(ctx, in)
		if IsCondCheckFailed(err) {
			return nil
		}
		return classify("archive", err)
	})
	if err != nil {
		return err
	}
	_, err = l.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &l.table, Item: item,
		ConditionExpression:       aws.String("attribute_not_exists(sk) OR seq < :seq OR expiresAt <= :now OR origin <> :origin"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":seq": n(cp.Seq), ":now": n(time.Now().Unix()), ":origin": s(cp.Origin)},
	})
	if IsCondCheckFailed(err) {
		return nil // a newer checkpoint is there: it stands for this one too
	}
	return classify("checkpoint", err)
}

// Lookup reads the archive items refs name, and answers those that exist, in no order.
func (l *Table) Lookup(ctx context.Context, k runlog.Key, refs []runlog.Ref) ([]runlog.Found, error) {
	pk, err := partition(k)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var found []runlog.Found
	now := time.Now().Unix()
	err = each(len(refs), func(i int) error {
		item, err := l.item(ctx, archiveKey(pk, refs[i]))
		if err != nil || item == nil || str(item[attrName]) != refs[i].Name {
			return err
		}
		if exp, err := strconv.ParseInt(num(item[attrExpires]), 10, 64); err == nil && exp <= now {
			return nil // the archive of an expired run, whose id a new run took
		}
		seq, _ := strconv.ParseInt(num(item[attrSeq]), 10, 64)
		mu.Lock()
		found = append(found, runlog.Found{Ref: refs[i], Value: json.RawMessage(str(item[attrValue])), Origin: str(item[attrOrigin]), Seq: seq})
		mu.Unlock()
		return nil
	})
	return found, err
}

// each runs do for 0 to n-1, lookupsAtOnce at a time, and answers their errors joined.
func each(n int, do func(i int) error) error {
	if n == 1 {
		return do(0)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	sem := make(chan struct{}, lookupsAtOnce)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = do(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
