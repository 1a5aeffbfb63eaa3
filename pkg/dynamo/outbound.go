package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Outbound keeps subscriptions and their deliveries in the run-log table (docs/engines.md, "Outbound
// events"):
//
//	<tenant>#subs           sub#<id>                 a subscription: url, events, format
//	<tenant>#sub#<id>       run#<runId>              a cursor: next seq and index, version,
//	                                                 attempts, failingSince, retryAt, lastError
//	<tenant>#sub#<id>       att#<unixNanos>#<evId>   an attempt, kept AttemptRetention
//	<tenant>#sub#<id>       evt#<evId>               the event was attempted, kept as its last
//	                                                 attempt is (what a resend may send)
//	outbound#retry          <retryAt>#<t>#<s>#<run>  the retry index, read oldest first
//
// Cursors and attempts carry expiresAt; a deleted subscription's expire with it.
type Outbound struct {
	db    *dynamodb.Client
	table string
}

// NewOutbound returns the store over table.
func NewOutbound(db *dynamodb.Client, table string) *Outbound {
	return &Outbound{db: db, table: table}
}

const (
	retryPartition = "outbound#retry"
	// sortableTime spells times so that their strings sort as the times do.
	sortableTime = "2006-01-02T15:04:05.000000000Z"
)

func subKey(tenant, id string) (map[string]types.AttributeValue, error) {
	if !runlog.ValidID(tenant) || !runlog.ValidID(id) {
		return nil, fmt.Errorf("dynamo: subscription %q of tenant %q: %w", id, tenant, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s(tenant + "#subs"), attrSK: s("sub#" + id)}, nil
}

func subPartition(tenant, id string) string { return tenant + "#sub#" + id }

// CreateSubscription implements outbound.Store. The tenant's count (an item beside its
// subscriptions) is raised first, conditionally on the limit, then the subscription is written;
// a failed write gives the place back. A creator that dies between the two leaves the count one
// too high, a place lost, never one too many.
func (o *Outbound) CreateSubscription(ctx context.Context, sub outbound.Subscription, limit int) error {
	item, err := subKey(sub.Tenant, sub.ID)
	if err != nil {
		return err
	}
	if err := o.reserve(ctx, sub.Tenant, limit); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			o.release(context.WithoutCancel(ctx), sub.Tenant)
		}
	}()
	events, err := json.Marshal(sub.Events)
	if err != nil {
		return err
	}
	item["url"], item["events"], item["format"] = s(sub.URL), s(string(events)), s(sub.Format)
	item["approvalLinks"] = s(sub.ApprovalLinks)
	if sub.Conversation != nil {
		conv, err := json.Marshal(sub.Conversation)
		if err != nil {
			return err
		}
		item["conversation"] = s(string(conv))
	}
	if sub.CreatedBy != "" {
		item["createdBy"] = s(sub.CreatedBy)
	}
	item[attrAt] = s(sub.CreatedAt.UTC().Format(time.RFC3339Nano))
	_, err = o.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &o.table, Item: item})
	if err != nil && o.exists(ctx, subKeyOf(item)) {
		err = nil // applied, its answer lost: the place is the subscription's
	}
	err = classify("put subscription", err)
	return err
}

// subKeyOf is the key of item.
func subKeyOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: item[attrPK], attrSK: item[attrSK]}
}

// exists reports whether the item key names can be read and is there.
func (o *Outbound) exists(ctx context.Context, key map[string]types.AttributeValue) bool {
	out, err := o.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: key, ConsistentRead: aws.Bool(true)})
	return err == nil && out.Item != nil
}

// countKey is the item counting a tenant's subscriptions, in their partition.
func countKey(tenant string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: s(tenant + "#subs"), attrSK: s("count")}
}

// reserve raises the tenant's count of subscriptions if it is under limit, else ErrLimit. A
// tenant whose subscriptions were made before the count existed starts it at how many it holds.
func (o *Outbound) reserve(ctx context.Context, tenant string, limit int) error {
	for range 3 {
		_, err := o.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &o.table, Key: countKey(tenant), UpdateExpression: aws.String("ADD n :one"),
			ConditionExpression:       aws.String("n < :limit"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": n(1), ":limit": n(int64(limit))},
		})
		if !IsCondCheckFailed(err) {
			return classify("count subscriptions", err)
		}
		counted, err := o.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: countKey(tenant), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return classify("read the count of subscriptions", err)
		}
		if counted.Item != nil {
			return outbound.ErrLimit
		}
		held, err := o.Subscriptions(ctx, tenant)
		if err != nil {
			return err
		}
		if len(held) >= limit {
			return outbound.ErrLimit
		}
		item := countKey(tenant)
		item["n"] = n(int64(len(held) + 1))
		_, err = o.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &o.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(sk)")})
		if !IsCondCheckFailed(err) {
			return classify("start the count of subscriptions", err)
		}
	}
	return fmt.Errorf("dynamo: the count of %s's subscriptions keeps moving: %w", tenant, interrupt.ErrUnavailable)
}

