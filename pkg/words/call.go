package words

import (
	"bytes"
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
)

// WillCall says who will make a call, and the call (Call): "The agent will call issue_refund
// with ...", or the requester's name (a value, isolated as the call's are) for "The agent".
func WillCall(who, name string, arguments json.RawMessage) Sentence {
	subject := Said("The agent")
	if who != "" {
		subject = Value(who)
	}
	return append(Sentence{subject, Said(" will call ")}, Call(name, arguments)...)
}

// Call is a tool call as a person reads it: "issue_refund with order 4471, amount 1,240.00 EUR".
// Each argument is its name in words and its value: text as written, a number grouped, yes or
// no, a list or object in compact JSON. An integer argument named for an amount in minor units
// (amountCents, amount_minor) beside an ISO 4217 currency reads as that amount in the currency
// ("amount 1,240.00 EUR"), since a person approves money, not cents. Arguments that are no
// object read as JSON. What the caller wrote (the tool's name, each argument's name, a text or
// JSON value) is a Value of the sentence; a number, yes, no, none and an amount are the host's
// own writing of what it parsed.
func Call(name string, arguments json.RawMessage) Sentence {
	members, order := members(arguments)
	out := Sentence{Value(name)}
	if members == nil {
		var b bytes.Buffer
		if json.Compact(&b, arguments) != nil || b.Len() == 0 {
			return out
		}
		return append(out, Said(" with "), Value(b.String()))
	}
	if len(order) == 0 {
		return append(out, Said(" with no arguments"))
	}
	currency := Currency(members)
	var parts []Sentence
	moneyShown := false
	for _, k := range order {
		v := members[k]
		if base, amount, ok := Amount(k, v, currency); ok {
			parts = append(parts, Sentence{Value(strings.ToLower(Label(base))), Said(" " + amount)})
			moneyShown = true
			continue
		}
		parts = append(parts, append(Sentence{Value(strings.ToLower(Label(k))), Said(" ")}, value(v)...))
	}
	if moneyShown {
		for i, k := range order {
			if k == "currency" {
				parts = append(parts[:i:i], parts[i+1:]...)
				break
			}
		}
	}
	out = append(out, Said(" with "))
	for i, p := range parts {
		if i > 0 {
			out = append(out, Said(", "))
		}
		out = append(out, p...)
	}
	return out
}

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// Currency is the currency an object's members state: its member "currency" when that is an
// ISO 4217 code ("EUR"), else "" (no amount of the object reads as money).
func Currency(members map[string]json.RawMessage) string {
	var c string
	if raw, ok := members["currency"]; ok && json.Unmarshal(raw, &c) == nil && currencyCode.MatchString(c) {
		return c
	}
	return ""
}

// Amount is member k of an object as money, the one rule of a tool call's arguments (Call) and
// of the data the page and the console show: an integer member named for an amount in minor
// units (amountCents, total_cents, amount_minor, amountInMinorUnits) beside a currency
// (Currency) is that amount in the currency. name is the amount's name without its unit
// ("amount", "total"), amount the money in words ("12,400.00 EUR"); ok is false for any other
// member, or with no currency, and the member reads as it is.
func Amount(k string, v json.RawMessage, currency string) (name, amount string, ok bool) {
	base, ok := minorUnits(k)
	if !ok || currency == "" {
		return "", "", false
	}
	amount, ok = Money(string(bytes.TrimSpace(v)), currency)
	if !ok {
		return "", "", false
	}
	return base, amount, true
}

// minorUnits reports whether member k names an amount in minor units, and the amount's name.
func minorUnits(k string) (string, bool) {
	for _, suffix := range []string{"Cents", "_cents", "Minor", "_minor", "InMinorUnits"} {
		if base, ok := strings.CutSuffix(k, suffix); ok && base != "" {
			return base, true
		}
	}
	return "", false
}

// exponents are the ISO 4217 currencies whose minor unit is not a hundredth.
var exponents = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// Money is an integer amount in minor units of currency as a person reads it: "124000" of EUR
// reads "1,240.00 EUR", of JPY "124,000 JPY". ok is false for anything but an integer.
func Money(minor, currency string) (string, bool) {
	n, ok := new(big.Int).SetString(minor, 10)
	if !ok {
		return "", false
	}
	exp, known := exponents[currency]
	if !known {
		exp = 2
	}
	sign := ""
	if n.Sign() < 0 {
		sign, n = "-", n.Neg(n)
	}
	digits := n.String()
	if exp == 0 {
		return sign + Number(digits) + " " + currency, true
	}
	for len(digits) <= exp {
		digits = "0" + digits
	}
	return sign + Number(digits[:len(digits)-exp]) + "." + digits[len(digits)-exp:] + " " + currency, true
}

// value is one argument's value in words.
func value(v json.RawMessage) Sentence {
	v = bytes.TrimSpace(v)
	var s string
	switch {
	case string(v) == "null": // first: JSON's null reads into a string as ""
		return Sentence{Said("none")}
	case json.Unmarshal(v, &s) == nil:
		if s == "" || strings.ContainsAny(s, ",;“”\"\n\r") {
			// Quoted where it could read as more than one argument ("4471, amount 1.00 EUR").
			return Sentence{Said("“"), Value(s), Said("”")}
		}
		return Sentence{Value(s)}
	case string(v) == "true":
		return Sentence{Said("yes")}
	case string(v) == "false":
		return Sentence{Said("no")}
	case len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9'):
		return Sentence{Said(Number(string(v)))}
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return Sentence{Value(string(v))}
	}
	return Sentence{Value(b.String())}
}

// members are a JSON object's members and their names in the order written; nil for no object.
func members(raw json.RawMessage) (map[string]json.RawMessage, []string) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil
	}
	m := map[string]json.RawMessage{}
	var order []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil
		}
		k, _ := t.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, nil
		}
		if _, seen := m[k]; !seen {
			order = append(order, k)
		}
		m[k] = v
	}
	return m, order
}
