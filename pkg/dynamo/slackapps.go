package dynamo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// A tenant's Slack app is the item <tenant>#integrations / slack; each tenant that registered
// an app and workspace pair is listed under it, the item slackapp#<appId>#<teamId> /
// tenant#<tenant>, written before the tenant's item and deleted after it: a pair is no one's to
// hold (slack.Store), so neither write is conditional. The table has no transactions here
// (dynalite has none either): a writer that dies between the two leaves a pair listing a tenant
// whose app is another, which no click verifies against (the tenant's item is checked too).
// An item slackapp#<appId>#<teamId> / slackapp is a pair's single owner as earlier releases
// kept it: still read as listing its tenant, so a deployment's clicks go on verifying across
// the upgrade. Neither is in a commit's key space.
func slackAppKey(tenant string) (map[string]types.AttributeValue, error) {
	if !runlog.ValidID(tenant) {
		return nil, fmt.Errorf("dynamo: slack app of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s(tenant + "#integrations"), attrSK: s("slack")}, nil
}

func slackPairPK(appID, teamID string) string { return "slackapp#" + appID + "#" + teamID }

func slackPairKey(appID, teamID, tenant string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: s(slackPairPK(appID, teamID)), attrSK: s("tenant#" + tenant)}
}

// PutSlackApp implements slack.Store.
func (l *Table) PutSlackApp(ctx context.Context, a slack.App) (bool, error) {
	key, err := slackAppKey(a.Tenant)
	if err != nil {
		return false, err
	}
	pair := slackPairKey(a.AppID, a.TeamID, a.Tenant)
	pair["tenant"] = s(a.Tenant)
	if _, err := l.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: pair}); err != nil {
		return false, classify("list slack app", err)
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

// releaseSlackPair takes the tenant off a pair's list (and a single owner's item naming it); a
// failure leaves it behind, harmless.
func (l *Table) releaseSlackPair(ctx context.Context, tenant, appID, teamID string) {
	_, _ = l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &l.table, Key: slackPairKey(appID, teamID, tenant)})
	_, _ = l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &l.table, Key: map[string]types.AttributeValue{attrPK: s(slackPairPK(appID, teamID)), attrSK: s("slackapp")},
		ConditionExpression: aws.String("tenant = :t"), ExpressionAttributeValues: map[string]types.AttributeValue{":t": s(tenant)},
	})
}

// SlackApp implements slack.Store: one strongly consistent read.
func (l *Table) SlackApp(ctx context.Context, tenant string) (slack.App, error) {
	key, err := slackAppKey(tenant)
	if err != nil {
		return slack.App{}, err
	}
	item, err := l.item(ctx, key)
	if err != nil {
		return slack.App{}, err
	}
	if item == nil {
		return slack.App{}, slack.ErrNotFound
	}
	a := slack.App{Tenant: tenant, AppID: str(item["appId"]), TeamID: str(item["teamId"])}
	if b, ok := item["botToken"].(*types.AttributeValueMemberBOOL); ok {
		a.BotToken = b.Value
	}
	if a.UpdatedAt, err = time.Parse(time.RFC3339Nano, str(item[attrAt])); err != nil {
		return a, fmt.Errorf("dynamo: slack app of %s: %w", tenant, err)
	}
	return a, nil
}

// DeleteSlackApp implements slack.Store.
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
		return slack.ErrNotFound
	}
	l.releaseSlackPair(ctx, tenant, str(out.Attributes["appId"]), str(out.Attributes["teamId"]))
	return nil
}

// SlackTenants implements slack.Store: one strongly consistent Query of the pair's items.
func (l *Table) SlackTenants(ctx context.Context, appID, teamID string) ([]string, error) {
	in := &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(slackPairPK(appID, teamID))},
	}
	var out []string
	for {
		page, err := l.db.Query(ctx, in)
		if err != nil {
			return nil, classify("read slack app's tenants", err)
		}
		for _, item := range page.Items {
			if t := str(item["tenant"]); t != "" && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
		if page.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	slices.Sort(out)
	return out, nil
}
