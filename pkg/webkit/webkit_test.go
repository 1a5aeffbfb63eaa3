package webkit_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/webkit"
)

// TestCell: a value reads as a person would write it: a string as itself, a list of strings
// joined, a number grouped by thousands (an exponent left as written), a boolean as yes or no,
// null as nothing, anything else compact JSON.
func TestCell(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ raw, want string }{
		{`"Lyon"`, "Lyon"},
		{`"<b>"`, "<b>"},
		{`["a","b"]`, "a, b"},
		{`1240000`, "1,240,000"},
		{` -1234.5 `, "-1,234.5"},
		{`1e6`, "1e6"},
		{`true`, "yes"},
		{`false`, "no"},
		{`null`, ""},
		{`{"a": [1, 2]}`, `{"a":[1,2]}`},
		{`not json`, "not json"},
	} {
		if got := webkit.Cell(json.RawMessage(tt.raw)); got != tt.want {
			t.Errorf("Cell(%s) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

// TestSections: data is laid out in the order it was written: its plain members first, as
// facts, then each object a section and each list of records a table, a column per member in
// the order the records first name them; data that is no object has no sections.
func TestSections(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, data string
		want       []webkit.Section
	}{
		{"members in their order", `{"zeta":1,"shipTo":{"zip":"69001","city":"Lyon"},"alpha":"a","rows":[{"id":"x"},{"id":"y","rush":true}]}`, []webkit.Section{
			{Title: "Details", Facts: []webkit.Fact{{Label: "Zeta", Value: "1"}, {Label: "Alpha", Value: "a"}}},
			{Title: "Ship to", Facts: []webkit.Fact{{Label: "Zip", Value: "69001"}, {Label: "City", Value: "Lyon"}}},
			{Title: "Rows", Table: &webkit.Table{Columns: []string{"Id", "Rush"}, Rows: [][]string{{"x", ""}, {"y", "yes"}}}},
		}},
		{"a list that is not all records", `{"mixed":[{"a":1},2]}`, []webkit.Section{
			{Title: "Details", Facts: []webkit.Fact{{Label: "Mixed", Value: `[{"a":1},2]`}}},
		}},
		{"an empty list, which is no table", `{"none":[]}`, []webkit.Section{
			{Title: "Details", Facts: []webkit.Fact{{Label: "None", Value: ""}}},
		}},
		{"the protocol's names", `{"approversList":["alice","bob"]}`, []webkit.Section{
			{Title: "Details", Facts: []webkit.Fact{{Label: "Approvers", Value: "alice, bob"}}},
		}},
		{"an amount in cents beside its currency", `{"totalCents":1240000,"currency":"EUR","refund":{"amount_minor":500,"currency":"JPY"},"lines":[{"sku":"a","priceCents":1999,"currency":"USD"},{"sku":"b","priceCents":5,"currency":"KWD"}]}`, []webkit.Section{
			{Title: "Details", Facts: []webkit.Fact{{Label: "Total", Value: "12,400.00 EUR"}, {Label: "Currency", Value: "EUR"}}},
			{Title: "Refund", Facts: []webkit.Fact{{Label: "Amount", Value: "500 JPY"}, {Label: "Currency", Value: "JPY"}}},
			{Title: "Lines", Table: &webkit.Table{Columns: []string{"Sku", "Price", "Currency"}, Rows: [][]string{{"a", "19.99 USD", "USD"}, {"b", "0.005 KWD", "KWD"}}}},
		}},
		{"cents without a currency, or not whole", `{"totalCents":1240000,"feeCents":1.5,"rows":[{"priceCents":1,"currency":"EUR"},{"priceCents":2}]}`, []webkit.Section{
			{Title: "Details", Facts: []webkit.Fact{{Label: "Total cents", Value: "1,240,000"}, {Label: "Fee cents", Value: "1.5"}}},
			{Title: "Rows", Table: &webkit.Table{Columns: []string{"Price cents", "Currency"}, Rows: [][]string{{"1", "EUR"}, {"2", ""}}}},
		}},
		{"a currency that is no code", `{"totalCents":100,"currency":"euros"}`, []webkit.Section{
			{Title: "Details", Facts: []webkit.Fact{{Label: "Total cents", Value: "100"}, {Label: "Currency", Value: "euros"}}},
		}},
		{"a list", `[{"a":1}]`, nil},
		{"a string", `"x"`, nil},
		{"no JSON", `{`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := webkit.Sections(json.RawMessage(tt.data)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Sections(%s) =\n%+v\nwant\n%+v", tt.data, got, tt.want)
			}
		})
	}
}

// TestIsNumber: a JSON number exactly, as the grammar has it.
func TestIsNumber(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{"12": true, "-0.5e3": true, "0": true, "012": false, "1.": false, "+1": false, " 12": false, "": false, "1,240": false} {
		if got := webkit.IsNumber(s); got != want {
			t.Errorf("IsNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestCSPFor: a page's policy allows its own style element by hash and nothing else, no script
// at all; the host's stylesheet is the one both surfaces start from.
func TestCSPFor(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte(webkit.Style()))
	csp := webkit.CSPFor(webkit.Style())
	if want := "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; "; !strings.HasPrefix(csp, want) {
		t.Errorf("CSPFor = %q, want it to start %q", csp, want)
	}
	if strings.Contains(csp, "script") || !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "form-action 'self'") {
		t.Errorf("CSPFor = %q allows more than the style and forms to the host", csp)
	}
	if webkit.Style() == "" || webkit.CSPFor("a") == webkit.CSPFor("b") {
		t.Error("the policy does not follow the style")
	}
}

// TestPretty: JSON indented for a <pre> block; what is no JSON as it is.
func TestPretty(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{`{"a":[1]}`: "{\n  \"a\": [\n    1\n  ]\n}", `not json`: "not json"} {
		if got := webkit.Pretty(json.RawMessage(raw)); got != want {
			t.Errorf("Pretty(%s) = %q, want %q", raw, got, want)
		}
	}
}
