package dynamo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// A tenant's Teams bot is the item <tenant>#integrations / teams, beside its Slack app; each
// tenant that registered an app id is listed under it, the item teamsapp#<appId> /
// tenant#<tenant>, written before the tenant's item and deleted after it, as Slack's pairs are
// (an app id is no one's to hold, teams.Store). Neither is in a commit's key space.
func teamsBotKey(tenant string) (map[string]types.AttributeValue, error) {
	if !runlog.ValidID(tenant) {
		return nil, fmt.Errorf("dynamo: teams bot of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	return map[string]types.AttributeValue{attrPK: s(tenant + "#integrations"), attrSK: s("teams")}, nil
}

func teamsAppPK(appID string) string { return "teamsapp#" + appID }

func teamsAppKey(appID, tenant string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: s(teamsAppPK(appID)), attrSK: s("tenant#" + tenant)}
}

// PutTeamsBot implements teams.Store.
func (l *Table) PutTeamsBot(ctx context.Context, b teams.Bot) (bool, error) {
	key, err := teamsBotKey(b.Tenant)
	if err != nil {
		return false, err
	}
	listed := teamsAppKey(b.AppID, b.Tenant)
	listed["tenant"] = s(b.Tenant)
	if _, err := l.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: listed}); err != nil {
		return false, classify("list teams bot", err)
	}
	item := key
	item["appId"], item["entraTenant"] = s(b.AppID), s(b.EntraTenant)
	item[attrAt] = s(b.UpdatedAt.UTC().Format(time.RFC3339Nano))
	out, err := l.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: item, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return false, classify("put teams bot", err)
	}
	if old := out.Attributes; len(old) > 0 && str(old["appId"]) != b.AppID {
		// A failure leaves the tenant listed under its old app id, harmless: its bot is read too.
		_, _ = l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &l.table, Key: teamsAppKey(str(old["appId"]), b.Tenant)})
	}
	return len(out.Attributes) == 0, nil
}

// TeamsBot implements teams.Store: one strongly consistent read.
func (l *Table) TeamsBot(ctx context.Context, tenant string) (teams.Bot, error) {
	key, err := teamsBotKey(tenant)
	if err != nil {
		return teams.Bot{}, err
	}
	item, err := l.item(ctx, key)
	if err != nil {
		return teams.Bot{}, err
	}
	if item == nil {
		return teams.Bot{}, teams.ErrNotFound
	}
	b := teams.Bot{Tenant: tenant, AppID: str(item["appId"]), EntraTenant: str(item["entraTenant"])}
	if b.UpdatedAt, err = time.Parse(time.RFC3339Nano, str(item[attrAt])); err != nil {
		return b, fmt.Errorf("dynamo: teams bot of %s: %w", tenant, err)
	}
	return b, nil
}

// DeleteTeamsBot implements teams.Store.
func (l *Table) DeleteTeamsBot(ctx context.Context, tenant string) error {
	key, err := teamsBotKey(tenant)
	if err != nil {
		return err
	}
	out, err := l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &l.table, Key: key, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return classify("delete teams bot", err)
	}
	if len(out.Attributes) == 0 {
		return teams.ErrNotFound
	}
	_, _ = l.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &l.table, Key: teamsAppKey(str(out.Attributes["appId"]), tenant)})
	return nil
}

// TeamsTenants implements teams.Store: one strongly consistent Query of the app id's items.
func (l *Table) TeamsTenants(ctx context.Context, appID string) ([]string, error) {
	in := &dynamodb.QueryInput{
		TableName: &l.table, ConsistentRead: aws.Bool(true), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(teamsAppPK(appID))},
	}
	var out []string
	for {
		page, err := l.db.Query(ctx, in)
		if err != nil {
			return nil, classify("read teams bot's tenants", err)
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
