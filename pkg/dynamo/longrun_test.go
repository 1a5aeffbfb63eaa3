package dynamo_test

import (
	"testing"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
)

// TestLargePendingStateStaysCheckpointed runs the scenario of pkg/host's test on a table: there a
// checkpoint must fit one item as DynamoDB counts it (dynamo.ItemSize), which the in-memory
// store only estimates.
func TestLargePendingStateStaysCheckpointed(t *testing.T) {
	db, table := localaws.NewTable(t)
	hosttest.LargePendingStateStaysCheckpointed(t, dynamo.NewTable(db, table))
}

// TestALateCheckpointRevivesNothing runs the scenario of pkg/host's test on a table, whose items
// keep a run's checkpoint and archive apart from its commits and expire each on its own.
func TestALateCheckpointRevivesNothing(t *testing.T) {
	db, table := localaws.NewTable(t)
	hosttest.ALateCheckpointRevivesNothing(t, dynamo.NewTable(db, table))
}
