package dynamo_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
)

// TestAStaleDelegationCopyGrantsNothing: a copy under a former delegate that a failed write
// left behind (alice's v1 to bob, after v2 named carol) is checked against alice's item and
// believed of no one, while carol's holds.
func TestAStaleDelegationCopyGrantsNothing(t *testing.T) {
	t.Parallel()
	db, table := localaws.NewTable(t)
	st := dynamo.NewTable(db, table)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	d := func(delegate string, v int64) delegation.Delegation {
		return delegation.Delegation{Tenant: "acme", Principal: "alice", Delegate: delegate, From: t0, Until: t0.Add(time.Hour), Version: v}
	}
	v1, v2 := d("bob", 1), d("carol", 2)
	if err := st.PutDelegation(ctx, v1, delegation.Delegation{}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutDelegation(ctx, v2, v1); err != nil {
		t.Fatal(err)
	}
	// What a write of v1 that failed to remove its copy leaves: bob's copy of v1.
	b, _ := json.Marshal(v1)
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "acme#delegations"}, "sk": &types.AttributeValueMemberS{Value: "to#bob#alice"},
		"version": &types.AttributeValueMemberN{Value: "1"}, "delegation": &types.AttributeValueMemberS{Value: string(b)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if held, err := st.HeldBy(ctx, "acme", "bob"); err != nil || len(held) != 0 {
		t.Errorf("bob holds %+v %v from a stale copy", held, err)
	}
	if held, err := st.HeldBy(ctx, "acme", "carol"); err != nil || len(held) != 1 || held[0].Version != 2 {
		t.Errorf("carol holds %+v %v, want alice's v2", held, err)
	}
}
