package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// A tenant's runs index is one partition, a run an item, with two sparse global secondary
// indexes over the same items (template.yaml):
//
//	<tenant>#runs#  <runId>  seq, at, origin, phase, waiting, titles (JSON), words, expiresAt
//	                         (an ended run's, as its log's), and the indexes' keys:
//	                         runsPk <tenant>#runs#, phasePk <tenant>#runs#<phase>, and
//	                         runsAct runlog.RunEntry.SortKey
//
// RunsByActivity (runsPk, runsAct) lists a tenant's runs newest activity first, RunsByPhase
// (phasePk, runsAct) those of one phase; a time range is a range of runsAct, a run id prefix a
// range of the table's sk, and words of titles a filter on words, so a page is one Query that
// reads what it lists and, when filtered, at most runlog.MaxRunsRead entries more. The
// partition ends in "#" as the waiting index's does, which the roles' conditions name.
const (
	attrPhase    = "phase"
	attrWaitingN = "waiting"
	attrTitles   = "titles"
	attrWords    = "words"
	attrRunsPK   = "runsPk"
	attrPhasePK  = "phasePk"
	attrRunsAct  = "runsAct"

	indexRunsByActivity = "RunsByActivity"
	indexRunsByPhase    = "RunsByPhase"
)

func runsPartition(tenant string) string { return tenant + "#runs#" }

// FileRun files e with one put, conditional on e replacing the entry there
// (runlog.RunEntry.Replaces).
func (l *Table) FileRun(ctx context.Context, e runlog.RunEntry) (bool, error) {
	if !e.Key.Valid() {
		return false, fmt.Errorf("dynamo: runs entry of run %q of tenant %q: %w", e.Key.RunID, e.Key.Tenant, runlog.ErrInvalidKey)
	}
	titles, err := json.Marshal(e.Titles)
	if err != nil {
		return false, err
	}
	pk := runsPartition(e.Key.Tenant)
	item := map[string]types.AttributeValue{
		attrPK: s(pk), attrSK: s(e.Key.RunID), attrSeq: n(e.Seq), attrAt: n(e.At.UnixMicro()), attrOrigin: s("o:" + e.Origin),
		attrPhase: s(string(e.Phase)), attrWaitingN: n(int64(e.Waiting)), attrTitles: s(string(titles)), attrWords: s(e.Words()),
		attrRunsPK: s(pk), attrPhasePK: s(pk + string(e.Phase)), attrRunsAct: s(e.SortKey()),
	}
	if !e.Expires.IsZero() {
		item[attrExpires] = n(e.Expires.Unix())
	}
	_, err = l.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &l.table, Item: item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR origin <> :origin OR seq <= :seq"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":seq": n(e.Seq), ":origin": s("o:" + e.Origin)},
	})
	switch {
	case IsCondCheckFailed(err):
		return false, nil
	case err != nil:
		return false, classify("file run", err)
	}
	return true, nil
}

