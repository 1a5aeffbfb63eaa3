// Package webkit is what the host's two HTML surfaces share, so that they look and read alike:
// the approval page (package approvalpage) and the operators' console (package console) have
// one stylesheet, one Content-Security-Policy, and one way of printing values (a JSON value as
// text, a field's name for people, an artifact's data as sections and tables). It holds only
// that: each surface keeps its own views, template and words, and this package knows no host,
// run or request.
package webkit

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/words"
)

//go:embed assets/style.css
var style string

// Style is the stylesheet every page of the host starts from: the approval page's whole, the
// console's before its own rules, so a person who moves from one to the other sees one host.
func Style() string { return style }

// CSPFor is the Content-Security-Policy of a page whose one style element holds style: nothing
// may load or run but that element (by its hash), and forms post only back to the host. No
// script-src: no page of the host runs script. One function, so that the page and the console
// cannot drift apart in what they allow.
func CSPFor(style string) string {
	sum := sha256.Sum256([]byte(style))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"img-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}

// Pretty formats a JSON value for a <pre> block, or gives it as it is if it is not JSON: how
// both surfaces show a value exact (the page's raw data, the console's event behind a
// disclosure).
func Pretty(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// Fact is one labelled value, as a page lists it (a <dt> and its <dd>).
type Fact struct{ Label, Value string }

// Section is one part of an artifact's data as a person reads it: its fields, or a table of its
// records. The page shows a request's data in sections, and the console a request in its
// story the same way (Sections).
type Section struct {
	Title string
	Facts []Fact
	Table *Table
}

// Table is a list of records: a column per member, in the order the records first name them.
type Table struct {
	Columns []string
	Rows    [][]string
}

// Sections lay an artifact's data out for people: an object's plain members as facts, each
// member that is an object a section of its own, each list of objects a table. Anything deeper
// is shown as compact JSON in its cell. Data that is no object gives none. An amount in minor
// units beside its object's currency reads as money, as a tool call's does (words.Amount):
// "totalCents": 1240000 with "currency": "EUR" is Total 12,400.00 EUR.
func Sections(data json.RawMessage) []Section {
	members, order := Members(data)
	if members == nil {
		return nil
	}
	currency := words.Currency(members)
	top := Section{Title: "Details"}
	var rest []Section
	for _, k := range order {
		v := members[k]
		switch {
		case IsObject(v):
			sub, subOrder := Members(v)
			sec := Section{Title: Label(k)}
			subCurrency := words.Currency(sub)
			for _, sk := range subOrder {
				sec.Facts = append(sec.Facts, fact(sk, sub[sk], subCurrency))
			}
			rest = append(rest, sec)
		case IsListOfObjects(v):
			rest = append(rest, Section{Title: Label(k), Table: table(v)})
		default:
			top.Facts = append(top.Facts, fact(k, v, currency))
		}
	}
	if len(top.Facts) > 0 {
		rest = append([]Section{top}, rest...)
	}
	return rest
}

// fact is member k of an object whose currency is currency, by its label: as money when it is
// an amount in minor units (words.Amount), else its Cell.
func fact(k string, v json.RawMessage, currency string) Fact {
	if base, amount, ok := words.Amount(k, v, currency); ok {
		return Fact{Label(base), amount}
	}
	return Fact{Label(k), Cell(v)}
}

// Members are a JSON object's members and their order, or nil if raw is no object: the order
// a person wrote the data in is the order the surfaces show it in, which a map forgets.
func Members(raw json.RawMessage) (map[string]json.RawMessage, []string) {
	var m map[string]json.RawMessage
	if !IsObject(raw) || json.Unmarshal(raw, &m) != nil {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var order []string
	if _, err := dec.Token(); err != nil { // {
		return nil, nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil
		}
		k, _ := t.(string)
		order = append(order, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil, nil
		}
	}
	return m, slices.Compact(order)
}

// IsObject reports whether v is a JSON object: a member that Sections shows as a section of
// its own, and that the page offers as a part a request for changes may name.
func IsObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

// IsListOfObjects reports whether v is a non-empty list of objects: a member that Sections
// shows as a table, and whose records the page offers to pick.
func IsListOfObjects(v json.RawMessage) bool {
	var list []json.RawMessage
	if json.Unmarshal(v, &list) != nil || len(list) == 0 {
		return false
	}
	for _, e := range list {
		if !IsObject(e) {
			return false
		}
	}
	return true
}

// table is a list of objects as rows, a column per member in first-named order. A column of
// amounts in minor units reads as money when every record that has it has its currency
// (words.Amount), labelled without the unit; else as it is.
func table(v json.RawMessage) *Table {
	var list []json.RawMessage
	_ = json.Unmarshal(v, &list)
	t := &Table{}
	rows := make([]map[string]json.RawMessage, len(list))
	for i, e := range list {
		m, order := Members(e)
		rows[i] = m
		for _, k := range order {
			if !slices.Contains(t.Columns, k) {
				t.Columns = append(t.Columns, k)
			}
		}
	}
	money := make([]string, len(t.Columns)) // a column of money: its name without the unit
	for j, k := range t.Columns {
		for _, m := range rows {
			if raw, has := m[k]; has {
				base, _, ok := words.Amount(k, raw, words.Currency(m))
				if !ok {
					money[j] = ""
					break
				}
				money[j] = base
			}
		}
	}
	for _, m := range rows {
		row := make([]string, len(t.Columns))
		for j, k := range t.Columns {
			if raw, ok := m[k]; ok {
				row[j] = Cell(raw)
				if _, amount, ok := words.Amount(k, raw, words.Currency(m)); ok && money[j] != "" {
					row[j] = amount
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	for j, k := range t.Columns {
		t.Columns[j] = Label(k)
		if money[j] != "" {
			t.Columns[j] = Label(money[j])
		}
	}
	return t
}

// jsonNumber is a JSON number's grammar.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// IsNumber reports whether s is a JSON number, exactly (no space around it): what Cell groups
// as a number, and what the page's number fields accept.
func IsNumber(s string) bool { return jsonNumber.MatchString(s) }

// Cell is a JSON value as text, wherever a surface shows one value: a string as itself, a
// list of strings joined, a number with its thousands grouped (words.Number), a boolean as yes
// or no, anything else compact JSON.
func Cell(v json.RawMessage) string {
	var s string
	var list []string
	switch {
	case json.Unmarshal(v, &s) == nil:
		return s
	case json.Unmarshal(v, &list) == nil:
		return strings.Join(list, ", ")
	case jsonNumber.Match(bytes.TrimSpace(v)):
		return words.Number(string(bytes.TrimSpace(v)))
	case string(bytes.TrimSpace(v)) == "true":
		return "yes"
	case string(bytes.TrimSpace(v)) == "false":
		return "no"
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

// labels name the protocol's data fields for people; others are spelled out from their name.
var labels = map[string]string{
	"artifactData": "Data", "rejectionPolicy": "Rejection policy",
	"approversList": "Approvers", "approverGroupRefs": "Approver groups", "approverRoleRefs": "Approver roles",
	"overrideBypassesQuorum": "Override bypasses the count", "audience": "Audience", "eventType": "Waiting for event",
	"correlation": "Correlation", "customKind": "Kind", "payload": "Payload", "conversationId": "Conversation",
}

// Label is a field's name for people: the protocol's fields by their label, any other
// camelCase name spelled as words (words.Label). One function, so a field reads the same on the
// page and in the console.
func Label(k string) string {
	if l, ok := labels[k]; ok {
		return l
	}
	return words.Label(k)
}
