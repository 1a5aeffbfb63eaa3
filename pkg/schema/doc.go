package schema

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/xeipuuv/gojsonschema"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Doc is a JSON document parsed once, as the validator reads one (numbers as json.Number), so
// that a value checked against several schemas and read by the host's rules (an approval's
// action, its decidedBy, a clarification's answers) is parsed one time.
type Doc struct {
	v any
}

// Parse parses one JSON document.
func Parse(raw json.RawMessage) (*Doc, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("schema: more than one JSON document")
	}
	return &Doc{v: v}, nil
}

// Object is the document's members, if it is an object.
func (d *Doc) Object() (map[string]*Doc, bool) {
	m, ok := d.v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]*Doc, len(m))
	for k, v := range m {
		out[k] = &Doc{v: v}
	}
	return out, true
}

// String is the document's value, if it is a string.
func (d *Doc) String() (string, bool) {
	s, ok := d.v.(string)
	return s, ok
}

// parsed hands the validator a document parsed already: gojsonschema's own Go loader would
// encode the value and parse it again.
type parsed struct {
	gojsonschema.JSONLoader
	v any
}

func (p parsed) LoadJSON() (any, error) { return p.v, nil }

func (d *Doc) loader() gojsonschema.JSONLoader { return parsed{gojsonschema.NewGoLoader(d.v), d.v} }

// count is how many JSON values the document holds, as the validation budget counts them: one
// per scalar, array and object.
func (d *Doc) count() int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		n++
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(d.v)
	return n
}

// ValidateDoc is Validate of a parsed document.
func (s *Set) ValidateDoc(name string, d *Doc, at string) []interrupt.FieldError {
	res, err := s.embedded(name).Validate(d.loader())
	return report(res, err, at)
}

// Validate checks d against the inline schema, reporting paths under at. A document whose
// validation would exceed ValidationBudget is refused without running it.
func (in *Inline) Validate(d *Doc, at string) []interrupt.FieldError {
	if over := in.overBudget(d.count(), at); over != nil {
		return over
	}
	res, err := in.s.Validate(d.loader())
	return report(res, err, at)
}
