// Package dynamo stores run logs in DynamoDB: one partition per run, one item per commit, and a
// conditional put as the single point where concurrent writers are ordered.
package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// NewClient builds the DynamoDB client every function shares, with an HTTP client of its own
// that keeps up to 128 idle connections to the endpoint, so that concurrent calls in one process
// (the deliverer's, a test's) keep their connections warm.
func NewClient(cfg aws.Config, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConnsPerHost = 128
	})
	opts := append([]func(*dynamodb.Options){func(o *dynamodb.Options) { o.HTTPClient = wholeBodies{httpClient} }}, optFns...)
	return dynamodb.NewFromConfig(cfg, opts...)
}

// Item attribute names. pk and sk are the table's keys (see template.yaml).
const (
	attrPK     = "pk"
	attrSK     = "sk"
	attrSeq    = "seq"
	attrID     = "cid"
	attrAt     = "at"
	attrEvents = "events"
	attrIdem   = "idem"
	attrBy     = "by"
	// attrExpires is the table's TTL attribute (template.yaml), in epoch seconds.
	attrExpires = "expiresAt"
)

// Table is the host's one DynamoDB table, single-table design: the runs' commits, checkpoints
// and archives, and beside them the correlation slots, endpoints, due entries and the read
// models (docs/design.md, "The run log: one mechanism for every guarantee" and "Read
// models"). It implements every port of package host.
type Table struct {
	db    *dynamodb.Client
	table string
}

// NewTable returns a Table over table.
func NewTable(db *dynamodb.Client, table string) *Table {
	return &Table{db: db, table: table}
}

// partition is the partition key of a run's log, refusing a key that would not name one run.
func partition(k runlog.Key) (string, error) {
	if !k.Valid() {
		return "", fmt.Errorf("dynamo: run %q of tenant %q: %w", k.RunID, k.Tenant, runlog.ErrInvalidKey)
	}
	return k.Tenant + "#run#" + k.RunID, nil
}

func sortKey(seq int64) string { return fmt.Sprintf("c#%020d", seq) }

// Read returns the commits after seq after, in order, with one consistent Query (paged only when
// the log exceeds DynamoDB's 1 MB page). limit caps the number of commits; 0 reads to the end.
func (l *Table) Read(ctx context.Context, k runlog.Key, after int64, limit int) ([]runlog.Commit, error) {
	pk, err := partition(k)
	if err != nil {
		return nil, err
	}
	// Items past their expiry are not read: DynamoDB deletes expired items some time after their
	// expiry, not at once, and all of a run's commits expire together (Retain).
	in := &dynamodb.QueryInput{
		TableName:              &l.table,
		ConsistentRead:         aws.Bool(true),
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :last"),
		FilterExpression:       aws.String("attribute_not_exists(expiresAt) OR expiresAt > :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":   &types.AttributeValueMemberS{Value: pk},
			":from": &types.AttributeValueMemberS{Value: sortKey(after + 1)},
			":last": &types.AttributeValueMemberS{Value: lastCommitSK},
			":now":  n(time.Now().Unix()),
		},
	}
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	var out []runlog.Commit
	for {
		page, err := l.db.Query(ctx, in)
		if err != nil {
			return nil, classify("query", err)
		}
		for _, item := range page.Items {
			c, err := decode(item)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		if page.LastEvaluatedKey == nil || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
		if limit > 0 {
			in.Limit = aws.Int32(int32(limit - len(out)))
		}
	}
}

// Append writes c if and only if no live commit with its seq exists yet (an expired one, of a
// run past its retention, is written over); otherwise it returns runlog.ErrSeqTaken and writes
// nothing.
func (l *Table) Append(ctx context.Context, k runlog.Key, c runlog.Commit) error {
	pk, err := partition(k)
	if err != nil {
		return err
	}
	events, err := runlog.Marshal(c.Events)
	if err != nil {
		return err
	}
	item := map[string]types.AttributeValue{
		attrPK:     &types.AttributeValueMemberS{Value: pk},
		attrSK:     &types.AttributeValueMemberS{Value: sortKey(c.Seq)},
		attrSeq:    &types.AttributeValueMemberN{Value: strconv.FormatInt(c.Seq, 10)},
		attrID:     &types.AttributeValueMemberS{Value: c.ID},
		attrAt:     &types.AttributeValueMemberS{Value: c.At.UTC().Format(time.RFC3339Nano)},
		attrEvents: &types.AttributeValueMemberS{Value: string(events)},
	}
	if c.Idem != nil {
		idem, err := runlog.Marshal(c.Idem)
		if err != nil {
			return err
		}
		item[attrIdem] = &types.AttributeValueMemberS{Value: string(idem)}
	}
	if c.By != "" {
		item[attrBy] = &types.AttributeValueMemberS{Value: c.By}
	}
	if size := ItemSize(item); size > MaxItemBytes {
		return &runlog.TooLargeError{Size: size, Limit: MaxItemBytes}
	}
	_, err = l.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 &l.table,
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(sk) OR expiresAt <= :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": n(time.Now().Unix())},
	})
	if IsCondCheckFailed(err) {
		return runlog.ErrSeqTaken
	}
	if err != nil {
		// The SDK retried the put; any attempt may have been applied with its answer lost, and
		// the last error says nothing of the others: only a read can tell.
		cerr := classify("put", err)
		switch {
		case !errors.Is(cerr, interrupt.ErrUnavailable):
			return cerr // refused for what it is (a malformed request, a missing grant): not applied
		case throttled(err):
			return fmt.Errorf("dynamo: put: %w: %w: %w", runlog.ErrUnknownOutcome, runlog.ErrRefused, cerr)
		}
		return fmt.Errorf("dynamo: put: %w: %w", runlog.ErrUnknownOutcome, cerr)
	}
	return nil
}

