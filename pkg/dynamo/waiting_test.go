package dynamo_test

import (
	"testing"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
)

// TestAPageCostsAPage runs the scenario of pkg/host's test on a table, and counts the read units
// a page consumes: a page of runs waiting on 100 KB approvals costs what one of small ones does.
func TestAPageCostsAPage(t *testing.T) {
	m := &meter{}
	db, table := localaws.NewTable(t, m.option)
	large := hosttest.APageCostsAPage(t, dynamo.NewTable(db, table), m.readUnits)
	// The index is read 8 runs at a time (three Queries of a few KB for 16 runs), then one unit
	// per run's check.
	if large.Units == 0 || large.Units > 3+16 {
		t.Errorf("a page of 16 runs consumed %v read units, want the index's and one per run", large.Units)
	}
}

// TestReadModelsAtABoundedCost runs the probe's case of pkg/host's test on a table.
func TestReadModelsAtABoundedCost(t *testing.T) {
	db, table := localaws.NewTable(t)
	hosttest.ReadModelsAtABoundedCost(t, dynamo.NewTable(db, table))
}
