package words

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCall(t *testing.T) {
	t.Parallel()
	tests := []struct{ args, want string }{
		{`{"order":"4471","amountCents":124000,"currency":"EUR"}`, "issue_refund with order 4471, amount 1,240.00 EUR"},
		{`{"currency":"JPY","amount_minor":124000}`, "issue_refund with amount 124,000 JPY"},
		{`{"amountCents":5,"currency":"KWD"}`, "issue_refund with amount 0.005 KWD"},
		{`{"amountCents":-7,"currency":"USD"}`, "issue_refund with amount -0.07 USD"},
		{`{"amountCents":1.5,"currency":"EUR"}`, "issue_refund with amount cents 1.5, currency EUR"},
		{`{"amountCents":124000}`, "issue_refund with amount cents 124,000"},
		{`{"amountCents":124000,"currency":"euros"}`, "issue_refund with amount cents 124,000, currency euros"},
		{`{"notify":true,"note":null,"lines":[1,2],"to":{"a":1}}`, "issue_refund with notify yes, note none, lines [1,2], to {\"a\":1}"},
		{`{}`, "issue_refund with no arguments"},
		{`{"order":"4471, amount 1.00 EUR","note":""}`, "issue_refund with order “4471, amount 1.00 EUR”, note “”"},
		{`[1]`, "issue_refund with [1]"},
	}
	unmarked := strings.NewReplacer(fsi, "", pdi, "")
	for _, tt := range tests {
		if got := unmarked.Replace(Call("issue_refund", json.RawMessage(tt.args)).Plain()); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.args, got, tt.want)
		}
	}
}