// Runs answers a page of the tenant's runs q matches: one Query of RunsByActivity, or of
// RunsByPhase for a phase, newest first, or of the table for a run id prefix, in id order; the
// rest of q a filter, read on until the page is full, the entries are all read, or
// runlog.MaxRunsRead were read. Eventually consistent, as a global secondary index is.
func (l *Table) Runs(ctx context.Context, tenant string, q runlog.RunQuery) (runlog.RunPage, error) {
	if !runlog.ValidID(tenant) {
		return runlog.RunPage{}, fmt.Errorf("dynamo: runs of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	in := runsQuery(l.table, tenant, q)
	page := runlog.RunPage{Runs: []runlog.RunEntry{}}
	for read := 0; ; {
		in.Limit = aws.Int32(int32(min(runlog.MaxRunsRead-read, max(q.Limit-len(page.Runs), 10))))
		out, err := l.db.Query(ctx, in)
		if err != nil {
			return runlog.RunPage{}, classify("runs", err)
		}
		read += int(out.ScannedCount)
		for _, item := range out.Items {
			e, err := runOf(tenant, item)
			if err != nil {
				return runlog.RunPage{}, err
			}
			if !q.ByID() && e.SortKey() == q.After {
				continue // the key condition's bound is inclusive
			}
			page.Runs = append(page.Runs, e)
			if len(page.Runs) == q.Limit {
				page.Next = q.Cursor(e)
				return page, nil
			}
		}
		switch {
		case len(out.LastEvaluatedKey) == 0:
			return page, nil
		case read >= runlog.MaxRunsRead:
			if q.ByID() {
				page.Next = str(out.LastEvaluatedKey[attrSK])
			} else {
				page.Next = str(out.LastEvaluatedKey[attrRunsAct])
			}
			return page, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// maxSortKey is above every runlog.RunEntry.SortKey and every run id ("~" follows every
// character an id may hold).
const maxSortKey = "~"

// runsQuery is the Query q's first page asks.
func runsQuery(table, tenant string, q runlog.RunQuery) *dynamodb.QueryInput {
	pk := runsPartition(tenant)
	values := map[string]types.AttributeValue{":now": n(time.Now().Unix())}
	names := map[string]string{"#expires": attrExpires}
	filters := []string{"(attribute_not_exists(#expires) OR #expires > :now)"}
	for i, w := range q.Words {
		values[":w"+strconv.Itoa(i)], names["#words"] = s(" "+w), attrWords
		filters = append(filters, "contains(#words, :w"+strconv.Itoa(i)+")")
	}
	in := &dynamodb.QueryInput{TableName: &table, ExpressionAttributeValues: values, ExpressionAttributeNames: names}
	if q.ByID() {
		// The ids that start with the prefix are [prefix, prefix~]; after a cursor, from the
		// smallest id after it ("-" is the least character an id may hold).
		lo := q.Prefix
		if q.After != "" {
			lo = max(lo, q.After+"-")
		}
		values[":pk"], values[":lo"], values[":hi"] = s(pk), s(lo), s(q.Prefix+maxSortKey)
		in.KeyConditionExpression = aws.String("pk = :pk AND sk BETWEEN :lo AND :hi")
		in.ConsistentRead = aws.Bool(true)
		if q.Phase != "" {
			values[":phase"], names["#phase"] = s(string(q.Phase)), attrPhase
			filters = append(filters, "#phase = :phase")
		}
		if !q.Since.IsZero() {
			values[":since"], names["#at"] = n(q.Since.UnixMicro()), attrAt
			filters = append(filters, "#at >= :since")
		}
		if !q.Until.IsZero() {
			values[":until"], names["#at"] = n(q.Until.UnixMicro()), attrAt
			filters = append(filters, "#at < :until")
		}
	} else {
		lo, hi := "0", maxSortKey
		if !q.Since.IsZero() {
			lo = fmt.Sprintf("%016d", q.Since.UnixMicro())
		}
		if !q.Until.IsZero() {
			hi = fmt.Sprintf("%016d", q.Until.UnixMicro())
		}
		if q.After != "" {
			hi = min(hi, q.After)
		}
		in.IndexName, in.ScanIndexForward = aws.String(indexRunsByActivity), aws.Bool(false)
		in.KeyConditionExpression = aws.String(attrRunsPK + " = :pk AND " + attrRunsAct + " BETWEEN :lo AND :hi")
		values[":pk"], values[":lo"], values[":hi"] = s(pk), s(lo), s(hi)
		if q.Phase != "" {
			in.IndexName = aws.String(indexRunsByPhase)
			in.KeyConditionExpression = aws.String(attrPhasePK + " = :pk AND " + attrRunsAct + " BETWEEN :lo AND :hi")
			values[":pk"] = s(pk + string(q.Phase))
		}
	}
	in.FilterExpression = aws.String(strings.Join(filters, " AND "))
	return in
}

// runOf reads an entry of tenant's runs index.
func runOf(tenant string, item map[string]types.AttributeValue) (runlog.RunEntry, error) {
	id := str(item[attrSK])
	seq, err := strconv.ParseInt(num(item[attrSeq]), 10, 64)
	if err != nil {
		return runlog.RunEntry{}, fmt.Errorf("dynamo: runs entry %s: %w", id, err)
	}
	at, err := strconv.ParseInt(num(item[attrAt]), 10, 64)
	if err != nil {
		return runlog.RunEntry{}, fmt.Errorf("dynamo: runs entry %s: %w", id, err)
	}
	waiting, err := strconv.Atoi(num(item[attrWaitingN]))
	if err != nil {
		return runlog.RunEntry{}, fmt.Errorf("dynamo: runs entry %s: %w", id, err)
	}
	origin, ok := strings.CutPrefix(str(item[attrOrigin]), "o:")
	if !ok {
		return runlog.RunEntry{}, fmt.Errorf("dynamo: runs entry %s has no origin", id)
	}
	e := runlog.RunEntry{
		Key: runlog.Key{Tenant: tenant, RunID: id}, Seq: seq, At: time.UnixMicro(at).UTC(), Origin: origin,
		Phase: runlog.Phase(str(item[attrPhase])), Waiting: waiting,
	}
	if err := json.Unmarshal([]byte(str(item[attrTitles])), &e.Titles); err != nil {
		return runlog.RunEntry{}, fmt.Errorf("dynamo: runs entry %s: %w", id, err)
	}
	if v := num(item[attrExpires]); v != "" {
		sec, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return runlog.RunEntry{}, fmt.Errorf("dynamo: runs entry %s: %w", id, err)
		}
		e.Expires = time.Unix(sec, 0).UTC()
	}
	return e, nil
}