// release lowers the tenant's count of subscriptions, never under zero. A failure leaves it one
// too high, which a later delete does not repair: a place lost, never one too many.
func (o *Outbound) release(ctx context.Context, tenant string) {
	_, _ = o.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &o.table, Key: countKey(tenant), UpdateExpression: aws.String("ADD n :minus"),
		ConditionExpression:       aws.String("n > :zero"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":minus": n(-1), ":zero": n(0)},
	})
}

// Subscription implements outbound.Store.
func (o *Outbound) Subscription(ctx context.Context, tenant, id string) (outbound.Subscription, error) {
	key, err := subKey(tenant, id)
	if err != nil {
		return outbound.Subscription{}, outbound.ErrNoSubscription
	}
	out, err := o.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return outbound.Subscription{}, classify("get subscription", err)
	}
	if out.Item == nil {
		return outbound.Subscription{}, outbound.ErrNoSubscription
	}
	return decodeSubscription(tenant, out.Item)
}

func decodeSubscription(tenant string, item map[string]types.AttributeValue) (outbound.Subscription, error) {
	sub := outbound.Subscription{Tenant: tenant, URL: str(item["url"]), Format: str(item["format"]), ApprovalLinks: outbound.LinksPlain, CreatedBy: str(item["createdBy"])}
	if links := str(item["approvalLinks"]); links != "" {
		sub.ApprovalLinks = links // a subscription made before the choice existed has plain links
	}
	sub.ID = strings.TrimPrefix(str(item[attrSK]), "sub#")
	if err := json.Unmarshal([]byte(str(item["events"])), &sub.Events); err != nil {
		return sub, fmt.Errorf("dynamo: subscription %s events: %w", sub.ID, err)
	}
	if conv := str(item["conversation"]); conv != "" {
		sub.Conversation = new(outbound.Conversation)
		if err := json.Unmarshal([]byte(conv), sub.Conversation); err != nil {
			return sub, fmt.Errorf("dynamo: subscription %s conversation: %w", sub.ID, err)
		}
	}
	var err error
	if sub.CreatedAt, err = time.Parse(time.RFC3339Nano, str(item[attrAt])); err != nil {
		return sub, fmt.Errorf("dynamo: subscription %s time: %w", sub.ID, err)
	}
	return sub, nil
}

// integer reads a number attribute; a missing one is 0.
func integer(v types.AttributeValue) int64 {
	i, _ := strconv.ParseInt(num(v), 10, 64)
	return i
}

// DeleteSubscription implements outbound.Store.
func (o *Outbound) DeleteSubscription(ctx context.Context, tenant, id string) error {
	key, err := subKey(tenant, id)
	if err != nil {
		return err
	}
	out, err := o.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &o.table, Key: key, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return classify("delete subscription", err)
	}
	if len(out.Attributes) > 0 {
		o.release(ctx, tenant)
	}
	return nil
}

// Subscriptions implements outbound.Store: one Query of the tenant's partition.
func (o *Outbound) Subscriptions(ctx context.Context, tenant string) ([]outbound.Subscription, error) {
	if !runlog.ValidID(tenant) {
		return nil, fmt.Errorf("dynamo: subscriptions of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	out, err := o.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &o.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :sub)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(tenant + "#subs"), ":sub": s("sub#")},
	})
	if err != nil {
		return nil, classify("query subscriptions", err)
	}
	subs := make([]outbound.Subscription, 0, len(out.Items))
	for _, item := range out.Items {
		sub, err := decodeSubscription(tenant, item)
		if err != nil {
			return nil, err
		}
		subs = append(subs, sub)
	}
	sortByCreation(subs)
	return subs, nil
}

