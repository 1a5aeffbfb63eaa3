package runlog

import (
	"testing"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// TestTheFoldReadsTheDomainsEvents: every event type the fold applies is one of the domain's
// (interrupt.Events), so the fold holds no list of its own that could drift from it.
func TestTheFoldReadsTheDomainsEvents(t *testing.T) {
	t.Parallel()
	for typ := range appliers {
		if !interrupt.IsEvent(typ) {
			t.Errorf("the fold applies %s, which interrupt.Events does not list", typ)
		}
	}
}