// MaxItemBytes is DynamoDB's limit on one item: 400 KB of attribute names and values.
const MaxItemBytes = 400 * 1024

// ItemSize is the size of item as DynamoDB counts it against MaxItemBytes: the UTF-8 bytes of
// every attribute name and string value, and for a number at most one byte per digit (DynamoDB
// takes about half that), so a put this accepts is never refused for its size.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += len(v.Value) + 1
		default:
			panic(fmt.Sprintf("dynamo: no size rule for attribute %s of type %T", name, v))
		}
	}
	return n
}

// IsCondCheckFailed reports whether err is DynamoDB refusing a conditional write.
func IsCondCheckFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// transient are the error codes after which nothing was written and a later retry may succeed.
var transient = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
	"InternalServerError":                    true,
	"ServiceUnavailable":                     true,
}

// throttled reports whether err is DynamoDB refusing a request for its rate, before applying it.
func throttled(err error) bool {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.ErrorCode() {
	case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded":
		return true
	}
	return false
}

// classify marks what a retry later may get past as interrupt.ErrUnavailable: throttling, a 5xx
// from the endpoint (DynamoDB's own, or a balancer's in front of it), a network error, the
// retries running out or the deadline passing. Only a 4xx the store answered with a code of its
// own (a missing table, a malformed request) is a fault of ours, and stays internal. nil stays
// nil.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var apiErr smithy.APIError
	var resp interface{ HTTPStatusCode() int }
	clientFault := errors.As(err, &resp) && resp.HTTPStatusCode() >= 400 && resp.HTTPStatusCode() < 500
	if clientFault && errors.As(err, &apiErr) && !transient[apiErr.ErrorCode()] {
		return fmt.Errorf("dynamo: %s: %w", op, err)
	}
	return fmt.Errorf("dynamo: %s: %w: %w", op, interrupt.ErrUnavailable, err)
}

func decode(item map[string]types.AttributeValue) (runlog.Commit, error) {
	var c runlog.Commit
	seq, ok := item[attrSeq].(*types.AttributeValueMemberN)
	if !ok {
		return c, errors.New("dynamo: commit without seq")
	}
	n, err := strconv.ParseInt(seq.Value, 10, 64)
	if err != nil {
		return c, fmt.Errorf("dynamo: commit seq: %w", err)
	}
	c.Seq = n
	if id, ok := item[attrID].(*types.AttributeValueMemberS); ok {
		c.ID = id.Value
	}
	if by, ok := item[attrBy].(*types.AttributeValueMemberS); ok {
		c.By = by.Value
	}
	at, ok := item[attrAt].(*types.AttributeValueMemberS)
	if !ok {
		return c, fmt.Errorf("dynamo: commit %d without time", n)
	}
	if c.At, err = time.Parse(time.RFC3339Nano, at.Value); err != nil {
		return c, fmt.Errorf("dynamo: commit %d time: %w", n, err)
	}
	events, ok := item[attrEvents].(*types.AttributeValueMemberS)
	if !ok {
		return c, fmt.Errorf("dynamo: commit %d without events", n)
	}
	if err := json.Unmarshal([]byte(events.Value), &c.Events); err != nil {
		return c, fmt.Errorf("dynamo: commit %d events: %w", n, err)
	}
	if idem, ok := item[attrIdem].(*types.AttributeValueMemberS); ok {
		if err := json.Unmarshal([]byte(idem.Value), &c.Idem); err != nil {
			return c, fmt.Errorf("dynamo: commit %d idempotency record: %w", n, err)
		}
	}
	return c, nil
}

