// Package words writes values as people read them in a message or on a page: a number with its
// thousands grouped, a time in words in UTC, how far off a deadline is. The mail and the pages
// say the same things the same way.
package words

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Number is a JSON number's text with its thousands grouped: 12400 reads 12,400 and 1240.5 reads
// 1,240.5. A number with an exponent, or anything that is no number, is left as written.
func Number(n string) string {
	if n == "" || strings.ContainsAny(n, "eE") {
		return n
	}
	sign, digits := "", n
	if strings.HasPrefix(digits, "-") {
		sign, digits = "-", digits[1:]
	}
	whole, frac, hasFrac := strings.Cut(digits, ".")
	if whole == "" || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return n
	}
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// Time is t in words, in UTC: "Monday 30 November 2026, 09:00 UTC".
func Time(t time.Time) string { return t.UTC().Format("Monday 2 January 2006, 15:04 UTC") }

// Until says how far off at is from now, for a deadline: "in 5 minutes", "in 3 hours", "in 2
// days", "now" within a minute, "passed" after it.
func Until(at, now time.Time) string {
	d := at.Sub(now)
	switch {
	case d < 0:
		return "passed"
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return count(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return count(int(d/time.Hour), "hour")
	}
	return count(int(d/(24*time.Hour)), "day")
}

// count is "in n units".
func count(n int, unit string) string {
	if n == 1 {
		return "in 1 " + unit
	}
	return fmt.Sprintf("in %d %ss", n, unit)
}

// Label is a data member's name as words: "invoiceTotal", "invoice_total" and "invoice-total"
// read "Invoice total"; a name of nothing but separators is left as it is.
func Label(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || r == '-':
			b.WriteRune(' ')
		case unicode.IsUpper(r) && i > 0:
			b.WriteRune(' ')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if s == "" {
		return name
	}
	first, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(first)) + s[size:]
}

// decided says what each action of an approval did, as a page's or a message's outcome starts.
var decided = map[string]string{
	"accept": "Accepted", "reject": "Rejected", "edit-accept": "Accepted with edits",
	"refine": "Changes asked", "ask": "Asked a question",
}

// Decided is what an approval's action did, in words ("Rejected"); ok is false for an action
// the vocabulary does not have.
func Decided(action string) (string, bool) {
	s, ok := decided[action]
	return s, ok
}

// Personal reports whether principal reads as a person's: an email address, or letters alone,
// with the spaces, dots and apostrophes of a name (alice, olga). An engine's principal is its
// OAuth app client's id (interrupt-host-local-engine, Cognito's 26 letters and digits) or an
// opaque subject (a UUID), which names nobody a reader knows: the page and mail say who asked
// by a name, else by such a principal, else "an automated caller".
func Personal(principal string) bool {
	if local, domain, ok := strings.Cut(principal, "@"); ok {
		return local != "" && strings.Contains(domain, ".") && !strings.ContainsFunc(principal, unicode.IsSpace)
	}
	return principal != "" && !strings.ContainsFunc(principal, func(r rune) bool {
		return !unicode.IsLetter(r) && r != ' ' && r != '.' && r != '\''
	})
}
