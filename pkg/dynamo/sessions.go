package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// A sign-in's session is the item <tenant>#session#<id> / session (signin.Sessions): a
// partition of its own, so that the approval page's role may delete it by its leading key
// ("*#session#*") and nothing of a run. A tenant and a session id hold no '#', so no other
// partition's key is one but an inbox's (<tenant>#inbox#<ref>, whose ref may hold anything),
// which that role's writes are denied. It holds the expiry to the millisecond (attrSessionExp)
// and the table's TTL attribute, so DynamoDB deletes it once it has expired; the sign-in
// compares the expiry with its clock, as that deletion comes days late at most.
func sessionKey(tenant, id string) (map[string]types.AttributeValue, error) {
	if !runlog.ValidID(tenant) || !runlog.ValidID(id) {
		return nil, fmt.Errorf("dynamo: session %q of tenant %q: %w", id, tenant, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s(tenant + "#session#" + id), attrSK: s("session")}, nil
}

// attrSessionExp is a session's expiry in Unix milliseconds: the TTL attribute is in seconds.
const attrSessionExp = "exp"

// PutSession implements signin.Sessions: one PutItem.
func (l *Table) PutSession(ctx context.Context, tenant, id string, expires time.Time) error {
	item, err := sessionKey(tenant, id)
	if err != nil {
		return err
	}
	ms := expires.UnixMilli()
	item[attrSessionExp] = n(ms)
	item[attrExpires] = n((ms + 999) / 1000) // deleted no earlier than it expires
	_, err = l.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: item})
	return classify("put session", err)
}

// Session implements signin.Sessions: one strongly consistent read, so a session signed out a
// moment ago is not read back.
func (l *Table) Session(ctx context.Context, tenant, id string) (time.Time, bool, error) {
	key, err := sessionKey(tenant, id)
	if err != nil {
		return time.Time{}, false, err
	}
	item, err := l.item(ctx, key)
	if err != nil || item == nil {
		return time.Time{}, false, err
	}
	ms, err := strconv.ParseInt(num(item[attrSessionExp]), 10, 64)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("dynamo: session %q of tenant %q: its expiry: %w", id, tenant, err)
	}
	return time.UnixMilli(ms), true, nil
}

// DeleteSession implements signin.Sessions: one DeleteItem, unconditional, so deleting none
// succeeds.
func (l *Table) DeleteSession(ctx context.Context, tenant, id string) error {
	key, err := sessionKey(tenant, id)
	if err != nil {
		return err
	}
	_, err = l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &l.table, Key: key})
	return classify("delete session", err)
}
