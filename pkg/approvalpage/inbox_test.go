package approvalpage_test

import (
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/approvalpage"
	"github.com/interrupthost/interrupthost/pkg/delegation"
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
		v := approvalpage.Inbox(host.InboxPage{Items: []host.InboxItem{item(in)}}, false, "", nil, now)
		if got := v.Inbox.Items[0]; got.Due != want || got.Title != "Which address?" {
			t.Errorf("due in %v: %q (%q), want %q", in, got.Due, got.Title, want)
		}
	}
}

// TestTheInboxSaysAway: an item listed for a delegator says whose place and until when; the
// reader's own delegation in force says who decides in their place and offers "I am back",
// one to come says from when, and none (or one ended) offers "I am away"; every form carries
// the session's CSRF token.
func TestTheInboxSaysAway(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	until := time.Date(2026, 12, 14, 0, 0, 0, 0, time.UTC)
	page := host.InboxPage{Items: []host.InboxItem{{RunID: "r1", NodeID: "pay", InterruptID: "int_1", Kind: interrupt.KindApproval, Title: "Pay",
		RequestedAt: now.Format(time.RFC3339), For: &host.InboxFor{Principal: "alice", Until: until.Format(time.RFC3339)}}}}
	mine := &delegation.Delegation{Principal: "bob", Delegate: "carol", From: now.Add(-time.Hour), Until: until}
	ended := *mine
	ended.EndedAt = now
	later := *mine
	later.From = now.Add(48 * time.Hour)
	for _, c := range []struct {
		name string
		mine *delegation.Delegation
		set  bool
		says string
	}{
		{"in force", mine, true, "You are away until 14 December: carol decides in your place."},
		{"to come", &later, true, "From 5 December until 14 December, carol decides in your place."},
		{"ended", &ended, false, ""},
		{"none", nil, false, ""},
	} {
		v := approvalpage.SignedIn(approvalpage.Inbox(page, false, "", c.mine, now), "bob", "acme", "csrf-1", "signin/signout")
		if got := v.Inbox.Items[0].For; got != "For alice, away until 14 December" {
			t.Errorf("%s: the item says %q", c.name, got)
		}
		if v.Away == nil || v.Away.Set != c.set || v.Away.Now != c.says || v.Away.CSRF != "csrf-1" || v.Away.Action != approvalpage.AwayAction {
			t.Errorf("%s: away %+v", c.name, v.Away)
		}
		b, err := approvalpage.Render(v)
		if err != nil {
			t.Fatal(err)
		}
		button := map[bool]string{true: ">I am back</button>", false: ">I am away</button>"}[c.set]
		if html := string(b); !strings.Contains(html, button) || !strings.Contains(html, `name="csrf" value="csrf-1"`) || !strings.Contains(html, "For alice, away until 14 December") {
			t.Errorf("%s: the page lacks %q or its token:\n%s", c.name, button, html)
		}
	}
}
