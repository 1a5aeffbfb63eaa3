// Package schema validates JSON against the protocol's embedded schemas and against the inline
// schemas that interrupts declare (resumeSchema, outcomeSchema, a question's schema), turning
// failures into client-safe field errors addressed by JSON Pointer.
package schema

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/xeipuuv/gojsonschema"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/schemas"
)

// BaseURI is the $id prefix of the embedded schemas; cross-document $refs resolve under it and
// never leave the binary.
const BaseURI = "https://schemas.interrupthost.dev/"

// Embedded document names, relative to BaseURI.
const (
	SuspendRequest   = "v2/suspend-request.schema.json"
	RunEventPayloads = "v2/run-event-payloads.schema.json"
	ApprovalResume   = "v2/approval-resume.schema.json"
	InterruptFacet   = "v2/facets/interrupt.schema.json"
)

// Set is the embedded schemas, compiled. It is safe for concurrent use.
type Set struct {
	compiled map[string]*gojsonschema.Schema
	inline   *inlineCache
}

// Load compiles the embedded schemas once per process and returns the shared Set. It is a
// function over a sync.Once rather than a sync.OnceValues variable, which would be built at
// init and link the compiler into every program that imports the package.
func Load() (*Set, error) {
	loaded.once.Do(func() { loaded.set, loaded.err = compileEmbedded() })
	return loaded.set, loaded.err
}

var loaded struct {
	once sync.Once
	set  *Set
	err  error
}

func compileEmbedded() (*Set, error) {
	loader := gojsonschema.NewSchemaLoader()
	names := []string{SuspendRequest, RunEventPayloads, ApprovalResume, InterruptFacet}
	for _, name := range names {
		raw, err := fs.ReadFile(schemas.FS, name)
		if err != nil {
			return nil, err
		}
		if err := loader.AddSchemas(gojsonschema.NewBytesLoader(raw)); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
	}
	set := &Set{compiled: map[string]*gojsonschema.Schema{}, inline: newInlineCache(512)}
	for _, name := range names {
		s, err := loader.Compile(gojsonschema.NewReferenceLoader(BaseURI + name))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		set.compiled[name] = s
	}
	return set, nil
}

// Validate checks doc against the embedded schema name. Failures are reported with paths
// prefixed by at, the JSON Pointer of doc inside the request body.
func (s *Set) Validate(name string, doc json.RawMessage, at string) []interrupt.FieldError {
	sch, ok := s.compiled[name]
	if !ok {
		panic("schema: unknown embedded schema " + name)
	}
	return run(sch, doc, at)
}

// Inline is a schema declared by an interrupt, compiled, with its cost per document value.
type Inline struct {
	s     *gojsonschema.Schema
	nodes int
}

// overBudget refuses a document of n values whose validation would exceed ValidationBudget.
func (in *Inline) overBudget(n int, at string) []interrupt.FieldError {
	if n*in.nodes <= ValidationBudget {
		return nil
	}
	return []interrupt.FieldError{{Path: at, Message: fmt.Sprintf(
		"is too large to check against the interrupt's schema: %d values against %d schema objects exceed the host's budget of %d", n, in.nodes, ValidationBudget)}}
}

// Compile compiles an inline schema, reusing an earlier compilation of the same bytes. A schema
// the host will not run (a reference outside it, recursion, over the limits) is an *Error.
func (s *Set) Compile(raw json.RawMessage) (*Inline, error) {
	sum := sha256.Sum256(raw)
	if in := s.inline.get(sum); in != nil {
		return in, nil
	}
	if len(raw) > MaxInlineBytes {
		return nil, &Error{Message: fmt.Sprintf("is larger than %d bytes", MaxInlineBytes)}
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	c, err := analyse(doc)
	if err != nil {
		return nil, err
	}
	if err := checkKeywords(doc); err != nil {
		return nil, err
	}
	sch, err := gojsonschema.NewSchema(gojsonschema.NewGoLoader(doc))
	if err != nil {
		return nil, err
	}
	in := &Inline{s: sch, nodes: c.nodes}
	s.inline.put(sum, in)
	return in, nil
}

// wrappers are gojsonschema's summary errors, which repeat the leaf errors beneath them.
var wrappers = map[string]bool{
	"condition_then": true, "condition_else": true, "number_all_of": true,
}

func run(sch *gojsonschema.Schema, doc json.RawMessage, at string) []interrupt.FieldError {
	res, err := sch.Validate(gojsonschema.NewBytesLoader(doc))
	return report(res, err, at)
}

// report is a validation's failures, each with its path under at.
func report(res *gojsonschema.Result, err error, at string) []interrupt.FieldError {
	if err != nil {
		return []interrupt.FieldError{{Path: at, Message: "is not valid JSON"}}
	}
	if res.Valid() {
		return nil
	}
	var out []interrupt.FieldError
	for _, e := range res.Errors() {
		if wrappers[e.Type()] {
			continue
		}
		out = append(out, interrupt.FieldError{Path: pointer(at, e), Message: e.Description()})
	}
	return out
}

// pointer turns a gojsonschema context into a JSON Pointer. Required and additional-property
// errors are reported on the object; the pointer names the property itself, so that a client
// learns which field is missing or unknown.
func pointer(at string, e gojsonschema.ResultError) string {
	const sep = "\x00"
	segments := strings.Split(e.Context().String(sep), sep)[1:] // drop "(root)"
	switch e.Type() {
	case "required", "additional_property_not_allowed":
		if p, ok := e.Details()["property"].(string); ok {
			segments = append(segments, p)
		}
	}
	var b strings.Builder
	b.WriteString(at)
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(PointerEscape(s))
	}
	return b.String()
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// PointerEscape escapes one JSON Pointer segment (RFC 6901), for callers that build paths to
// values the schemas do not reach.
func PointerEscape(segment string) string { return pointerEscaper.Replace(segment) }

// inlineCache bounds the memory that callers' schemas can take in a warm process.
type inlineCache struct {
	mu  sync.Mutex
	max int
	m   map[[32]byte]*Inline
}

func newInlineCache(max int) *inlineCache {
	return &inlineCache{max: max, m: map[[32]byte]*Inline{}}
}

func (c *inlineCache) get(k [32]byte) *Inline {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *inlineCache) put(k [32]byte, in *Inline) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = in
}
