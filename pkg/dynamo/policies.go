package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// A tenant's tool policies are one partition, <tenant>#policies, every version an item of its
// own, written once and never changed (the record of who set what, when), beside a head item per
// tool naming its latest version, so that the list is one Query whatever the versions:
//
//	v#<tool>#<version, 10 digits>  version, policy (JSON)
//	head#<tool>                    version, policy (JSON): the latest version's copy
//
// A tool name holds no '#', and the default's is "*", so no tool's items are another's. The
// version's put is the write that orders two changes (attribute_not_exists); the head follows
// it, conditional on being newer, and a head a failed write left behind is what the list shows
// until the tool's next change (a tool's own read goes to its versions).
const attrPolicy = "policy"

func policiesPartition(tenant string) string { return tenant + "#policies" }

func policyVersionKey(tool string, version int) string {
	return fmt.Sprintf("v#%s#%010d", tool, version)
}

// PutPolicy implements policy.Store: the version's conditional put, then the head's.
func (l *Table) PutPolicy(ctx context.Context, tenant string, p policy.Policy) error {
	if !runlog.ValidID(tenant) {
		return fmt.Errorf("dynamo: policy of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	pk := policiesPartition(tenant)
	item := map[string]types.AttributeValue{attrPK: s(pk), attrSK: s(policyVersionKey(p.Tool, p.Version)), "version": n(int64(p.Version)), attrPolicy: s(string(b))}
	_, err = l.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(sk)")})
	switch {
	case IsCondCheckFailed(err):
		return policy.ErrVersionTaken
	case err != nil:
		return classify("put policy", err)
	}
	item[attrSK] = s("head#" + p.Tool)
	_, err = l.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &l.table, Item: item,
		ConditionExpression:       aws.String("attribute_not_exists(sk) OR version < :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": n(int64(p.Version))},
	})
	if err != nil && !IsCondCheckFailed(err) {
		return classify("put policy head", err)
	}
	return nil
}

// Policy implements policy.Store: one consistent Query of the tool's versions, newest first,
// reading one.
func (l *Table) Policy(ctx context.Context, tenant, tool string) (policy.Policy, error) {
	if !runlog.ValidID(tenant) {
		return policy.Policy{}, fmt.Errorf("dynamo: policy of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	out, err := l.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true), Limit: aws.Int32(1), ScanIndexForward: aws.Bool(false),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :tool)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(policiesPartition(tenant)), ":tool": s("v#" + tool + "#")},
	})
	if err != nil {
		return policy.Policy{}, classify("policy", err)
	}
	if len(out.Items) == 0 {
		return policy.Policy{}, policy.ErrNotFound
	}
	return policyOf(out.Items[0])
}

// Policies implements policy.Store: a consistent Query of the heads.
func (l *Table) Policies(ctx context.Context, tenant string) ([]policy.Policy, error) {
	if !runlog.ValidID(tenant) {
		return nil, fmt.Errorf("dynamo: policies of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	in := &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :head)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(policiesPartition(tenant)), ":head": s("head#")},
	}
	out := []policy.Policy{}
	for {
		page, err := l.db.Query(ctx, in)
		if err != nil {
			return nil, classify("policies", err)
		}
		for _, item := range page.Items {
			p, err := policyOf(item)
			if err != nil {
				return nil, err
			}
			if !p.Deleted {
				out = append(out, p)
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return policy.Sorted(out), nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// policyOf reads a policy item.
func policyOf(item map[string]types.AttributeValue) (policy.Policy, error) {
	var p policy.Policy
	if err := json.Unmarshal([]byte(str(item[attrPolicy])), &p); err != nil {
		return p, fmt.Errorf("dynamo: policy %s: %w", str(item[attrSK]), err)
	}
	if v, err := strconv.Atoi(num(item["version"])); err != nil || v != p.Version {
		return p, fmt.Errorf("dynamo: policy %s: its version %q is not its policy's %d", str(item[attrSK]), num(item["version"]), p.Version)
	}
	return p, nil
}
