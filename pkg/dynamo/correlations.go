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
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// The webhook correlations share the run-log table (docs/engines.md, "Webhooks from providers"):
//
//	whep#<id>               endpoint      an endpoint: tenant, provider, correlation pointers
//	whep#<id>               evt#<eventId> the answer to an event kept outside a slot
//	<tenant>#whep           count         the tenant's endpoints: how many (n) and their ids
//	<tenant>#corr#<sha256>  slot          a correlation item of one endpoint: the kept event
//	                                      (evt, evtKey, evtExp) and one w_<interruptId>
//	                                      attribute per waiter
const (
	skEndpoint   = "endpoint"
	skSlot       = "slot"
	attrEvent    = "evt"
	attrEventKey = "evtKey"
	attrEventExp = "evtExp"
	waiterPrefix = "w_"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func endpointKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: s("whep#" + id), attrSK: s(skEndpoint)}
}

// slotKey hashes the endpoint, the event type and the value, which may hold any character, into
// the key; the tenant, an id without '#', keeps tenants apart.
func slotKey(k webhook.Key) (map[string]types.AttributeValue, error) {
	if !runlog.ValidID(k.Tenant) {
		return nil, fmt.Errorf("dynamo: slot of tenant %q: %w", k.Tenant, runlog.ErrInvalidKey)
	}
	sum := sha256.Sum256([]byte(k.Endpoint + "\x00" + k.EventType + "\x00" + k.Value))
	return map[string]types.AttributeValue{attrPK: s(k.Tenant + "#corr#" + hex.EncodeToString(sum[:16])), attrSK: s(skSlot)}, nil
}

// CreateEndpoint stores e, within its tenant's limit: a count item of the tenant's is raised
// first, conditionally on the limit, and e's id added to it, then the endpoint written; a failed
// write gives the place back. A creator that dies between the two leaves a place lost, never one
// too many. (Endpoints made before the count existed neither count nor are listed.)
func (l *Table) CreateEndpoint(ctx context.Context, e webhook.Endpoint, limit int) (err error) {
	corr, err := json.Marshal(e.Correlation)
	if err != nil {
		return err
	}
	_, err = l.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &l.table, Key: endpointCountKey(e.Tenant), UpdateExpression: aws.String("ADD n :one, ids :id"),
		ConditionExpression:       aws.String("attribute_not_exists(n) OR n < :limit"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": n(1), ":limit": n(int64(limit)), ":id": idSet(e.ID)},
	})
	if IsCondCheckFailed(err) {
		return webhook.ErrLimit
	}
	if err != nil {
		return classify("count endpoints", err)
	}
	defer func() {
		if err != nil {
			l.releaseEndpoint(context.WithoutCancel(ctx), e.Tenant, e.ID)
		}
	}()
	item := endpointKey(e.ID)
	item["tenant"], item["provider"], item["correlation"] = s(e.Tenant), s(e.Provider), s(string(corr))
	item[attrAt] = s(e.CreatedAt.UTC().Format(time.RFC3339Nano))
	item["counted"] = &types.AttributeValueMemberBOOL{Value: true} // its delete gives its place back
	_, err = l.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if err != nil {
		if found, rerr := l.item(ctx, endpointKey(e.ID)); rerr == nil && found != nil && str(found["tenant"]) == e.Tenant {
			return nil // applied, its answer lost (the SDK's retry found it there): the place is its
		}
		return classify("create endpoint", err)
	}
	return nil
}

// Endpoint reads the endpoint id, or webhook.ErrNoEndpoint.
func (l *Table) Endpoint(ctx context.Context, id string) (webhook.Endpoint, error) {
	item, err := l.item(ctx, endpointKey(id))
	if err != nil {
		return webhook.Endpoint{}, err
	}
	if item == nil {
		return webhook.Endpoint{}, webhook.ErrNoEndpoint
	}
	e := webhook.Endpoint{ID: id, Tenant: str(item["tenant"]), Provider: str(item["provider"])}
	if err := json.Unmarshal([]byte(str(item["correlation"])), &e.Correlation); err != nil {
		return e, fmt.Errorf("dynamo: endpoint %s: %w", id, err)
	}
	if e.CreatedAt, err = time.Parse(time.RFC3339Nano, str(item[attrAt])); err != nil {
		return e, fmt.Errorf("dynamo: endpoint %s: %w", id, err)
	}
	return e, nil
}

// DeleteEndpoint forgets the endpoint id.
func (l *Table) DeleteEndpoint(ctx context.Context, id string) error {
	out, err := l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &l.table, Key: endpointKey(id), ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return classify("delete endpoint", err)
	}
	if counted, _ := out.Attributes["counted"].(*types.AttributeValueMemberBOOL); counted != nil && counted.Value {
		l.releaseEndpoint(ctx, str(out.Attributes["tenant"]), id)
	}
	return nil
}

