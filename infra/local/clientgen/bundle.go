// Package clientgen turns openapi.yaml into the one document client generators read: OpenAPI
// 3.0.3 in one file. The published document is OpenAPI 3.1 and refers to the spec's JSON Schema
// files (draft 7), which generators handle badly or not at all: oapi-codegen reads 3.0 only and
// no external references, openapi-generator misreads draft 7's conditionals. The bundle inlines
// every referenced schema as a component of its own and writes each schema in the subset of JSON
// Schema OpenAPI 3.0 defines. It is lossy for validation (conditionals, draft 7's numeric
// exclusive bounds become what 3.0 says), never for the shapes a client builds: the host, not a
// generated client, validates requests.
package clientgen

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Bundle reads the OpenAPI document at file and returns its bundle, JSON encoded.
func Bundle(file string) ([]byte, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("clientgen: %s: %w", file, err)
	}
	b := &bundler{dir: filepath.Dir(file), files: map[string]any{}, hoisted: map[string]string{}}
	components, _ := doc["components"].(map[string]any)
	if components == nil {
		components = map[string]any{}
		doc["components"] = components
	}
	b.schemas, _ = components["schemas"].(map[string]any)
	if b.schemas == nil {
		b.schemas = map[string]any{}
		components["schemas"] = b.schemas
	}
	if err := checkTags(doc); err != nil {
		return nil, err
	}
	// 3.0 has no webhooks: they are the host's calls to receivers, no client's to make.
	delete(doc, "webhooks")
	delete(doc, "jsonSchemaDialect")
	doc["openapi"] = "3.0.3"
	if info, ok := doc["info"].(map[string]any); ok {
		delete(info, "summary")
		if license, ok := info["license"].(map[string]any); ok {
			delete(license, "identifier")
		}
	}
	for name, s := range b.schemas {
		if b.schemas[name], err = b.schema(s, "", ""); err != nil {
			return nil, fmt.Errorf("clientgen: components/schemas/%s: %w", name, err)
		}
	}
	for k, v := range doc {
		if k == "components" {
			for ck, cv := range components {
				if ck != "schemas" {
					if components[ck], err = b.document(cv); err != nil {
						return nil, err
					}
				}
			}
			continue
		}
		if doc[k], err = b.document(v); err != nil {
			return nil, err
		}
	}
	return json.MarshalIndent(doc, "", "  ")
}

// Operations are the operationIds of the document's paths, sorted: the operations a generated
// client must have.
func Operations(file string) ([]string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("clientgen: %s: %w", file, err)
	}
	var ids []string
	for _, item := range doc.Paths {
		for method, op := range item {
			if id, _ := asMap(op)["operationId"].(string); slices.Contains(methods, method) && id != "" {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return ids, nil
}

var methods = []string{"get", "put", "post", "delete", "patch", "head", "options"}

// checkTags refuses an operation without a tag: openapi-generator files untagged operations
// under one default API, where each overwrites the last.
func checkTags(doc map[string]any) error {
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			if !slices.Contains(methods, method) {
				continue
			}
			if o, _ := op.(map[string]any); len(asSlice(o["tags"])) == 0 {
				return fmt.Errorf("clientgen: %s %s has no tag", strings.ToUpper(method), p)
			}
		}
	}
	return nil
}

type bundler struct {
	dir     string
	schemas map[string]any
	// files are the JSON Schema files read, by path relative to dir.
	files map[string]any
	// hoisted names the component made for each file#pointer.
	hoisted map[string]string
}

