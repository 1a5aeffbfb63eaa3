package interrupt

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"slices"
	"strings"
	"testing"
)

// Literals past the bounds, as a probe sent them, and ordinary ones.
var (
	tooSmall   = "1e-999999"
	tooLarge   = "1E+99999999999"
	tooPrecise = "-0." + strings.Repeat("0", 50) + strings.Repeat("123456789", 6)
	ordinary   = []string{"0", "-1", "3.14", "1e300", "12345678901234567890", "-0." + strings.Repeat("0", 50) + "1", "2.0", "1.5e-7"}
)

func TestBeyond(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lit    string
		refuse bool
	}{
		{tooSmall, true},
		{tooLarge, true},
		{tooPrecise, true},
		{"9.99e400", false},
		{"99e399", false},
		{"1e401", true},
		{"0.1e401", false},
		{"0.1e402", true},
		{"0.01e402", false},
		{"1e-400", false},
		{"0.1e-400", true},
		{"100e-402", false},
		{"1" + strings.Repeat("0", 400), true}, // 401 significant digits as written
		{strings.Repeat("9", MaxSignificantDigits), false},
		{strings.Repeat("9", MaxSignificantDigits+1), true},
		{"0." + strings.Repeat("0", 399) + "1", false},
		{"0." + strings.Repeat("0", 400) + "1", true},
		{"0e-999999999999999999999", true},
		{"0E10000000000000000000", true},
		{"-0.0000e99999", true},
		{"0e400", false},
		{"-0.0e-401", true},
		{"0." + strings.Repeat("0", 1000), false},
		{"1e" + strings.Repeat("9", 10000), true},
		{"1e-" + strings.Repeat("0", 10000) + "5", false},
		{"-", false},
		{"1.", false},
		{"1e", false},
	}
	for _, lit := range ordinary {
		tests = append(tests, struct {
			lit    string
			refuse bool
		}{lit, false})
	}
	for _, tt := range tests {
		if got := beyond([]byte(tt.lit)); (got != "") != tt.refuse {
			t.Errorf("beyond(%.60s) = %q, want refused %v", tt.lit, got, tt.refuse)
		}
	}
}

// TestCheckNumbers: the first number beyond the bounds is named by its JSON Pointer, wherever
// it is; numbers in strings, escaped quotes included, are not numbers.
func TestCheckNumbers(t *testing.T) {
	t.Parallel()
	many := "[" + strings.Repeat(tooSmall+",", 299) + tooSmall + "]"
	tests := []struct {
		name, doc, at, path string
	}{
		{"ordinary", `{"a":[` + strings.Join(ordinary, ",") + `],"b":{"c":-1}}`, "", ""},
		{"itemIds", `{"resumeValue":{"action":"refine","refineFeedback":{"scope":"items","itemIds":` + many + `}}}`, "", "/resumeValue/refineFeedback/itemIds/0"},
		{"third item", `{"itemIds":["a",2,{"x":"1e-999999"},` + tooSmall + `]}`, "", "/itemIds/3"},
		{"after a string with escaped quotes", `{"s":"\" 1e-999999 \\","n":` + tooLarge + `}`, "", "/n"},
		{"in a string only", `{"s":"1e-999999","t":["` + tooPrecise + `"]}`, "", ""},
		{"a member name to escape", `{"a/b":{"c~d":[0,{"\u00e9":` + tooSmall + `}]}}`, "", "/a~1b/c~0d/1/é"},
		{"under at", `{"x":` + tooLarge + `}`, "/resumeValue", "/resumeValue/x"},
		{"the document itself", tooSmall, "/ttlMs", "/ttlMs"},
		{"after closed containers", `{"a":{"b":[1,2]},"c":[[],{}],"d":` + tooSmall + `}`, "", "/d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fields := CheckNumbers([]byte(tt.doc), tt.at)
			switch {
			case tt.path == "" && fields != nil:
				t.Errorf("refused %v", fields)
			case tt.path != "" && (len(fields) != 1 || fields[0].Path != tt.path || fields[0].Message == ""):
				t.Errorf("%v, want one field at %s", fields, tt.path)
			}
		})
	}
}

// TestCheckNumbersAllocatesNothing: accepting a body costs no allocation, whatever it holds.
func TestCheckNumbersAllocatesNothing(t *testing.T) {
	doc := []byte(`{"a":[` + strings.Join(ordinary, ",") + `],"s":"x\"1e-999999"}`)
	if n := testing.AllocsPerRun(100, func() { CheckNumbers(doc, "") }); n != 0 {
		t.Errorf("%v allocations per check", n)
	}
}

// TestIntegerRefusesBeforeParsing: an Integer past the bounds is not an integer, refused at
// once.
func TestIntegerRefusesBeforeParsing(t *testing.T) {
	t.Parallel()
	for _, lit := range []string{tooSmall, tooLarge, tooPrecise, "1e-99999", "0e99999999999999999999"} {
		var n Integer
		var typeErr *json.UnmarshalTypeError
		if err := json.Unmarshal([]byte(lit), &n); !errors.As(err, &typeErr) {
			t.Errorf("%.30s: %v", lit, err)
		}
	}
	for lit, want := range map[string]Integer{"0e-400": 0, "60000.0": 60000, "6e4": 60000, "-1": -1} {
		var n Integer
		if err := json.Unmarshal([]byte(lit), &n); err != nil || n != want {
			t.Errorf("%s: %d %v, want %d", lit, n, err, want)
		}
	}
}

