package dynamo

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// CommitsBetween visits every commit of the table whose time is in [from, to], with a parallel
// Scan of segments segments (at least 1), visit called from one goroutine per segment. It is
// the one read of the whole table, for the stream's redrive (docs/design.md, "Redriving the
// stream"): a Scan reads every item whatever its filter, so its cost is the table's size (on
// demand, one read request unit per 8 KB read, eventually consistent).
//
// A commit's time is stored as RFC 3339 with trailing zeros of its fraction trimmed, so only
// whole seconds compare as strings: the filter bounds the seconds, and the commits of the
// bounding seconds outside [from, to] are dropped here.
func (l *Table) CommitsBetween(ctx context.Context, from, to time.Time, segments int, visit func(runlog.Key, runlog.Commit) error) error {
	segments = max(segments, 1)
	lo := from.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05")
	hi := to.UTC().Truncate(time.Second).Add(time.Second).Format("2006-01-02T15:04:05")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, segments)
	var wg sync.WaitGroup
	for seg := range segments {
		wg.Go(func() {
			errs[seg] = l.scanSegment(ctx, int32(seg), int32(segments), lo, hi, func(k runlog.Key, c runlog.Commit) error {
				if c.At.Before(from) || c.At.After(to) {
					return nil
				}
				return visit(k, c)
			})
			if errs[seg] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (l *Table) scanSegment(ctx context.Context, seg, segments int32, lo, hi string, visit func(runlog.Key, runlog.Commit) error) error {
	in := &dynamodb.ScanInput{
		TableName: &l.table, Segment: aws.Int32(seg), TotalSegments: aws.Int32(segments),
		FilterExpression:          aws.String("begins_with(sk, :c) AND #at >= :lo AND #at < :hi"),
		ExpressionAttributeNames:  map[string]string{"#at": attrAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{":c": s("c#"), ":lo": s(lo), ":hi": s(hi)},
	}
	for {
		out, err := l.db.Scan(ctx, in)
		if err != nil {
			return classify("scan commits", err)
		}
		for _, item := range out.Items {
			k, c, ok, err := CommitOf(item)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if err := visit(k, c); err != nil {
				return err
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
