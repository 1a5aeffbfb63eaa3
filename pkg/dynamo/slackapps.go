package dynamo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/slackapp"
)

// A tenant's Slack app is the item <tenant>#integrations / slack; which tenant an app and
// workspace pair belongs to is the item slackapp#<appId>#<teamId> / slackapp, written first and
// conditionally, so two tenants never hold one pair. The table has no transactions here
// (dynalite has none either): a writer that dies between the two leaves a pair naming a tenant
// whose app is another, which no click verifies against (the tenant's item is checked too) and
// which a PutSlackApp of the pair takes over once it is staleSlackClaim old (younger, it may be a
// claim whose tenant's item is being written). Neither is in a commit's key space.
func slackAppKey(tenant string) (map[string]types.AttributeValue, error) {
	if !runlog.ValidID(tenant) {
		return nil, fmt.Errorf("dynamo: slack app of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s(tenant + "#integrations"), attrSK: s("slack")}, nil
}

// staleSlackClaim is how old a pair whose tenant's app is another must be to be taken over.
const staleSlackClaim = time.Minute

func slackPairKey(appID, teamID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: s("slackapp#" + appID + "#" + teamID), attrSK: s("slackapp")}
}

// PutSlackApp implements slackapp.Store.
func (l *Table) PutSlackApp(ctx context.Context, a slackapp.App) (bool, error) {
	key, err := slackAppKey(a.Tenant)
	if err != nil {
		return false, err
	}
	if err := l.claimSlackPair(ctx, a); err != nil {
		return false, err
	}
	item := key
	item["appId"], item["teamId"] = s(a.AppID), s(a.TeamID)
	item["botToken"] = &types.AttributeValueMemberBOOL{Value: a.BotToken}
	item[attrAt] = s(a.UpdatedAt.UTC().Format(time.RFC3339Nano))
	out, err := l.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: item, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return false, classify("put slack app", err)
	}
	if old := out.Attributes; len(old) > 0 && (str(old["appId"]) != a.AppID || str(old["teamId"]) != a.TeamID) {
		l.releaseSlackPair(ctx, a.Tenant, str(old["appId"]), str(old["teamId"]))
	}
	return len(out.Attributes) == 0, nil
}

// claimSlackPair makes a's pair the tenant's: when it is no one's or the tenant's already, or
// when it names a tenant whose app is no longer that pair (left behind), taken over from it.
func (l *Table) claimSlackPair(ctx context.Context, a slackapp.App) error {
	put := func(cond string, values map[string]types.AttributeValue) error {
		item := slackPairKey(a.AppID, a.TeamID)
		item["tenant"] = s(a.Tenant)
		item["claimedAt"] = s(time.Now().UTC().Format(time.RFC3339Nano))
		_, err := l.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: &l.table, Item: item, ConditionExpression: aws.String(cond), ExpressionAttributeValues: values,
		})
		return err
	}
	err := put("attribute_not_exists(pk) OR tenant = :t", map[string]types.AttributeValue{":t": s(a.Tenant)})
	if !IsCondCheckFailed(err) {
		if err != nil {
			return classify("claim slack app", err)
		}
		return nil
	}
	pair, err := l.item(ctx, slackPairKey(a.AppID, a.TeamID))
	if err != nil || pair == nil {
		return cmp.Or(err, slackapp.ErrTaken) // deleted meanwhile: its deleter may be re-claiming it
	}
	owner := str(pair["tenant"])
	if claimed, err := time.Parse(time.RFC3339Nano, str(pair["claimedAt"])); err == nil && time.Since(claimed) < staleSlackClaim {
		return slackapp.ErrTaken
	}
	if held, err := l.SlackApp(ctx, owner); err == nil && held.AppID == a.AppID && held.TeamID == a.TeamID {
		return slackapp.ErrTaken
	} else if err != nil && !errors.Is(err, slackapp.ErrNotFound) {
		return err
	}
	// Taken over only as read: an owner that claimed it again meanwhile keeps it.
	if err := put("tenant = :t AND claimedAt = :c", map[string]types.AttributeValue{":t": s(owner), ":c": pair["claimedAt"]}); IsCondCheckFailed(err) {
		return slackapp.ErrTaken
	} else if err != nil {
		return classify("claim slack app", err)
	}
	return nil
}

// releaseSlackPair forgets a pair the tenant held; a failure leaves it behind, harmless.
func (l *Table) releaseSlackPair(ctx context.Context, tenant, appID, teamID string) {
	_, _ = l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &l.table, Key: slackPairKey(appID, teamID), ConditionExpression: aws.String("tenant = :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": s(tenant)},
	})
}

// SlackApp implements slackapp.Store: one strongly consistent read.
func (l *Table) SlackApp(ctx context.Context, tenant string) (slackapp.App, error) {
	key, err := slackAppKey(tenant)
	if err != nil {
		return slackapp.App{}, err
	}
	item, err := l.item(ctx, key)
	if err != nil {
		return slackapp.App{}, err
	}
	if item == nil {
		return slackapp.App{}, slackapp.ErrNotFound
	}
	a := slackapp.App{Tenant: tenant, AppID: str(item["appId"]), TeamID: str(item["teamId"])}
	if b, ok := item["botToken"].(*types.AttributeValueMemberBOOL); ok {
		a.BotToken = b.Value
	}
	if a.UpdatedAt, err = time.Parse(time.RFC3339Nano, str(item[attrAt])); err != nil {
		return a, fmt.Errorf("dynamo: slack app of %s: %w", tenant, err)
	}
	return a, nil
}

// DeleteSlackApp implements slackapp.Store.
func (l *Table) DeleteSlackApp(ctx context.Context, tenant string) error {
	key, err := slackAppKey(tenant)
	if err != nil {
		return err
	}
	out, err := l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &l.table, Key: key, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return classify("delete slack app", err)
	}
	if len(out.Attributes) == 0 {
		return slackapp.ErrNotFound
	}
	l.releaseSlackPair(ctx, tenant, str(out.Attributes["appId"]), str(out.Attributes["teamId"]))
	return nil
}

// SlackTenant implements slackapp.Store.
func (l *Table) SlackTenant(ctx context.Context, appID, teamID string) (string, error) {
	item, err := l.item(ctx, slackPairKey(appID, teamID))
	if err != nil {
		return "", err
	}
	if item == nil {
		return "", slackapp.ErrNotFound
	}
	return str(item["tenant"]), nil
}
