package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// A tenant's delegations are one partition, <tenant>#delegations: an item per principal, the
// record of truth, and a copy under its delegate for the delegate's one read at decision time:
//
//	of#<principal>              version, delegation (JSON)
//	to#<delegate>#<principal>   version, delegation (JSON): a copy, while it is not ended
//
// The principal's item is the write that orders two changes (a conditional put on its version);
// the copies follow it. A copy a failed write left behind (under a former delegate) is checked
// against the principal's item before it is believed (HeldBy), so a stale one grants nothing;
// a copy a failed write did not make leaves the delegate deciding nothing in that place until
// the delegation's next change: either way the fault fails closed. Every item expires
// delegationKept after its delegation ends.
const (
	attrDelegation = "delegation"
	delegationKept = 90 * 24 * time.Hour
)

func delegationsPartition(tenant string) string { return tenant + "#delegations" }

// Delegation implements delegation.Store: one consistent read of the principal's item.
func (l *Table) Delegation(ctx context.Context, tenant, principal string) (delegation.Delegation, error) {
	if !runlog.ValidID(tenant) {
		return delegation.Delegation{}, fmt.Errorf("dynamo: delegation of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	// A Query of the one key rather than GetItem: the functions that decide may Query the table
	// and no more (functions/manifest.yaml).
	out, err := l.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND sk = :sk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(delegationsPartition(tenant)), ":sk": s("of#" + principal)},
	})
	if err != nil {
		return delegation.Delegation{}, classify("delegation", err)
	}
	if len(out.Items) == 0 {
		return delegation.Delegation{}, delegation.ErrNotFound
	}
	return delegationOf(tenant, out.Items[0])
}

// PutDelegation implements delegation.Store: the principal's item, conditional on its version,
// then its delegate's copy, then the removal of the copy prev left under a former delegate.
func (l *Table) PutDelegation(ctx context.Context, d delegation.Delegation, prev delegation.Delegation) error {
	if !runlog.ValidID(d.Tenant) {
		return fmt.Errorf("dynamo: delegation of tenant %q: %w", d.Tenant, runlog.ErrInvalidKey)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	pk := delegationsPartition(d.Tenant)
	end := d.Until
	if !d.EndedAt.IsZero() && d.EndedAt.Before(end) {
		end = d.EndedAt
	}
	item := map[string]types.AttributeValue{
		attrPK: s(pk), attrSK: s("of#" + d.Principal), "version": n(d.Version), attrDelegation: s(string(b)),
		attrExpires: n(end.Add(delegationKept).Unix()),
	}
	put := &dynamodb.PutItemInput{TableName: &l.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(sk)")}
	if d.Version > 1 {
		put.ConditionExpression = aws.String("version = :prev")
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":prev": n(d.Version - 1)}
	}
	switch _, err := l.db.PutItem(ctx, put); {
	case IsCondCheckFailed(err):
		return delegation.ErrConflict
	case err != nil:
		return classify("put delegation", err)
	}
	// The copies' writes are conditional on their versions, so a late write of an older
	// change neither overwrites a newer copy nor removes one a newer change made.
	if d.EndedAt.IsZero() {
		item[attrSK] = s("to#" + d.Delegate + "#" + d.Principal)
		_, err := l.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: &l.table, Item: item,
			ConditionExpression:       aws.String("attribute_not_exists(sk) OR version < :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": n(d.Version)},
		})
		if err != nil && !IsCondCheckFailed(err) {
			return classify("put delegation's copy", err)
		}
	}
	if prev.Delegate != "" && (prev.Delegate != d.Delegate || !d.EndedAt.IsZero()) {
		_, err := l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName:                 &l.table,
			Key:                       map[string]types.AttributeValue{attrPK: s(pk), attrSK: s("to#" + prev.Delegate + "#" + d.Principal)},
			ConditionExpression:       aws.String("version <= :prev"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":prev": n(prev.Version)},
		})
		if err != nil && !IsCondCheckFailed(err) {
			return classify("delete delegation's former copy", err)
		}
	}
	return nil
}

// HeldBy implements delegation.Store: one consistent Query of the delegate's copies; a copy is
// believed once its principal's item says the same delegate and version (a read more, only for
// one who holds any).
func (l *Table) HeldBy(ctx context.Context, tenant, delegate string) ([]delegation.Delegation, error) {
	if !runlog.ValidID(tenant) {
		return nil, fmt.Errorf("dynamo: delegations of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	copies, err := l.queryDelegations(ctx, tenant, "to#"+delegate+"#")
	if err != nil {
		return nil, err
	}
	out := []delegation.Delegation{}
	for _, c := range copies {
		d, err := l.Delegation(ctx, tenant, c.Principal)
		switch {
		case errors.Is(err, delegation.ErrNotFound):
			continue
		case err != nil:
			return nil, err
		case d.Delegate == delegate && d.Version == c.Version && d.EndedAt.IsZero():
			out = append(out, d)
		}
	}
	return out, nil
}

// Delegations implements delegation.Store: a consistent Query of the principals' items.
func (l *Table) Delegations(ctx context.Context, tenant string) ([]delegation.Delegation, error) {
	if !runlog.ValidID(tenant) {
		return nil, fmt.Errorf("dynamo: delegations of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	return l.queryDelegations(ctx, tenant, "of#")
}

// queryDelegations reads the delegations of the tenant's partition whose sort keys begin with
// prefix, in sort key order.
func (l *Table) queryDelegations(ctx context.Context, tenant, prefix string) ([]delegation.Delegation, error) {
	in := &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(delegationsPartition(tenant)), ":prefix": s(prefix)},
	}
	out := []delegation.Delegation{}
	for {
		page, err := l.db.Query(ctx, in)
		if err != nil {
			return nil, classify("delegations", err)
		}
		for _, item := range page.Items {
			d, err := delegationOf(tenant, item)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// delegationOf reads a delegation item.
func delegationOf(tenant string, item map[string]types.AttributeValue) (delegation.Delegation, error) {
	var d delegation.Delegation
	if err := json.Unmarshal([]byte(str(item[attrDelegation])), &d); err != nil {
		return d, fmt.Errorf("dynamo: delegation %s: %w", str(item[attrSK]), err)
	}
	if v, err := strconv.ParseInt(num(item["version"]), 10, 64); err != nil || v != d.Version {
		return d, fmt.Errorf("dynamo: delegation %s: its version %q is not its delegation's %d", str(item[attrSK]), num(item["version"]), d.Version)
	}
	d.Tenant = tenant
	return d, nil
}
