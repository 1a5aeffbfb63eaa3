package interrupt

import (
	"encoding/json"
	"fmt"
	"iter"
	"strconv"
	"strings"
)

// Bounds on the numbers the host reads. JSON sets numbers no bounds, and the schema validator
// parses every number it visits exactly (as a big.Rat), at a cost that grows with the number's
// magnitude rather than its bytes: 1e-999999, 9 bytes, takes about 50 ms, so a body of them
// would hold a function for its whole timeout. No keyword of a schema compares numbers past
// float64's range (about 1e±308) or precision (17 digits) meaningfully, so numbers beyond these
// bounds are refused before anything parses them.
const (
	// MaxSignificantDigits bounds the digits of a number's mantissa, as written, from its first
	// nonzero digit on: 12345678901234567890.5 has 21, 0.00012 has 2, 1000 has 4.
	MaxSignificantDigits = 40
	// MaxExponent bounds the exponent n of a number written d.ddd×10ⁿ (1e-999999 and 0.5e402
	// are past it, 9.9e400 is not), and of 0 its exponent as written: the validator cannot read
	// 0e99999999999999999999 at all.
	MaxExponent = 400
)

// CheckNumbers refuses the number literals of raw, a JSON text, that lie beyond the bounds
// (MaxSignificantDigits, MaxExponent), naming the first one's location as a JSON Pointer under
// at. It reads raw once (and, to name a number it refuses, the bytes before it again) and
// parses no number, so it costs what raw's bytes cost whatever they hold, and allocates nothing
// unless it refuses. raw need not be valid JSON: its parser refuses what is not.
func CheckNumbers(raw []byte, at string) []FieldError {
	for start, end := range literals(raw) {
		if problem := beyond(raw[start:end]); problem != "" {
			return []FieldError{{Path: at + pointerTo(raw, start), Message: problem}}
		}
	}
	return nil
}

// literals yields where each number literal of raw starts and ends, outside strings: every run
// of the characters a number is written with that starts with a minus or a digit.
func literals(raw []byte) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := 0; i < len(raw); {
			switch c := raw[i]; {
			case c == '"':
				i = stringEnd(raw, i)
			case c == '-' || isDigit(c):
				end := i + 1
				for end < len(raw) && (isDigit(raw[end]) || raw[end] == '.' || raw[end] == 'e' || raw[end] == 'E' || raw[end] == '+' || raw[end] == '-') {
					end++
				}
				if !yield(i, end) {
					return
				}
				i = end
			default:
				i++
			}
		}
	}
}

// stringEnd is where the string that opens at raw[i] ends (after its closing quote), or the end
// of raw when it does not close.
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// beyond says how the number literal lit lies beyond the bounds, or "" when it does not. It
// reads lit as JSON writes a number (-?int(.frac)?([eE][+-]?exp)?), ignoring whatever follows.
func beyond(lit []byte) string {
	j := 0
	if j < len(lit) && lit[j] == '-' {
		j++
	}
	// digits counts the mantissa's significant digits; lead is the exponent of the first, as
	// d.ddd×10^lead would write the mantissa.
	digits, lead := 0, 0
	for ; j < len(lit) && isDigit(lit[j]); j++ {
		if digits > 0 || lit[j] != '0' {
			digits++
		}
	}
	lead = digits - 1
	if j < len(lit) && lit[j] == '.' {
		j++
		for k := 1; j < len(lit) && isDigit(lit[j]); j, k = j+1, k+1 {
			if digits == 0 && lit[j] != '0' {
				lead = -k
			}
			if digits > 0 || lit[j] != '0' {
				digits++
			}
		}
	}
	if digits == 0 {
		lead = 0 // zero: its exponent as written
	}
	if digits > MaxSignificantDigits {
		return fmt.Sprintf("must have at most %d significant digits", MaxSignificantDigits)
	}
	exp, neg := 0, false
	if j < len(lit) && (lit[j] == 'e' || lit[j] == 'E') {
		j++
		if j < len(lit) && (lit[j] == '+' || lit[j] == '-') {
			neg = lit[j] == '-'
			j++
		}
		// |lead| is at most len(lit): an exponent past len(lit)+MaxExponent is beyond whatever
		// its further digits, so it stops growing there and never overflows.
		for ; j < len(lit) && isDigit(lit[j]); j++ {
			if exp <= len(lit)+MaxExponent {
				exp = exp*10 + int(lit[j]-'0')
			}
		}
	}
	if neg {
		exp = -exp
	}
	if n := lead + exp; n < -MaxExponent || n > MaxExponent {
		return fmt.Sprintf("must be 0 or have a decimal exponent from -%d to %d (as d.ddde±n)", MaxExponent, MaxExponent)
	}
	return ""
}

// pointerEscaper escapes a member name as a JSON Pointer's segment (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointerTo is the JSON Pointer of the value that starts at off in raw, read from the
// containers open there. It is read only for a refusal, and allocates.
func pointerTo(raw []byte, off int) string {
	type level struct {
		array   bool
		index   int
		key     []byte // the member's name as written, quotes included
		wantKey bool
	}
	var open []level
	for i := 0; i < off; {
		c := raw[i]
		if c == '"' {
			end := stringEnd(raw, i)
			if n := len(open); n > 0 && open[n-1].wantKey {
				open[n-1].key, open[n-1].wantKey = raw[i:end], false
			}
			i = end
			continue
		}
		n := len(open)
		switch {
		case c == '{' || c == '[':
			open = append(open, level{array: c == '[', wantKey: c == '{'})
		case (c == '}' || c == ']') && n > 0:
			open = open[:n-1]
		case c == ',' && n > 0 && open[n-1].array:
			open[n-1].index++
		case c == ',' && n > 0:
			open[n-1].wantKey = true
		}
		i++
	}
	var b strings.Builder
	for _, l := range open {
		b.WriteByte('/')
		if l.array {
			b.WriteString(strconv.Itoa(l.index))
			continue
		}
		var name string
		if json.Unmarshal(l.key, &name) != nil {
			name = strings.Trim(string(l.key), `"`)
		}
		b.WriteString(pointerEscaper.Replace(name))
	}
	return b.String()
}