func conversationKey(tenant, id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrPK: &types.AttributeValueMemberS{Value: tenant + "#conv#" + id},
		attrSK: &types.AttributeValueMemberS{Value: "claim"},
	}
}

// ClaimConversation makes c.RunID the owner of c.Tenant's conversation c.ConversationID at time
// c.At, unless another run than c.TakeOverFrom owns it: then it returns runlog.ErrClaimed with
// that owner and the time it claimed. One item per conversation, written with a conditional put
// only while no run owns it (or c.TakeOverFrom does): a claim already c.RunID's is answered
// without a write. The owner comes from the refused put itself where the API returns it, else
// from one more read.
func (l *Table) ClaimConversation(ctx context.Context, c runlog.ConversationClaim) (runlog.Claim, error) {
	if !runlog.ValidID(c.Tenant) {
		return runlog.Claim{}, fmt.Errorf("dynamo: conversation of tenant %q: %w", c.Tenant, runlog.ErrInvalidKey)
	}
	item := conversationKey(c.Tenant, c.ConversationID)
	item["runId"] = &types.AttributeValueMemberS{Value: c.RunID}
	item[attrAt] = &types.AttributeValueMemberS{Value: c.At.UTC().Format(time.RFC3339Nano)}
	in := &dynamodb.PutItemInput{
		TableName: &l.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if c.TakeOverFrom != "" {
		in.ConditionExpression = aws.String("attribute_not_exists(pk) OR runId = :stale")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":stale": &types.AttributeValueMemberS{Value: c.TakeOverFrom}}
	}
	_, err := l.db.PutItem(ctx, in)
	var refused *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return runlog.Claim{RunID: c.RunID, At: c.At}, nil
	case !errors.As(err, &refused):
		return runlog.Claim{}, classify("claim", err)
	}
	old := refused.Item
	if old == nil {
		key := conversationKey(c.Tenant, c.ConversationID)
		out, err := l.db.Query(ctx, &dynamodb.QueryInput{
			TableName: &l.table, ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("pk = :pk AND sk = :sk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": key[attrPK], ":sk": key[attrSK]},
		})
		if err != nil {
			return runlog.Claim{}, classify("claim", err)
		}
		if len(out.Items) == 0 {
			return runlog.Claim{}, fmt.Errorf("dynamo: the claim of %s vanished while read: %w", c.ConversationID, interrupt.ErrUnavailable)
		}
		old = out.Items[0]
	}
	owner, err := decodeClaim(old)
	if err != nil || owner.RunID == c.RunID {
		return owner, err
	}
	return owner, runlog.ErrClaimed
}

func decodeClaim(item map[string]types.AttributeValue) (runlog.Claim, error) {
	owner, _ := item["runId"].(*types.AttributeValueMemberS)
	claimedAt, _ := item[attrAt].(*types.AttributeValueMemberS)
	if owner == nil || claimedAt == nil {
		return runlog.Claim{}, errors.New("dynamo: a conversation claim without owner or time")
	}
	t, err := time.Parse(time.RFC3339Nano, claimedAt.Value)
	if err != nil {
		return runlog.Claim{}, fmt.Errorf("dynamo: claim time: %w", err)
	}
	return runlog.Claim{RunID: owner.Value, At: t}, nil
}

// CommitOf reads a run's commit from a whole item as the table's stream carries it (its new
// image). ok is false for items that are not commits (claims, inbox, subscriptions, cursors).
func CommitOf(item map[string]types.AttributeValue) (k runlog.Key, c runlog.Commit, ok bool, err error) {
	pk, sk := str(item[attrPK]), str(item[attrSK])
	tenant, runID, isRun := strings.Cut(pk, "#run#")
	if !isRun || !strings.HasPrefix(sk, "c#") {
		return k, c, false, nil
	}
	k = runlog.Key{Tenant: tenant, RunID: runID}
	if !k.Valid() {
		return k, c, false, fmt.Errorf("dynamo: commit of %q: %w", pk, runlog.ErrInvalidKey)
	}
	c, err = decode(item)
	return k, c, err == nil, err
}