func sortByCreation(subs []outbound.Subscription) {
	slices.SortFunc(subs, func(a, b outbound.Subscription) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

func subCursorKey(tenant, sub, runID string) (map[string]types.AttributeValue, error) {
	if !runlog.ValidID(tenant) || !runlog.ValidID(sub) || !runlog.ValidRun(runID) {
		return nil, fmt.Errorf("dynamo: cursor of %q/%q/%q: %w", tenant, sub, runID, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s(subPartition(tenant, sub)), attrSK: s("run#" + runID)}, nil
}

// Cursor implements outbound.Store.
func (o *Outbound) Cursor(ctx context.Context, tenant, sub, runID string) (outbound.Cursor, error) {
	c := outbound.Cursor{Tenant: tenant, Subscription: sub, RunID: runID}
	key, err := subCursorKey(tenant, sub, runID)
	if err != nil {
		return c, err
	}
	out, err := o.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return c, classify("get cursor", err)
	}
	if out.Item == nil {
		return c, nil
	}
	c.Next = outbound.Position{Seq: integer(out.Item["nextSeq"]), Index: int(integer(out.Item["nextIndex"]))}
	c.Version = integer(out.Item["ver"])
	c.Attempts = int(integer(out.Item["attempts"]))
	c.LastError = str(out.Item["lastError"])
	for name, into := range map[string]*time.Time{"failingSince": &c.FailingSince, "retryAt": &c.RetryAt} {
		if v := str(out.Item[name]); v != "" {
			if *into, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return c, fmt.Errorf("dynamo: cursor %s: %w", name, err)
			}
		}
	}
	return c, nil
}

// SaveCursor implements outbound.Store: a put conditional on the version read.
func (o *Outbound) SaveCursor(ctx context.Context, c outbound.Cursor, expires time.Time) error {
	item, err := subCursorKey(c.Tenant, c.Subscription, c.RunID)
	if err != nil {
		return err
	}
	item["nextSeq"], item["nextIndex"] = n(c.Next.Seq), n(int64(c.Next.Index))
	item["ver"], item["attempts"], item[attrExpires] = n(c.Version+1), n(int64(c.Attempts)), n(expires.Unix())
	if c.LastError != "" {
		item["lastError"] = s(c.LastError)
	}
	if !c.FailingSince.IsZero() {
		item["failingSince"] = s(c.FailingSince.UTC().Format(time.RFC3339Nano))
	}
	if !c.RetryAt.IsZero() {
		item["retryAt"] = s(c.RetryAt.UTC().Format(time.RFC3339Nano))
	}
	in := &dynamodb.PutItemInput{TableName: &o.table, Item: item}
	if c.Version == 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		in.ConditionExpression = aws.String("ver = :ver")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":ver": n(c.Version)}
	}
	_, err = o.db.PutItem(ctx, in)
	if IsCondCheckFailed(err) {
		return outbound.ErrCursorMoved
	}
	return classify("put cursor", err)
}

// attemptedKey is the item saying that sub attempted the event eventID: one GetItem answers
// Attempted, where the attempts themselves sort by time.
func attemptedKey(tenant, sub, eventID string) (map[string]types.AttributeValue, error) {
	if _, _, _, ok := outbound.ParseEventID(eventID); !ok || !runlog.ValidID(tenant) || !runlog.ValidID(sub) {
		return nil, fmt.Errorf("dynamo: attempt of %q/%q/%q: %w", tenant, sub, eventID, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s(subPartition(tenant, sub)), attrSK: s("evt#" + eventID)}, nil
}

// RecordAttempt implements outbound.Store: the event's attempted item (written over, so it is
// kept as long as its last attempt), then the attempt. Both follow the send, so either one
// alone, after a failure between them, is true.
func (o *Outbound) RecordAttempt(ctx context.Context, tenant, sub string, a outbound.Attempt, expires time.Time) error {
	attempted, err := attemptedKey(tenant, sub, a.EventID)
	if err != nil {
		return err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	attempted[attrExpires] = n(expires.Unix())
	if _, err := o.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &o.table, Item: attempted}); err != nil {
		return classify("put attempted", err)
	}
	_, err = o.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &o.table, Item: map[string]types.AttributeValue{
		attrPK:      s(subPartition(tenant, sub)),
		attrSK:      s(fmt.Sprintf("att#%020d#%s", a.At.UnixNano(), a.EventID)),
		"attempt":   s(string(b)),
		attrExpires: n(expires.Unix()),
	}})
	return classify("put attempt", err)
}

