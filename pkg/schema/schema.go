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

// Set is the embedded schemas, compiled once, and the inline schemas compiled so far. It is safe
// for concurrent use.
type Set struct {
	once     sync.Once
	compiled map[string]*gojsonschema.Schema
	err      error
	inline   *inlineCache
}

// shared is the process's one Set.
var shared = &Set{inline: newInlineCache(512)}

// Load compiles the embedded schemas, once per process, and returns the shared Set.
func Load() (*Set, error) { return shared, shared.load() }

// Lazy is the shared Set with its embedded schemas compiled at their first use (2 ms), not now:
// a program that never validates (a function that only reads runs) then links no compiler, the
// gojsonschema package and the template package it formats errors with, which keep every
// exported method of the program linked: 3.7 MB of get-run's 11.9. The embedded schemas compile
// in every test run, so their first use cannot fail in a build that passed; if it does, it
// panics.
func Lazy() *Set { return shared }

// load compiles the embedded schemas the first time it is called.
func (s *Set) load() error {
	s.once.Do(func() { s.compiled, s.err = compileEmbedded() })
	return s.err
}

// embedded is the compiled embedded schema name.
func (s *Set) embedded(name string) *gojsonschema.Schema {
	if err := s.load(); err != nil {
		panic("schema: the embedded schemas do not compile: " + err.Error())
	}
	sch, ok := s.compiled[name]
	if !ok {
		panic("schema: unknown embedded schema " + name)
	}
	return sch
}

func compileEmbedded() (map[string]*gojsonschema.Schema, error) {
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
	compiled := map[string]*gojsonschema.Schema{}
	for _, name := range names {
		s, err := loader.Compile(gojsonschema.NewReferenceLoader(BaseURI + name))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		compiled[name] = s
	}
	return compiled, nil
}

// Validate checks doc against the embedded schema name. Failures are reported with paths
// prefixed by at, the JSON Pointer of doc inside the request body.
func (s *Set) Validate(name string, doc json.RawMessage, at string) []interrupt.FieldError {
	return run(s.embedded(name), doc, at)
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
