package apigw

import (
	"strings"
	"testing"
)

func TestStrictJSON(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	cases := []struct {
		body  string
		valid bool
	}{
		{`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`, true},
		{`{"a":1,"a":2}`, false},
		{`{"a":{"b":1,"b":1}}`, false},
		{`{"a":[{"k":1,"k":2}]}`, false},
		{`{"a":"x","b":["a","a"]}`, true},
		{`{"k":{"k":{"k":1}}}`, true},
		{`{"a":[],"a":{}}`, false},
		{ok, true},
		{deep, false},
		{"{\"a\":\"\xff\"}", false},
		{`{"a":`, false},
		{`{"a":1} {"a":2}`, false},
		{`[1,2`, false},
	}
	for _, c := range cases {
		if _, err := StrictJSON([]byte(c.body)); (err == nil) != c.valid {
			t.Errorf("StrictJSON(%.40q) = %v, want valid=%v", c.body, err, c.valid)
		}
	}
}