// Attempts implements outbound.Store: one Query, newest first.
func (o *Outbound) Attempts(ctx context.Context, tenant, sub string, limit int) ([]outbound.Attempt, error) {
	if !runlog.ValidID(tenant) || !runlog.ValidID(sub) {
		return nil, fmt.Errorf("dynamo: attempts of %q/%q: %w", tenant, sub, runlog.ErrInvalidKey)
	}
	out, err := o.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &o.table, ConsistentRead: aws.Bool(true), ScanIndexForward: aws.Bool(false), Limit: aws.Int32(int32(limit)),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :att)"),
		FilterExpression:       aws.String("attribute_not_exists(expiresAt) OR expiresAt > :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": s(subPartition(tenant, sub)), ":att": s("att#"), ":now": n(time.Now().Unix()),
		},
	})
	if err != nil {
		return nil, classify("query attempts", err)
	}
	attempts := make([]outbound.Attempt, 0, len(out.Items))
	for _, item := range out.Items {
		var a outbound.Attempt
		if err := json.Unmarshal([]byte(str(item["attempt"])), &a); err != nil {
			return nil, fmt.Errorf("dynamo: attempt: %w", err)
		}
		attempts = append(attempts, a)
	}
	return attempts, nil
}

// Attempted implements outbound.Store: one GetItem of the event's attempted item, ignored once
// expired (TTL deletes it later).
func (o *Outbound) Attempted(ctx context.Context, tenant, sub, eventID string) (bool, error) {
	key, err := attemptedKey(tenant, sub, eventID)
	if err != nil {
		return false, err
	}
	out, err := o.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, classify("get attempted", err)
	}
	return out.Item != nil && integer(out.Item[attrExpires]) > time.Now().Unix(), nil
}

// mailedKey is the mark that k.EventID reached k.Address, beside the subscription's attempts;
// the address is hashed, so the key holds no address and has a fixed length.
func mailedKey(k outbound.MailedKey) (map[string]types.AttributeValue, error) {
	key, err := attemptedKey(k.Tenant, k.Subscription, k.EventID)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(k.Address))
	key[attrSK] = s("mail#" + k.EventID + "#" + hex.EncodeToString(sum[:16]))
	return key, nil
}

// askedKey is an interrupt's asked record, beside the subscription's attempts: "asked#<run>#"
// then the interrupt, so that a run's records are one Query.
func askedKey(k outbound.AskedKey) (map[string]types.AttributeValue, error) {
	if !runlog.ValidID(k.Tenant) || !runlog.ValidID(k.Subscription) || !runlog.ValidID(k.RunID) || !runlog.ValidID(k.InterruptID) {
		return nil, fmt.Errorf("dynamo: asked of %q/%q/%q/%q: %w", k.Tenant, k.Subscription, k.RunID, k.InterruptID, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s(subPartition(k.Tenant, k.Subscription)), attrSK: s(askedPrefix(k.RunID) + k.InterruptID)}, nil
}

// askedPrefix begins the sort keys of a run's asked records; '#' is in no id.
func askedPrefix(runID string) string { return "asked#" + runID + "#" }

// RecordAsked implements outbound.Store: one PutItem, its expiry the table's TTL.
func (o *Outbound) RecordAsked(ctx context.Context, tenant, sub string, a outbound.Asked, expires time.Time) error {
	item, err := askedKey(outbound.AskedKey{Tenant: tenant, Subscription: sub, RunID: a.RunID, InterruptID: a.InterruptID})
	if err != nil {
		return err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	item["asked"], item[attrExpires] = s(string(b)), n(expires.Unix())
	_, err = o.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &o.table, Item: item})
	return classify("put asked", err)
}

// Asked implements outbound.Store: one consistent GetItem.
func (o *Outbound) Asked(ctx context.Context, k outbound.AskedKey) (outbound.Asked, bool, error) {
	key, err := askedKey(k)
	if err != nil {
		return outbound.Asked{}, false, err
	}
	out, err := o.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return outbound.Asked{}, false, classify("get asked", err)
	}
	if out.Item == nil || integer(out.Item[attrExpires]) <= time.Now().Unix() {
		return outbound.Asked{}, false, nil
	}
	var a outbound.Asked
	if err := json.Unmarshal([]byte(str(out.Item["asked"])), &a); err != nil {
		return a, false, fmt.Errorf("dynamo: asked of %s: %w", k.InterruptID, err)
	}
	return a, true, nil
}

