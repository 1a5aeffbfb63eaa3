package words

import (
	"encoding/json"
	"testing"
)

// TestEachValueIsIsolated: in every medium, each value a sentence inserts (the requester's name,
// the tool's, each argument's name and value, a title) is isolated from the host's words: in
// plain text between FSI and PDI, on a page in <bdi>, with its own directional controls shown
// as U+FFFD and its line breaks as spaces, so that an override (U+202E) or a PDI that would
// close the isolate early cannot reorder the words after it.
func TestEachValueIsIsolated(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		sentence Sentence
		plain    string
		html     string
		cutAt    int
		cut      string
	}{
		{
			"an override in an argument",
			WillCall("", "issue_refund", json.RawMessage(`{"memo":"\u202egnp.exe","amountCents":124000,"currency":"EUR"}`)),
			"The agent will call \u2068issue_refund\u2069 with \u2068memo\u2069 \u2068\ufffdgnp.exe\u2069, \u2068amount\u2069 1,240.00 EUR",
			"The agent will call <bdi>issue_refund</bdi> with <bdi>memo</bdi> <bdi>\ufffdgnp.exe</bdi>, <bdi>amount</bdi> 1,240.00 EUR",
			34, "The agent will call \u2068issue_refun\u2069…",
		},
		{
			"a PDI that would close the isolate, then an override",
			WillCall("Refunds\u2069\u202e desk", "pay", json.RawMessage(`{"to":"a\u2069\u202ez","note":"x\u2067y\u202cz"}`)),
			"\u2068Refunds\ufffd\ufffd desk\u2069 will call \u2068pay\u2069 with \u2068to\u2069 \u2068a\ufffd\ufffdz\u2069, \u2068note\u2069 \u2068x\ufffdy\ufffdz\u2069",
			"<bdi>Refunds\ufffd\ufffd desk</bdi> will call <bdi>pay</bdi> with <bdi>to</bdi> <bdi>a\ufffd\ufffdz</bdi>, <bdi>note</bdi> <bdi>x\ufffdy\ufffdz</bdi>",
			8, "\u2068Refun\u2069…",
		},
		{
			"a name's markup and a line break",
			WillCall("<b>Desk</b>", "pay", json.RawMessage("{\"memo\":\"one\\ntwo\u2029three\",\"to\":[\"\u202e1\"]}")),
			"\u2068<b>Desk</b>\u2069 will call \u2068pay\u2069 with \u2068memo\u2069 “\u2068one two three\u2069”, \u2068to\u2069 \u2068[\"\ufffd1\"]\u2069",
			"<bdi>&lt;b&gt;Desk&lt;/b&gt;</bdi> will call <bdi>pay</bdi> with <bdi>memo</bdi> “<bdi>one two three</bdi>”, <bdi>to</bdi> <bdi>[&#34;\ufffd1&#34;]</bdi>",
			100, "",
		},
		{
			"a title alone",
			Sentence{Said("Reminder: "), Value("\u202eevorppa")},
			"Reminder: \u2068\ufffdevorppa\u2069",
			"Reminder: <bdi>\ufffdevorppa</bdi>",
			14, "Reminder: \u2068\ufffd\u2069…",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.sentence.Plain(); got != tt.plain {
				t.Errorf("plain %q\nwant  %q", got, tt.plain)
			}
			if got := string(tt.sentence.HTML()); got != tt.html {
				t.Errorf("HTML %q\nwant %q", got, tt.html)
			}
			if tt.cut != "" {
				if got := tt.sentence.PlainCut(tt.cutAt); got != tt.cut || len([]rune(got)) > tt.cutAt {
					t.Errorf("cut to %d: %q, want %q", tt.cutAt, got, tt.cut)
				}
			}
		})
	}
	if got := Isolated("a\u202eb"); got != "\u2068a\ufffdb\u2069" {
		t.Errorf("Isolated: %q", got)
	}
}
