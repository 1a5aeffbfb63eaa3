package clientgen_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/infra/local/clientgen"
)

// TestBundle: the bundle of openapi.yaml is one OpenAPI 3.0.3 document: every reference is to a
// component it holds, no schema uses what 3.0 lacks (const, type lists, boolean schemas,
// conditionals), integers have their size (a timeoutMs of a year is no int32), and every
// operation of the document is in it.
func TestBundle(t *testing.T) {
	t.Parallel()
	raw, err := clientgen.Bundle("../../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.0.3" || doc["webhooks"] != nil {
		t.Errorf("openapi %v, webhooks %v", doc["openapi"], doc["webhooks"] != nil)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var schema, document func(v any, at string)
	// schema checks v, a Schema Object, and the schemas it holds.
	schema = func(v any, at string) {
		n, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s: %v is no 3.0 schema", at, v)
			return
		}
		for k, c := range n {
			switch k {
			case "$ref":
				name, _ := strings.CutPrefix(c.(string), "#/components/schemas/")
				if _, held := schemas[name]; !held {
					t.Errorf("%s: reference %v", at, c)
				}
			case "const", "if", "then", "else", "$schema", "definitions", "prefixItems", "patternProperties":
				t.Errorf("%s: %s in a 3.0 schema", at, k)
			case "type":
				if _, list := c.([]any); list {
					t.Errorf("%s: a list of types", at)
				}
			case "items", "not":
				schema(c, at+"/"+k)
			case "additionalProperties":
				if _, flag := c.(bool); !flag {
					schema(c, at+"/"+k)
				}
			case "allOf", "anyOf", "oneOf":
				for i, sub := range c.([]any) {
					schema(sub, fmt.Sprintf("%s/%s/%d", at, k, i))
				}
			case "properties":
				for name, p := range c.(map[string]any) {
					schema(p, at+"/properties/"+name)
				}
			}
		}
		if n["type"] == "integer" && n["format"] == nil {
			t.Errorf("%s: an integer without format", at)
		}
	}
	// document finds the schemas of the rest of the document: every "schema" member holds one.
	document = func(v any, at string) {
		switch n := v.(type) {
		case []any:
			for i, c := range n {
				document(c, fmt.Sprintf("%s/%d", at, i))
			}
		case map[string]any:
			for k, c := range n {
				if k == "schema" {
					schema(c, at+"/schema")
				} else {
					document(c, at+"/"+k)
				}
			}
		}
	}
	for name, s := range schemas {
		schema(s, "#/components/schemas/"+name)
	}
	document(doc["paths"], "#/paths")
	document(doc["components"].(map[string]any)["parameters"], "#/components/parameters")
	document(doc["components"].(map[string]any)["responses"], "#/components/responses")
	timeout := schemas["SuspendRequest"].(map[string]any)["properties"].(map[string]any)["timeoutMs"].(map[string]any)
	if timeout["format"] != "int64" {
		t.Errorf("timeoutMs: %v", timeout)
	}
	ops, err := clientgen.Operations("../../../openapi.yaml")
	if err != nil || len(ops) < 29 || !strings.Contains(string(raw), `"operationId": "requestInterrupt"`) {
		t.Errorf("operations %v %v", ops, err)
	}
}

// TestBundleRefusesAnUntaggedOperation: openapi-generator files untagged operations under one
// default API, each overwriting the last, so the bundle refuses one, naming it.
func TestBundleRefusesAnUntaggedOperation(t *testing.T) {
	t.Parallel()
	if _, err := clientgen.Bundle("testdata/untagged.yaml"); err == nil || !strings.Contains(err.Error(), "POST /b has no tag") {
		t.Errorf("got %v, want POST /b refused", err)
	}
}