// AskedInRun implements outbound.Store: one consistent Query of the run's prefix, paged
// through (a run's records are as many as its interrupts that were mailed).
func (o *Outbound) AskedInRun(ctx context.Context, tenant, sub, runID string) ([]outbound.Asked, error) {
	if !runlog.ValidID(tenant) || !runlog.ValidID(sub) || !runlog.ValidRun(runID) {
		return nil, fmt.Errorf("dynamo: asked in %q/%q/%q: %w", tenant, sub, runID, runlog.ErrInvalidKey)
	}
	pages := dynamodb.NewQueryPaginator(o.db, &dynamodb.QueryInput{
		TableName: &o.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :asked)"),
		FilterExpression:       aws.String("expiresAt > :now"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": s(subPartition(tenant, sub)), ":asked": s(askedPrefix(runID)), ":now": n(time.Now().Unix()),
		},
	})
	out := []outbound.Asked{}
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, classify("query asked", err)
		}
		for _, item := range page.Items {
			var a outbound.Asked
			if err := json.Unmarshal([]byte(str(item["asked"])), &a); err != nil {
				return nil, fmt.Errorf("dynamo: asked in %s: %w", runID, err)
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// DropAsked implements outbound.Store: one DeleteItem.
func (o *Outbound) DropAsked(ctx context.Context, k outbound.AskedKey) error {
	key, err := askedKey(k)
	if err != nil {
		return err
	}
	_, err = o.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &o.table, Key: key})
	return classify("delete asked", err)
}

// Mailed implements outbound.Store: one consistent GetItem.
func (o *Outbound) Mailed(ctx context.Context, k outbound.MailedKey) (bool, error) {
	key, err := mailedKey(k)
	if err != nil {
		return false, err
	}
	out, err := o.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, classify("get mailed", err)
	}
	return out.Item != nil && integer(out.Item[attrExpires]) > time.Now().Unix(), nil
}

// MarkMailed implements outbound.Store: one PutItem, its expiry the table's TTL.
func (o *Outbound) MarkMailed(ctx context.Context, k outbound.MailedKey, expires time.Time) error {
	item, err := mailedKey(k)
	if err != nil {
		return err
	}
	item[attrExpires] = n(expires.Unix())
	_, err = o.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &o.table, Item: item})
	return classify("put mailed", err)
}

func retryKey(r outbound.Retry) (map[string]types.AttributeValue, error) {
	if !runlog.ValidID(r.Tenant) || !runlog.ValidID(r.Subscription) || !runlog.ValidRun(r.RunID) {
		return nil, fmt.Errorf("dynamo: retry of %q/%q/%q: %w", r.Tenant, r.Subscription, r.RunID, runlog.ErrInvalidKey)
	}
	sk := r.At.UTC().Format(sortableTime) + "#" + r.Tenant + "#" + r.Subscription + "#" + r.RunID
	return map[string]types.AttributeValue{attrPK: s(retryPartition), attrSK: s(sk)}, nil
}

// ScheduleRetry implements outbound.Store.
func (o *Outbound) ScheduleRetry(ctx context.Context, r outbound.Retry) error {
	item, err := retryKey(r)
	if err != nil {
		return err
	}
	_, err = o.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &o.table, Item: item})
	return classify("put retry", err)
}

// DueRetries implements outbound.Store: one Query of the index up to now.
func (o *Outbound) DueRetries(ctx context.Context, now time.Time, limit int) ([]outbound.Retry, error) {
	out, err := o.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &o.table, ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(limit)),
		KeyConditionExpression: aws.String("pk = :pk AND sk < :upTo"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": s(retryPartition), ":upTo": s(now.UTC().Format(sortableTime) + "$"),
		},
	})
	if err != nil {
		return nil, classify("query retries", err)
	}
	due := make([]outbound.Retry, 0, len(out.Items))
	for _, item := range out.Items {
		parts := strings.Split(str(item[attrSK]), "#")
		if len(parts) != 4 {
			return nil, errors.New("dynamo: a retry entry without tenant, subscription and run")
		}
		at, err := time.Parse(sortableTime, parts[0])
		if err != nil {
			return nil, fmt.Errorf("dynamo: retry entry time: %w", err)
		}
		due = append(due, outbound.Retry{At: at, Tenant: parts[1], Subscription: parts[2], RunID: parts[3]})
	}
	return due, nil
}