// endpointCountKey is the item counting a tenant's endpoints.
func endpointCountKey(tenant string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: s(tenant + "#whep"), attrSK: s("count")}
}

func idSet(id string) types.AttributeValue { return &types.AttributeValueMemberSS{Value: []string{id}} }

// releaseEndpoint lowers the tenant's count of endpoints, never under zero, and forgets id; a
// failure leaves a place lost.
func (l *Table) releaseEndpoint(ctx context.Context, tenant, id string) {
	_, _ = l.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &l.table, Key: endpointCountKey(tenant), UpdateExpression: aws.String("ADD n :minus DELETE ids :id"),
		ConditionExpression:       aws.String("n > :zero"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":minus": n(-1), ":zero": n(0), ":id": idSet(id)},
	})
}

// Endpoints lists the ids of tenant's endpoints, in no order, as the count item holds them: an
// endpoint whose creation is under way (or died) may be listed without being readable.
func (l *Table) Endpoints(ctx context.Context, tenant string) ([]string, error) {
	item, err := l.item(ctx, endpointCountKey(tenant))
	if err != nil || item == nil {
		return nil, err
	}
	ids, _ := item["ids"].(*types.AttributeValueMemberSS)
	if ids == nil {
		return nil, nil
	}
	return ids.Value, nil
}

// Wait registers w at k and returns the event live there, if any, in one write.
func (l *Table) Wait(ctx context.Context, k webhook.Key, w webhook.Waiter, now time.Time) (*webhook.Delivery, error) {
	in, err := l.waiterUpdate(k, w)
	if err != nil {
		return nil, err
	}
	in.ReturnValues = types.ReturnValueAllNew
	out, err := l.db.UpdateItem(ctx, in)
	if err != nil {
		return nil, classify("wait", err)
	}
	slot, err := decodeSlot(out.Attributes, now)
	return slot.Event, err
}

// Confirm writes w again unless an event is live at k, and then answers that event: the write
// is conditional on the slot, so it is ordered with every Deliver.
func (l *Table) Confirm(ctx context.Context, k webhook.Key, w webhook.Waiter, now time.Time) (*webhook.Delivery, error) {
	in, err := l.waiterUpdate(k, w)
	if err != nil {
		return nil, err
	}
	in.ConditionExpression = aws.String("attribute_not_exists(#exp) OR #exp <= :now")
	in.ExpressionAttributeNames["#exp"] = attrEventExp
	in.ExpressionAttributeValues[":now"] = n(now.UnixMilli())
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	_, err = l.db.UpdateItem(ctx, in)
	if err == nil {
		return nil, nil
	}
	item, err := l.refused(ctx, in.Key, err)
	if err != nil {
		return nil, err
	}
	slot, err := decodeSlot(item, now)
	return slot.Event, err
}

// Deliver keeps d at k unless another live event is kept there, and answers the slot.
func (l *Table) Deliver(ctx context.Context, k webhook.Key, d webhook.Delivery, now time.Time) (webhook.Slot, error) {
	key, err := slotKey(k)
	if err != nil {
		return webhook.Slot{}, err
	}
	d.Answer = nil
	body, err := runlog.Marshal(d)
	if err != nil {
		return webhook.Slot{}, err
	}
	out, err := l.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &l.table, Key: key,
		UpdateExpression:         aws.String("SET #evt = :evt, #key = :key, #exp = :exp"),
		ConditionExpression:      aws.String("attribute_not_exists(#exp) OR #exp <= :now"),
		ExpressionAttributeNames: map[string]string{"#evt": attrEvent, "#key": attrEventKey, "#exp": attrEventExp},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":evt": s(string(body)), ":key": s(deliveryKey(d)), ":exp": n(d.Expires.UnixMilli()), ":now": n(now.UnixMilli()),
		},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		item, err := l.refused(ctx, key, err)
		if err != nil {
			return webhook.Slot{}, err
		}
		return decodeSlot(item, now)
	}
	return decodeSlot(out.Attributes, now)
}