// BenchmarkCheckNumbers: a 128 KB body of ordinary numbers whose last one is beyond the bounds,
// read whole and its pointer found; and one of 1e-999999, refused at its first.
func BenchmarkCheckNumbers(b *testing.B) {
	for _, bb := range []struct {
		name string
		doc  []byte
	}{
		{"last of 128 KB", fill(128<<10, "3.14159", tooSmall)},
		{"128 KB of 1e-999999", fill(128<<10, tooSmall, tooSmall)},
	} {
		doc := bb.doc
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if CheckNumbers(doc, "") == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}

// fill is {"itemIds":[lit,lit,...,last]} of about n bytes.
func fill(n int, lit, last string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"itemIds":[`)
	for b.Len()+len(lit)+len(last)+3 < n {
		b.WriteString(lit + ",")
	}
	b.WriteString(last + "]}")
	return b.Bytes()
}

var (
	smallest = new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(MaxExponent), nil))
	largest  = new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(MaxExponent+1), nil))
)

// FuzzCheckNumbers: no input panics the scanner; in valid JSON its literals are encoding/json's
// numbers, in order, and each one it accepts is 0 or of a magnitude within the bounds, with at
// most MaxSignificantDigits digits.
func FuzzCheckNumbers(f *testing.F) {
	f.Add([]byte(`{"a":[0,-1,3.14,1e300,12345678901234567890],"s":"\"1e-999999\\"}`))
	f.Add([]byte(`[` + tooSmall + `,` + tooLarge + `,` + tooPrecise + `]`))
	f.Add([]byte(`{"resumeValue":{"refineFeedback":{"itemIds":[` + strings.Repeat(tooSmall+",", 299) + tooSmall + `]}}}`))
	f.Add([]byte(`["\u0022",-0.0e-0,1E+2,"\\",{"\"":-9.99e400}]`))
	f.Add([]byte(`{"a":-`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		fields := CheckNumbers(doc, "")
		if fields != nil && (len(fields) != 1 || fields[0].Path != "" && !strings.HasPrefix(fields[0].Path, "/")) {
			t.Fatalf("fields %v", fields)
		}
		if !json.Valid(doc) {
			return
		}
		var want []string
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("a valid document's token: %v", err)
			}
			if n, ok := tok.(json.Number); ok {
				want = append(want, n.String())
			}
		}
		var got []string
		for start, end := range literals(doc) {
			got = append(got, string(doc[start:end]))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("literals %q, encoding/json's numbers %q", got, want)
		}
		refused := false
		for _, lit := range got {
			if beyond([]byte(lit)) != "" {
				refused = true
				continue
			}
			r, ok := new(big.Rat).SetString(lit)
			if !ok {
				t.Fatalf("%s: accepted, not a number to big.Rat", lit)
			}
			if abs := r.Abs(r); abs.Sign() != 0 && (abs.Cmp(smallest) < 0 || abs.Cmp(largest) >= 0) {
				t.Fatalf("%.60s: accepted, beyond the bounds", lit)
			}
			mantissa, _, _ := strings.Cut(strings.ToLower(strings.TrimPrefix(lit, "-")), "e")
			if digits := strings.TrimLeft(strings.ReplaceAll(mantissa, ".", ""), "0"); len(digits) > MaxSignificantDigits {
				t.Fatalf("%.60s: accepted, %d significant digits", lit, len(digits))
			}
		}
		if refused != (fields != nil) {
			t.Fatalf("a literal refused: %v; the document refused: %v", refused, fields)
		}
	})
}

// TestArgumentsAreExact: a call's arguments are refused where a number would be compared as
// another (RFC 8785 reads numbers as doubles), and digested as values otherwise.
func TestArgumentsAreExact(t *testing.T) {
	t.Parallel()
	for args, refused := range map[string]string{
		`{"id":9007199254740993}`:                "/arguments/id",
		`{"a":[1,1.00000000000000000001]}`:       "/arguments/a/1",
		`{"n":1e400}`:                            "/arguments/n",
		`{"id":9007199254740992,"x":0.1,"y":-0}`: "",
		`{"amount":1.24e5,"nested":{"z":12.50}}`: "",
	} {
		f := CheckArguments(json.RawMessage(args), "/arguments")
		switch {
		case refused == "" && f != nil:
			t.Errorf("%s refused: %+v", args, f)
		case refused != "" && (f == nil || f.Path != refused):
			t.Errorf("%s: %+v, want a refusal at %s", args, f, refused)
		}
	}
	a, _ := ArgumentsDigest(json.RawMessage(`{"b":124000,"a":"x"}`))
	b, _ := ArgumentsDigest(json.RawMessage(` { "a" : "x", "b" : 1.24e5 } `))
	if a != b || len(a) != 64 {
		t.Errorf("one value, two digests: %s %s", a, b)
	}
}