// document walks the OpenAPI document outside components/schemas: every "schema" member holds a
// schema.
func (b *bundler) document(v any) (any, error) {
	switch n := v.(type) {
	case map[string]any:
		for k, child := range n {
			var err error
			if k == "schema" {
				n[k], err = b.schema(child, "", "")
			} else {
				n[k], err = b.document(child)
			}
			if err != nil {
				return nil, err
			}
		}
	case []any:
		for i, child := range n {
			var err error
			if n[i], err = b.document(child); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// schema writes s, a JSON Schema of file (relative to dir; "" for openapi.yaml itself), as an
// OpenAPI 3.0 Schema Object. at is s's pointer in its file, for errors.
func (b *bundler) schema(s any, file, at string) (any, error) {
	switch v := s.(type) {
	case bool:
		if v {
			return map[string]any{}, nil
		}
		return map[string]any{"not": map[string]any{}}, nil
	case map[string]any:
		return b.object(v, file, at)
	}
	return nil, fmt.Errorf("%s#%s is no schema", file, at)
}

// Keywords of JSON Schema that OpenAPI 3.0 lacks and that shape nothing a client builds.
var dropped = []string{"$schema", "$id", "$comment", "definitions", "$defs", "if", "then", "else",
	"contains", "propertyNames", "dependencies", "patternProperties", "additionalItems", "examples"}

func (b *bundler) object(s map[string]any, file, at string) (any, error) {
	if ref, ok := s["$ref"].(string); ok {
		name, err := b.ref(ref, file)
		if err != nil {
			return nil, fmt.Errorf("%s#%s: %w", file, at, err)
		}
		// 3.0 ignores whatever sits beside $ref.
		return map[string]any{"$ref": "#/components/schemas/" + name}, nil
	}
	out := map[string]any{}
	for k, v := range s {
		if slices.Contains(dropped, k) {
			continue
		}
		here := at + "/" + k
		var err error
		switch k {
		case "properties":
			props := map[string]any{}
			for name, p := range asMap(v) {
				if props[name], err = b.schema(p, file, here+"/"+name); err != nil {
					return nil, err
				}
			}
			out[k] = props
		case "items":
			if _, tuple := v.([]any); tuple {
				out[k] = map[string]any{} // 3.0 has no tuples
				continue
			}
			out[k], err = b.schema(v, file, here)
		case "additionalProperties", "not":
			out[k], err = b.schema(v, file, here)
		case "allOf", "anyOf", "oneOf":
			var list []any
			for i, sub := range asSlice(v) {
				c, err := b.schema(sub, file, fmt.Sprintf("%s/%d", here, i))
				if err != nil {
					return nil, err
				}
				if m, ok := c.(map[string]any); !ok || len(m) > 0 {
					list = append(list, c)
				}
			}
			if len(list) > 0 {
				out[k] = list
			}
		case "const":
			out["enum"] = []any{v}
		case "type":
			types := asSlice(v)
			if types == nil {
				out[k] = v
				continue
			}
			nonNull := slices.DeleteFunc(slices.Clone(types), func(t any) bool { return t == "null" })
			if len(nonNull) < len(types) {
				out["nullable"] = true
			}
			if len(nonNull) == 1 {
				out[k] = nonNull[0] // several types: any value, as 3.0 cannot say more
			}
		case "exclusiveMinimum", "exclusiveMaximum":
			// Draft 7's bound is the number; 3.0's is a flag beside minimum or maximum.
			if _, flag := v.(bool); flag {
				out[k] = v
			} else {
				out[strings.Replace(strings.TrimPrefix(k, "exclusive"), "M", "m", 1)] = v
				out[k] = true
			}
		default:
			out[k] = v
		}
		if err != nil {
			return nil, err
		}
	}
	// An integer's size: Go's int32 cannot hold a timeoutMs of a year.
	if out["type"] == "integer" && out["format"] == nil {
		out["format"] = "int64"
	}
	return out, nil
}

// ref is the component a reference stands for, made on first use: a reference within
// openapi.yaml's components as it is, any other target (in a schema file, or below a component)
// hoisted into a component of its own.
func (b *bundler) ref(ref, file string) (string, error) {
	target, pointer, _ := strings.Cut(ref, "#")
	if target == "" {
		target = file
	} else if file != "" {
		target = path.Join(path.Dir(file), target)
	} else {
		target = path.Clean(target)
	}
	if target == "" {
		name, ok := strings.CutPrefix(pointer, "/components/schemas/")
		if !ok || strings.Contains(name, "/") {
			return "", fmt.Errorf("reference %q: only whole components are referred to in openapi.yaml", ref)
		}
		return name, nil
	}
	key := target + "#" + pointer
	if name, ok := b.hoisted[key]; ok {
		return name, nil
	}
	doc, err := b.file(target)
	if err != nil {
		return "", err
	}
	node, ok := resolve(doc, pointer)
	if !ok {
		return "", fmt.Errorf("reference %q: %s holds no %s", ref, target, pointer)
	}
	name := componentName(target, pointer)
	if _, taken := b.schemas[name]; taken {
		return "", fmt.Errorf("reference %q: component %s exists already", ref, name)
	}
	b.hoisted[key] = name
	b.schemas[name] = map[string]any{} // placeholder: a schema may refer to itself
	converted, err := b.schema(node, target, pointer)
	if err != nil {
		return "", err
	}
	b.schemas[name] = converted
	return name, nil
}

func (b *bundler) file(name string) (any, error) {
	if doc, ok := b.files[name]; ok {
		return doc, nil
	}
	raw, err := os.ReadFile(filepath.Join(b.dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	b.files[name] = doc
	return doc, nil
}

// componentName names what pointer finds in file: "schemas/v2/suspend-request.schema.json" and
// "/definitions/approvalData" make SuspendRequestApprovalData.
func componentName(file, pointer string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(path.Base(file), ".json"), ".schema")
	name := camel(base)
	for _, seg := range strings.Split(pointer, "/") {
		if seg != "" && seg != "definitions" {
			name += camel(seg)
		}
	}
	return name
}

func camel(s string) string {
	var out strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '.' || r == '_' || r == '~' }) {
		out.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return out.String()
}

// resolve finds what a JSON Pointer names in doc.
func resolve(doc any, pointer string) (any, bool) {
	node := doc
	for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if seg == "" {
			continue
		}
		m, ok := node.(map[string]any)
		if !ok {
			return nil, false
		}
		if node, ok = m[strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)]; !ok {
			return nil, false
		}
	}
	return node, true
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func asSlice(v any) []any { s, _ := v.([]any); return s }
