package operator

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/interrupthost/interrupthost/client"
)

// TestPendingFitsAScreen: the pending table of the longest values an interrupt may have stays
// within 120 columns, its tally in words; -o json keeps every value whole.
func TestPendingFitsAScreen(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 128)
	list := []client.PendingInterrupt{
		{RunID: long, NodeID: long, Kind: "low-confidence", Title: long, ExpiresAt: "2026-12-05T17:31:00.000Z",
			Tally: &client.Tally{Approvals: 10, Rejections: 10, Required: 10}, WaitingOn: []string{"principal:" + long, "group:finance"}},
		{RunID: "order-4471", NodeID: "approve", Kind: "approval", Title: "Pay invoice 4471", Tally: &client.Tally{Approvals: 1, Required: 2}, WaitingOn: []string{"principal:bob"}},
	}
	var table bytes.Buffer
	if err := (&printer{w: &table}).print(pendingRows(list)); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(table.String()), "\n") {
		if n := utf8.RuneCountInString(strings.TrimRight(line, " ")); n > 120 {
			t.Errorf("a line of %d columns:\n%s", n, line)
		}
	}
	if !strings.Contains(table.String(), "1 of 2 ") || !strings.Contains(table.String(), "WAITS ON") {
		t.Errorf("the table:\n%s", table.String())
	}
	var lines bytes.Buffer
	if err := (&printer{w: &lines, json: true}).print(list); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lines.String(), `"title":"`+long+`"`) {
		t.Errorf("-o json cut a value: %s", lines.String())
	}
}
