package clientcheck_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/interrupthost/interrupthost/client"
)

// TestTheClientSendsEveryRequestMember: the body client.RequestWith sends, every field set, has
// exactly the members openapi.yaml defines for request-interrupt, nested ones too (the payload
// is opaque): a member the document adds is one the client must send.
func TestTheClientSendsEveryRequestMember(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	at := func(v any, path ...string) any {
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		return v
	}
	body := at(doc, "paths", "/runs/{runId}/interrupts", "post", "requestBody", "content", "application/json", "schema")
	var documented []string
	var walk func(schema any, prefix string)
	walk = func(schema any, prefix string) {
		s, _ := schema.(map[string]any)
		if ref, ok := s["$ref"].(string); ok {
			name, local := strings.CutPrefix(ref, "#/components/schemas/")
			if !local {
				return // an external schema (the payload's) is opaque here
			}
			walk(at(doc, "components", "schemas", name), prefix)
			return
		}
		if all, ok := s["allOf"].([]any); ok {
			for _, sub := range all {
				walk(sub, prefix)
			}
		}
		if items, ok := s["items"]; ok {
			walk(items, prefix+"[]")
		}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			documented = append(documented, prefix+"/"+name)
			walk(p, prefix+"/"+name)
		}
	}
	walk(body, "")
	slices.Sort(documented)
	var r client.InterruptRequest
	fill(reflect.ValueOf(&r).Elem())
	sent, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	// The payload and a tool call's arguments are opaque objects.
	got := slices.DeleteFunc(memberSet(t, sent), func(m string) bool {
		return strings.HasPrefix(m, "/payload/") || strings.HasPrefix(m, "/toolCall/arguments/")
	})
	if !slices.Equal(got, documented) {
		t.Errorf("the client sends %v,\nopenapi.yaml defines %v", got, documented)
	}
}
