package schema

import (
	"fmt"
	"slices"
	"strings"
)

// The JSON Schema drafts an inline schema may declare, as gojsonschema implements them: draft 4,
// 6 and 7. A schema without $schema is read with the keywords of all three (gojsonschema's hybrid
// mode, which draft 7 schemas are read by in practice).
var drafts = map[string]int{
	"json-schema.org/draft-04/schema": 4,
	"json-schema.org/draft-06/schema": 6,
	"json-schema.org/draft-07/schema": 7,
}

// canonicalDraft is the $schema gojsonschema recognises for a draft: its own spelling, over http.
func canonicalDraft(draft int) string {
	return fmt.Sprintf("http://json-schema.org/draft-%02d/schema#", draft)
}

// laterKeywords are keywords of drafts after 7 (2019-09, 2020-12) that gojsonschema does not
// know and would skip: a schema using one would be read as allowing what its author meant to
// refuse, so it is refused instead.
var laterKeywords = []string{
	"prefixItems", "dependentRequired", "dependentSchemas", "unevaluatedItems", "unevaluatedProperties",
	"minContains", "maxContains", "contentSchema", "$anchor", "$dynamicRef", "$dynamicAnchor",
	"$recursiveRef", "$recursiveAnchor", "$vocabulary",
}

// sinceDraft are the keywords gojsonschema honours only from a draft on: under an older declared
// draft it would skip them.
var sinceDraft = map[string]int{
	"const": 6, "contains": 6, "propertyNames": 6,
	"if": 7, "then": 7, "else": 7,
}

// Where a value sits in a schema: a schema (its members are keywords), a map of names to
// schemas (properties, definitions), or data (enum, const, default, examples), which is never
// read as a schema.
type position int

const (
	atSchema position = iota
	atNames
	atData
)

// childPosition is where the value of keyword k of a schema sits.
func childPosition(k string) position {
	switch k {
	case "properties", "patternProperties", "definitions", "$defs", "dependencies":
		return atNames
	case "enum", "const", "default", "examples":
		return atData
	}
	return atSchema
}

// declaredDraft reads the root's $schema: the draft it names (0 when none is declared), with the
// spelling gojsonschema recognises written back into root, or the *Error that refuses it.
func declaredDraft(root map[string]any) (int, error) {
	v, ok := root["$schema"]
	if !ok {
		return 0, nil
	}
	s, _ := v.(string)
	name := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://"), "#")
	draft, known := drafts[name]
	if !known || name == s {
		return 0, &Error{Pointer: "/$schema", Message: fmt.Sprintf("declares %q: the host validates JSON Schema drafts 4, 6 and 7 only (declare one of them, or none for draft 7)", s)}
	}
	root["$schema"] = canonicalDraft(draft)
	return draft, nil
}

// checkKeywords refuses a schema gojsonschema would read other than as written: a $schema of a
// draft it does not implement, or one anywhere but the root, and keywords it would skip (of a
// later draft, or newer than the draft declared).
func checkKeywords(doc any) error {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	draft, err := declaredDraft(root)
	if err != nil {
		return err
	}
	return keywordsOf(root, "", atSchema, draft)
}

func keywordsOf(node any, at string, pos position, draft int) error {
	switch v := node.(type) {
	case []any:
		for i, child := range v {
			if err := keywordsOf(child, fmt.Sprintf("%s/%d", at, i), pos, draft); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, child := range v {
			here := at + "/" + PointerEscape(k)
			next := atSchema
			switch pos {
			case atData:
				continue
			case atSchema:
				if err := keyword(k, here, at == "", draft); err != nil {
					return err
				}
				next = childPosition(k)
			}
			if err := keywordsOf(child, here, next, draft); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyword refuses keyword k of a schema object at here when gojsonschema would skip it.
func keyword(k, here string, root bool, draft int) error {
	switch since, ok := sinceDraft[k]; {
	case k == "$schema" && !root:
		return &Error{Pointer: here, Message: "only the root of an inline schema may declare $schema"}
	case slices.Contains(laterKeywords, k):
		return &Error{Pointer: here, Message: fmt.Sprintf("%s is a keyword of JSON Schema 2019-09 or 2020-12, which the host does not implement: it validates drafts 4, 6 and 7", k)}
	case ok && draft != 0 && draft < since:
		return &Error{Pointer: here, Message: fmt.Sprintf("%s is not a keyword of draft %d, which the schema declares: declare draft %d or later", k, draft, since)}
	}
	return nil
}