// DropRetry implements outbound.Store.
func (o *Outbound) DropRetry(ctx context.Context, r outbound.Retry) error {
	key, err := retryKey(r)
	if err != nil {
		return err
	}
	_, err = o.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &o.table, Key: key})
	return classify("delete retry", err)
}

// mailHourKey is the count of a tenant's messages in one hour: a partition of its own per
// tenant ("mailhour#<tenant>"), an item per hour.
func mailHourKey(tenant string, at time.Time) (map[string]types.AttributeValue, error) {
	if !runlog.ValidID(tenant) {
		return nil, fmt.Errorf("dynamo: mail count of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s("mailhour#" + tenant), attrSK: s(at.UTC().Format(outbound.MailHour))}, nil
}

// mailTakeTries bounds the reads and conditional puts of one TakeMail that other takers keep
// beating: each lost put means another message was counted.
const mailTakeTries = 8

// TakeMail implements outbound.Store: a consistent GetItem of the hour's count and a PutItem of
// the count after it, conditional on the count read (the roles that mail may read and put, not
// update), read again when another taker counted first. The item expires two hours after its
// hour began.
func (o *Outbound) TakeMail(ctx context.Context, tenant string, at time.Time, limit int) (bool, error) {
	key, err := mailHourKey(tenant, at)
	if err != nil {
		return false, err
	}
	for range mailTakeTries {
		out, err := o.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return false, classify("get mail count", err)
		}
		count := integer(out.Item["count"])
		if count >= int64(limit) {
			return false, nil
		}
		item := maps.Clone(key)
		item["count"], item[attrExpires] = n(count+1), n(at.UTC().Truncate(time.Hour).Add(2*time.Hour).Unix())
		cond := "attribute_not_exists(pk)"
		values := map[string]types.AttributeValue(nil)
		if out.Item != nil {
			cond, values = "#c = :c", map[string]types.AttributeValue{":c": n(count)}
		}
		in := &dynamodb.PutItemInput{TableName: &o.table, Item: item, ConditionExpression: aws.String(cond), ExpressionAttributeValues: values}
		if out.Item != nil {
			in.ExpressionAttributeNames = map[string]string{"#c": "count"}
		}
		_, err = o.db.PutItem(ctx, in)
		switch {
		case err == nil:
			return true, nil
		case !IsCondCheckFailed(err):
			return false, classify("put mail count", err)
		}
	}
	return false, fmt.Errorf("dynamo: the mail count of tenant %s moved %d times under its taker: %w", tenant, mailTakeTries, interrupt.ErrUnavailable)
}

// teamsActivityKey is the activity a teams subscription posted of an interrupt, beside the
// subscription's asked records (the deliverer's role writes the subscription's partition).
func teamsActivityKey(k outbound.AskedKey) (map[string]types.AttributeValue, error) {
	key, err := askedKey(k)
	if err != nil {
		return nil, err
	}
	key[attrSK] = s("teamsact#" + k.RunID + "#" + k.InterruptID)
	return key, nil
}

// PutTeamsActivity implements teams.Activities: one PutItem, its expiry the table's TTL.
func (o *Outbound) PutTeamsActivity(ctx context.Context, k outbound.AskedKey, p teams.Posted, expires time.Time) error {
	item, err := teamsActivityKey(k)
	if err != nil {
		return err
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	item["posted"], item[attrExpires] = s(string(b)), n(expires.Unix())
	_, err = o.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &o.table, Item: item})
	return classify("put teams activity", err)
}

// TeamsActivity implements teams.Activities: one consistent GetItem.
func (o *Outbound) TeamsActivity(ctx context.Context, k outbound.AskedKey) (teams.Posted, bool, error) {
	key, err := teamsActivityKey(k)
	if err != nil {
		return teams.Posted{}, false, err
	}
	out, err := o.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &o.table, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return teams.Posted{}, false, classify("get teams activity", err)
	}
	if out.Item == nil || integer(out.Item[attrExpires]) <= time.Now().Unix() {
		return teams.Posted{}, false, nil
	}
	var p teams.Posted
	if err := json.Unmarshal([]byte(str(out.Item["posted"])), &p); err != nil {
		return p, false, fmt.Errorf("dynamo: teams activity of %s: %w", k.InterruptID, err)
	}
	return p, true, nil
}
