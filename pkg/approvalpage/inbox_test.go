package approvalpage_test

import (
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/approvalpage"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// TestInboxSaysHowSoon: an inbox item's deadline says how far off it is in minutes or hours
// (a minute away is not "within a day"), and nothing for one days off.
func TestInboxSaysHowSoon(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	item := func(in time.Duration) host.InboxItem {
		return host.InboxItem{RunID: "r1", NodeID: "clarify", InterruptID: "int_1", Kind: interrupt.KindClarification, Title: "Which address?",
			RequestedAt: now.Add(-time.Hour).Format(time.RFC3339), ExpiresAt: now.Add(in).Format(time.RFC3339)}
	}
	for in, want := range map[time.Duration]string{
		time.Minute:    "Decide by Thu 3 Dec 2026, 09:01 UTC (in 1 minute)",
		5 * time.Hour:  "Decide by Thu 3 Dec 2026, 14:00 UTC (in 5 hours)",
		72 * time.Hour: "Decide by Sun 6 Dec 2026, 09:00 UTC",
	} {
		v := approvalpage.Inbox(host.InboxPage{Items: []host.InboxItem{item(in)}}, false, "", now)
		if got := v.Inbox.Items[0]; got.Due != want || got.Title != "Which address?" {
			t.Errorf("due in %v: %q (%q), want %q", in, got.Due, got.Title, want)
		}
	}
}