// Settle records d's answer on the slot, if d is still the event kept there, and forgets the
// waiters done with.
func (l *Table) Settle(ctx context.Context, k webhook.Key, d webhook.Delivery, done []webhook.Waiter) error {
	key, err := slotKey(k)
	if err != nil {
		return err
	}
	body, err := runlog.Marshal(d)
	if err != nil {
		return err
	}
	names := map[string]string{"#evt": attrEvent, "#key": attrEventKey}
	var remove []string
	for i, w := range done {
		name := fmt.Sprintf("#w%d", i)
		names[name] = waiterPrefix + w.InterruptID
		remove = append(remove, name)
	}
	update := "SET #evt = :evt"
	if len(remove) > 0 {
		update += " REMOVE " + strings.Join(remove, ", ")
	}
	_, err = l.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &l.table, Key: key, UpdateExpression: &update,
		ConditionExpression:       aws.String("#key = :key"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: map[string]types.AttributeValue{":evt": s(string(body)), ":key": s(deliveryKey(d))},
	})
	if IsCondCheckFailed(err) {
		return nil // another event is kept there now; d's answer goes with d
	}
	if err != nil {
		return classify("settle", err)
	}
	return nil
}

func recordKey(endpointID, eventID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: s("whep#" + endpointID), attrSK: s("evt#" + keyPart(eventID))}
}

// maxKeyPart is the longest provider id a key holds as it is; DynamoDB's sort key holds 1024
// bytes, and an event's id is whatever its (verified) sender chose.
const maxKeyPart = 256

// keyPart is id as a part of a key: itself when short, else the hex of its SHA-256 (prefixed so
// that it never equals a short id).
func keyPart(id string) string {
	if len(id) <= maxKeyPart && !strings.HasPrefix(id, "sha256:") {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Recorded is the answer recorded for an event delivered to an endpoint, outside a slot.
func (l *Table) Recorded(ctx context.Context, endpointID, eventID string) (json.RawMessage, error) {
	item, err := l.item(ctx, recordKey(endpointID, eventID))
	if err != nil || item == nil {
		return nil, err
	}
	return json.RawMessage(str(item["answer"])), nil
}

// Record keeps the answer given to an event delivered to an endpoint, outside a slot, until
// expires; the first answer recorded stays.
func (l *Table) Record(ctx context.Context, endpointID, eventID string, answer json.RawMessage, expires time.Time) error {
	item := recordKey(endpointID, eventID)
	item["answer"], item[attrExpires] = s(string(answer)), n(expires.Unix())
	_, err := l.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(sk)")})
	if err != nil && !IsCondCheckFailed(err) {
		return classify("record", err)
	}
	return nil
}

func deliveryKey(d webhook.Delivery) string { return d.EndpointID + "/" + d.EventID }

func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func str(v types.AttributeValue) string {
	if sv, ok := v.(*types.AttributeValueMemberS); ok {
		return sv.Value
	}
	return ""
}

// waiterUpdate is the write of waiter w into the slot of k.
func (l *Table) waiterUpdate(k webhook.Key, w webhook.Waiter) (*dynamodb.UpdateItemInput, error) {
	key, err := slotKey(k)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	return &dynamodb.UpdateItemInput{
		TableName: &l.table, Key: key,
		UpdateExpression:          aws.String("SET #w = :w"),
		ExpressionAttributeNames:  map[string]string{"#w": waiterPrefix + w.InterruptID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":w": s(string(b))},
	}, nil
}

// item reads one item with a consistent Query (functions may Query, not GetItem), nil when absent.
func (l *Table) item(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := l.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND sk = :sk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": key[attrPK], ":sk": key[attrSK]},
	})
	if err != nil {
		return nil, classify("read", err)
	}
	if len(out.Items) == 0 {
		return nil, nil
	}
	return out.Items[0], nil
}

// refused is the item a conditional write was refused over: from the refusal where the API
// returns it, else read again.
func (l *Table) refused(ctx context.Context, key map[string]types.AttributeValue, err error) (map[string]types.AttributeValue, error) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, classify("update", err)
	}
	if ccf.Item != nil {
		return ccf.Item, nil
	}
	return l.item(ctx, key)
}

func decodeSlot(item map[string]types.AttributeValue, now time.Time) (webhook.Slot, error) {
	var slot webhook.Slot
	for name, v := range item {
		if !strings.HasPrefix(name, waiterPrefix) {
			continue
		}
		var w webhook.Waiter
		if err := json.Unmarshal([]byte(str(v)), &w); err != nil {
			return slot, fmt.Errorf("dynamo: waiter %s: %w", name, err)
		}
		slot.Waiters = append(slot.Waiters, w)
	}
	slices.SortFunc(slot.Waiters, func(a, b webhook.Waiter) int { return strings.Compare(a.InterruptID, b.InterruptID) })
	if raw := str(item[attrEvent]); raw != "" {
		var d webhook.Delivery
		if err := json.Unmarshal([]byte(raw), &d); err != nil {
			return slot, fmt.Errorf("dynamo: kept event: %w", err)
		}
		if d.Live(now) {
			slot.Event = &d
		}
	}
	return slot, nil
}
