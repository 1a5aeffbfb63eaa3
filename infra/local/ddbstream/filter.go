package ddbstream

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// Filter is a Lambda event filter pattern over stream records, in the subset the template uses:
// objects match members recursively, and an array lists the accepted values of a scalar (equal
// strings, numbers or booleans, or {"prefix": "..."}).
type Filter struct {
	pattern map[string]any
}

// ParseFilter reads a pattern, refusing what this subset cannot evaluate (rather than letting
// through records Lambda would not).
func ParseFilter(pattern string) (Filter, error) {
	var p map[string]any
	if err := json.Unmarshal([]byte(pattern), &p); err != nil {
		return Filter{}, fmt.Errorf("ddbstream: filter %s: %w", pattern, err)
	}
	if err := check(p); err != nil {
		return Filter{}, fmt.Errorf("ddbstream: filter %s: %w", pattern, err)
	}
	return Filter{pattern: p}, nil
}

func check(p map[string]any) error {
	for k, v := range p {
		switch v := v.(type) {
		case map[string]any:
			if err := check(v); err != nil {
				return err
			}
		case []any:
			for _, alt := range v {
				if m, ok := alt.(map[string]any); ok {
					if _, isPrefix := m["prefix"].(string); !isPrefix || len(m) != 1 {
						return fmt.Errorf("%s: only {\"prefix\": ...} is understood locally", k)
					}
				}
			}
		default:
			return fmt.Errorf("%s: a pattern value is an object or an array", k)
		}
	}
	return nil
}

// Match reports whether r passes the filter. The record's images are encoded only when the
// pattern reads them: they carry the commits' payloads, and every consumer of the stream
// matches every record.
func (f Filter) Match(r events.DynamoDBEventRecord) bool {
	dynamodb, _ := f.pattern["dynamodb"].(map[string]any)
	if _, reads := dynamodb["NewImage"]; !reads {
		r.Change.NewImage = nil
	}
	if _, reads := dynamodb["OldImage"]; !reads {
		r.Change.OldImage = nil
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return false
	}
	var doc map[string]any
	if json.Unmarshal(raw, &doc) != nil {
		return false
	}
	return match(f.pattern, doc)
}

func match(p map[string]any, doc map[string]any) bool {
	for k, want := range p {
		got, present := doc[k]
		switch want := want.(type) {
		case map[string]any:
			sub, ok := got.(map[string]any)
			if !present || !ok || !match(want, sub) {
				return false
			}
		case []any:
			if !present || !anyOf(want, got) {
				return false
			}
		}
	}
	return true
}

func anyOf(alts []any, got any) bool {
	for _, alt := range alts {
		if m, ok := alt.(map[string]any); ok {
			s, isString := got.(string)
			if isString && strings.HasPrefix(s, m["prefix"].(string)) {
				return true
			}
			continue
		}
		if alt == got {
			return true
		}
	}
	return false
}
