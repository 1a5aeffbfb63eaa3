package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// A tenant's contacts are one partition, <tenant>#contacts (a tenant id holds no '#', so no run's
// or other partition's key is one), each contact an item <kind>#<ref>: listing them is one Query
// in the sort key's order, which is by kind, then ref. None is in a commit's key space ("c#"),
// so the stream's consumers filter them out.
func contactKey(tenant string, k contacts.Key) (map[string]types.AttributeValue, error) {
	if !runlog.ValidID(tenant) || (k != contacts.Key{} && !k.Valid()) {
		return nil, fmt.Errorf("dynamo: contact %s %q of tenant %q: %w", k.Kind, k.Ref, tenant, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s(tenant + "#contacts"), attrSK: s(k.Kind + "#" + k.Ref)}, nil
}

// PutContact implements contacts.Store: one PutItem, which answers the item it replaced.
func (l *Table) PutContact(ctx context.Context, tenant string, c contacts.Contact) (bool, error) {
	item, err := contactKey(tenant, contacts.Key{Kind: c.Kind, Ref: c.Ref})
	if err != nil {
		return false, err
	}
	item["kind"], item["ref"] = s(c.Kind), s(c.Ref)
	item[attrAt] = s(c.UpdatedAt.UTC().Format(time.RFC3339Nano))
	for name, v := range map[string]string{"email": c.Email, "name": c.Name, "slack": c.Slack, "teams": c.Teams} {
		if v != "" {
			item[name] = s(v)
		}
	}
	out, err := l.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: item, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return false, classify("put contact", err)
	}
	return len(out.Attributes) == 0, nil
}

// Contact implements contacts.Store: one strongly consistent read.
func (l *Table) Contact(ctx context.Context, tenant, kind, ref string) (contacts.Contact, error) {
	key, err := contactKey(tenant, contacts.Key{Kind: kind, Ref: ref})
	if err != nil {
		return contacts.Contact{}, err
	}
	item, err := l.item(ctx, key)
	if err != nil {
		return contacts.Contact{}, err
	}
	if item == nil {
		return contacts.Contact{}, contacts.ErrNotFound
	}
	return decodeContact(item)
}

// DeleteContact implements contacts.Store: one DeleteItem, conditional on the contact being
// there, so that a delete of none answers ErrNotFound.
func (l *Table) DeleteContact(ctx context.Context, tenant, kind, ref string) error {
	key, err := contactKey(tenant, contacts.Key{Kind: kind, Ref: ref})
	if err != nil {
		return err
	}
	_, err = l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &l.table, Key: key, ConditionExpression: aws.String("attribute_exists(pk)")})
	if IsCondCheckFailed(err) {
		return contacts.ErrNotFound
	}
	return classify("delete contact", err)
}

// Contacts implements contacts.Store: one strongly consistent Query of the tenant's partition,
// after the contact named, paged by DynamoDB only when a page passes 1 MB.
func (l *Table) Contacts(ctx context.Context, tenant string, after contacts.Key, limit int) ([]contacts.Contact, error) {
	first, err := contactKey(tenant, contacts.Key{})
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": first[attrPK]},
	}
	if after != (contacts.Key{}) {
		if in.ExclusiveStartKey, err = contactKey(tenant, after); err != nil {
			return nil, err
		}
	}
	var out []contacts.Contact
	for len(out) < limit {
		in.Limit = aws.Int32(int32(limit - len(out)))
		page, err := l.db.Query(ctx, in)
		if err != nil {
			return nil, classify("list contacts", err)
		}
		for _, item := range page.Items {
			c, err := decodeContact(item)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		if page.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	return out, nil
}

func decodeContact(item map[string]types.AttributeValue) (contacts.Contact, error) {
	c := contacts.Contact{Kind: str(item["kind"]), Ref: str(item["ref"]), Email: str(item["email"]), Name: str(item["name"]), Slack: str(item["slack"]), Teams: str(item["teams"])}
	at, err := time.Parse(time.RFC3339Nano, str(item[attrAt]))
	if err != nil {
		return c, fmt.Errorf("dynamo: contact %s %q: %w", c.Kind, c.Ref, err)
	}
	c.UpdatedAt = at
	return c, nil
}
