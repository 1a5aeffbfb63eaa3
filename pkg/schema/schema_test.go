package schema_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/schemas"
)

func parse(t testing.TB, doc string) *schema.Doc {
	t.Helper()
	d, err := schema.Parse(json.RawMessage(doc))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func load(t testing.TB) *schema.Set {
	t.Helper()
	s, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func paths(fields []interrupt.FieldError) string {
	var p []string
	for _, f := range fields {
		p = append(p, f.Path)
	}
	return strings.Join(p, " ")
}

func TestExamplesAreValidPayloads(t *testing.T) {
	s := load(t)
	entries, err := fs.ReadDir(schemas.Examples, "examples")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 8 {
		t.Fatalf("%d examples, want one per kind (8)", len(entries))
	}
	for _, e := range entries {
		raw, err := fs.ReadFile(schemas.Examples, "examples/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if fields := s.Validate(schema.SuspendRequest, raw, ""); len(fields) > 0 {
			t.Errorf("%s: %v", e.Name(), fields)
		}
	}
}

func TestValidate(t *testing.T) {
	s := load(t)
	tests := []struct {
		name, schema, doc string
		// want lists the JSON Pointers the errors must name, in order; empty means valid.
		want string
	}{
		{"payload without kind", schema.SuspendRequest, `{"key":"k","data":{}}`, "/kind"},
		{"payload of unknown kind", schema.SuspendRequest, `{"kind":"poll","key":"k","data":{}}`, "/kind"},
		{"payload with empty key", schema.SuspendRequest, `{"kind":"custom","key":"","data":{"customKind":"x"}}`, "/key"},
		{"payload with bad timeout", schema.SuspendRequest, `{"kind":"custom","key":"k","data":{"customKind":"x"},"timeoutMs":0}`, "/timeoutMs"},
		{"approval with empty actions", schema.SuspendRequest, `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":[]}}`, "/data/actions"},
		{"approval with unknown action", schema.SuspendRequest, `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["approve"]}}`, "/data/actions/0"},
		{"approval with bad policy", schema.SuspendRequest, `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"],"rejectionPolicy":"unanimous"}}`, "/data/rejectionPolicy"},
		{"question with unknown field", schema.SuspendRequest, `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q","question":"?","hint":"x"}]}}`, "/data/questions/0/hint"},
		{"question without text", schema.SuspendRequest, `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q"}]}}`, "/data/questions/0/question"},
		{"threshold above 1", schema.SuspendRequest, `{"kind":"low-confidence","key":"k","data":{"agentId":"a","threshold":1.5,"observed":0.1}}`, "/data/threshold"},
		{"facet", schema.InterruptFacet, `{"tokenAlgs":["hs256"],"refKinds":["principal","group","role"]}`, ""},
		{"facet without algs", schema.InterruptFacet, `{"refKinds":["group"]}`, "/tokenAlgs"},
		{"facet with unknown ref kind", schema.InterruptFacet, `{"tokenAlgs":["hs256"],"refKinds":["team"]}`, "/refKinds/0"},
		{"facet closed", schema.InterruptFacet, `{"tokenAlgs":["hs256"],"x":1}`, "/x"},
		{"accept", schema.ApprovalResume, `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`, ""},
		{"accept without decidedAt", schema.ApprovalResume, `{"action":"accept"}`, "/decidedAt"},
		{"accept with bad decidedAt", schema.ApprovalResume, `{"action":"accept","decidedAt":"yesterday"}`, "/decidedAt"},
		{"refine without feedback", schema.ApprovalResume, `{"action":"refine","decidedAt":"2026-11-30T09:00:00Z"}`, "/refineFeedback"},
		{"refine section without a path (optional in the spec)", schema.ApprovalResume, `{"action":"refine","decidedAt":"2026-11-30T09:00:00Z","refineFeedback":{"scope":"section"}}`, ""},
		{"refine items without ids (optional in the spec)", schema.ApprovalResume, `{"action":"refine","decidedAt":"2026-11-30T09:00:00Z","refineFeedback":{"scope":"items","text":"x"}}`, ""},
		{"refine with an unknown scope", schema.ApprovalResume, `{"action":"refine","decidedAt":"2026-11-30T09:00:00Z","refineFeedback":{"scope":"page"}}`, "/refineFeedback/scope"},
		{"refine whole", schema.ApprovalResume, `{"action":"refine","decidedAt":"2026-11-30T09:00:00Z","refineFeedback":{"scope":"whole","text":"shorter"}}`, ""},
		{"edit-accept without data", schema.ApprovalResume, `{"action":"edit-accept","decidedAt":"2026-11-30T09:00:00Z"}`, "/editedArtifactData"},
		{"decision closed", schema.ApprovalResume, `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","votes":3}`, "/votes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := paths(s.Validate(tt.schema, json.RawMessage(tt.doc), ""))
			if got != tt.want {
				t.Errorf("error paths = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRunEventSchema(t *testing.T) {
	s := load(t)
	const env = `{"seq":3,"index":0,"type":%q,"runId":"r1","nodeId":"n1","interruptId":"i1","at":"2026-11-30T09:00:00.000Z","payload":%s}`
	approval, _ := fs.ReadFile(schemas.Examples, "examples/approval.json")
	tests := []struct {
		typ, payload string
		valid        bool
	}{
		{"interrupt.requested", string(approval), true},
		{"approval.requested", string(approval), true},
		{"clarification.requested", `{"kind":"approval","key":"k","data":{}}`, false},
		{"interrupt.resolved", `{"nodeId":"n1","interruptId":"i1","kind":"approval","resumeValue":{"action":"accept"}}`, true},
		{"interrupt.resolved", `{"nodeId":"n1","interruptId":"i1"}`, true},
		{"interrupt.resolved", `{"nodeId":"n1","interruptId":"i1","principal":"alice"}`, false},
		{"approval.resolved", `{"nodeId":"n1","interruptId":"i1","extra":1}`, false},
		{"clarification.resolved", `{"nodeId":"n1"}`, false},
		{"interrupt.asked", `{"nodeId":"n1","interruptId":"i1","principal":"alice","resumeValue":{"action":"ask"}}`, true},
		{"interrupt.expired", `{"nodeId":"n1","interruptId":"i1","deadline":"2026-11-30T09:00:00Z"}`, true},
		{"run.cancelled", `{"by":"alice","reason":"superseded"}`, true},
		{"run.completed", `{}`, false},
		{"agent.decided", `{"agentId":"a","confidence":0.4,"threshold":0.8}`, true},
		{"node.suspended", `{"nodeId":"n1","reason":"low-confidence","interruptId":"i1"}`, true},
		{"node.suspended", `{"nodeId":"n1","reason":"bored"}`, false},
		{"interrupt.voted", `{"nodeId":"n1","interruptId":"i1","principal":"bob","action":"accept","resumeValue":{},"eligibility":{"via":"group","ref":"finance"},"tally":{"approvals":1,"rejections":0,"required":2}}`, true},
		{"interrupt.unknown", `{}`, false},
	}
	for _, tt := range tests {
		fields := s.Validate(schema.RunEventPayloads, json.RawMessage(strings.ReplaceAll(strings.Replace(env, "%q", `"`+tt.typ+`"`, 1), "%s", tt.payload)), "")
		if (len(fields) == 0) != tt.valid {
			t.Errorf("%s %s: valid=%v, errors %v", tt.typ, tt.payload, !tt.valid, fields)
		}
	}
}

func TestCompileRefusesExternalReferences(t *testing.T) {
	s := load(t)
	for _, doc := range []string{
		`{"$ref":"http://127.0.0.1:1/schema.json"}`,
		`{"properties":{"a":{"$ref":"file:///etc/passwd"}}}`,
		`{"$id":"http://127.0.0.1:1/","$ref":"#/definitions/a","definitions":{"a":{}}}`,
		`{"items":[{"id":"other.json"}]}`,
	} {
		if _, err := s.Compile(json.RawMessage(doc)); err == nil {
			t.Errorf("compiled %s", doc)
		}
	}
	in, err := s.Compile(json.RawMessage(`{"type":"object","properties":{"n":{"$ref":"#/definitions/n"}},"definitions":{"n":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(in.Validate(parse(t, `{"n":"x"}`), "/resumeValue")); got != "/resumeValue/n" {
		t.Errorf("paths = %q", got)
	}
}

func TestPointerEscapesSegments(t *testing.T) {
	s := load(t)
	in, err := s.Compile(json.RawMessage(`{"properties":{"a/b~c":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(in.Validate(parse(t, `{"a/b~c":1}`), "")); got != "/a~1b~0c" {
		t.Errorf("paths = %q", got)
	}
}

// BenchmarkResumeValidation is the validation work of one approval resolve: the approval
// decision schema and a declared resumeSchema (compiled once, then served from the cache).
func BenchmarkResumeValidation(b *testing.B) {
	s := load(b)
	resumeSchema := json.RawMessage(`{"type":"object","required":["action"],"properties":{"action":{"type":"string"},"feedback":{"type":"string","maxLength":500}}}`)
	value := json.RawMessage(`{"action":"refine","decidedAt":"2026-11-30T09:00:00Z","feedback":"almost","refineFeedback":{"scope":"section","sectionPath":"totals","text":"recheck VAT"}}`)
	b.ReportAllocs()
	for b.Loop() {
		in, err := s.Compile(resumeSchema)
		if err != nil {
			b.Fatal(err)
		}
		doc, err := schema.Parse(value)
		if err != nil {
			b.Fatal(err)
		}
		if f := in.Validate(doc, "/resumeValue"); f != nil {
			b.Fatal(f)
		}
		if f := s.ValidateDoc(schema.ApprovalResume, doc, "/resumeValue"); f != nil {
			b.Fatal(f)
		}
	}
}

// TestCompileRefusesWhatWouldNotEnd: schemas that would recurse in the validator (and overflow
// its stack), expand without bound, or hold patterns that match slowly are refused when
// requested, naming the member at fault; ordinary references still work.
func TestCompileRefusesWhatWouldNotEnd(t *testing.T) {
	s := load(t)
	laughs := `{"definitions":{"a0":{"type":"string"}`
	for i := 1; i <= 12; i++ {
		laughs += fmt.Sprintf(`,"a%d":{"allOf":[{"$ref":"#/definitions/a%d"},{"$ref":"#/definitions/a%d"}]}`, i, i-1, i-1)
	}
	laughs += `},"$ref":"#/definitions/a12"}`
	tests := []struct {
		name, schema string
		// pointer is where the refusal points, "-" for a schema that compiles.
		pointer string
	}{
		{"reference to the root", `{"$ref":"#"}`, "/$ref"},
		{"root reference through anyOf", `{"anyOf":[{"type":"string"},{"$ref":"#"}]}`, "/anyOf/1/$ref"},
		{"recursion through data", `{"type":"object","properties":{"child":{"$ref":"#"}}}`, "/properties/child/$ref"},
		{"definition referring to itself", `{"definitions":{"a":{"$ref":"#/definitions/a"}},"$ref":"#/definitions/a"}`, "/definitions/a/$ref"},
		{"definitions referring to each other", `{"definitions":{"a":{"items":{"$ref":"#/definitions/b"}},"b":{"not":{"$ref":"#/definitions/a"}}}}`, "/definitions/"},
		{"reference to nothing", `{"$ref":"#/definitions/missing"}`, "/$ref"},
		{"reference by anchor", `{"$ref":"#anchor"}`, "/$ref"},
		{"exponential expansion", laughs, ""},
		{"nested bounded repeats", `{"type":"string","pattern":"(a{1,30}){1,30}$"}`, "/pattern"},
		{"pattern property of bounded repeats", `{"patternProperties":{"^(\\w{1,20}\\s?){1,20}$":{}}}`, "/patternProperties/^(\\w{1,20}\\s?){1,20}$"},
		{"many small patterns", `{"anyOf":[` + strings.Repeat(`{"pattern":"[a-z]{1,40}"},`, 20) + `{}]}`, ""},
		{"invalid pattern", `{"pattern":"(?<name"}`, "/pattern"},
		{"schema too large", `{"description":"` + strings.Repeat("x", schema.MaxInlineBytes) + `"}`, ""},
		{"ordinary references", `{"type":"object","properties":{"a":{"$ref":"#/definitions/n"},"b":{"$ref":"#/definitions/n"}},"definitions":{"n":{"type":"integer"}}}`, "-"},
		{"a sibling's definition", `{"definitions":{"a":{"type":"string"},"b":{"items":{"$ref":"#/definitions/a"}}},"$ref":"#/definitions/b"}`, "-"},
		{"a usual pattern", `{"type":"string","pattern":"^[A-Z]{3}-[0-9]{4}$"}`, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Compile(json.RawMessage(tt.schema))
			var refused *schema.Error
			switch {
			case tt.pointer == "-":
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			case !errors.As(err, &refused):
				t.Fatalf("got %v, want a refusal at %q", err, tt.pointer)
			case !strings.HasPrefix(refused.Pointer, tt.pointer):
				t.Errorf("refused at %q (%s), want %q", refused.Pointer, refused.Message, tt.pointer)
			}
		})
	}
}

// TestValidationBudget: a document that would cost more than the budget against a large schema
// is refused without validating it; the same document against a small schema is validated.
func TestValidationBudget(t *testing.T) {
	s := load(t)
	var props []string
	for i := range 1500 {
		props = append(props, fmt.Sprintf(`"p%d":{}`, i))
	}
	large, err := s.Compile(json.RawMessage(`{"type":"array","items":{"type":"object","properties":{` + strings.Join(props, ",") + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	small, err := s.Compile(json.RawMessage(`{"type":"array","items":{"type":"integer"}}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, "["+strings.Repeat("1,", 60_000)+"1]")
	if fields := large.Validate(doc, "/resumeValue"); len(fields) != 1 || fields[0].Path != "/resumeValue" || !strings.Contains(fields[0].Message, "budget") {
		t.Errorf("over the budget: %v", fields)
	}
	if fields := small.Validate(doc, "/resumeValue"); len(fields) != 0 {
		t.Errorf("within the budget: %v", fields)
	}
}

// TestCompileReadsOnlyTheDraftsItImplements: a schema that declares a draft other than 4, 6 or
// 7, declares one below its root, or uses a keyword gojsonschema would skip (one of 2019-09 or
// 2020-12, or one newer than its declared draft) is refused, pointing at it; a declared draft is
// read as that draft, over http or https; keywords' names used as data or property names are
// no keywords.
func TestCompileReadsOnlyTheDraftsItImplements(t *testing.T) {
	s := load(t)
	tests := []struct {
		name, schema string
		// pointer is where the refusal points, or "" for a schema that compiles.
		pointer string
		// valid and invalid are values the compiled schema must accept and refuse.
		valid, invalid string
	}{
		{"2020-12 declared", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"array","prefixItems":[{"type":"integer"}],"items":false}`, "/$schema", "", ""},
		{"2019-09 declared", `{"$schema":"https://json-schema.org/draft/2019-09/schema"}`, "/$schema", "", ""},
		{"a draft that is not a URL", `{"$schema":"draft-07"}`, "/$schema", "", ""},
		{"a $schema that is no string", `{"$schema":7}`, "/$schema", "", ""},
		{"prefixItems undeclared", `{"type":"array","prefixItems":[{"type":"integer"}]}`, "/prefixItems", "", ""},
		{"dependentRequired below the root", `{"properties":{"card":{"type":"object","dependentRequired":{"number":["cvc"]}}}}`, "/properties/card/dependentRequired", "", ""},
		{"unevaluatedProperties in allOf", `{"allOf":[{"unevaluatedProperties":false}]}`, "/allOf/0/unevaluatedProperties", "", ""},
		{"$schema below the root", `{"properties":{"a":{"$schema":"http://json-schema.org/draft-07/schema#"}}}`, "/properties/a/$schema", "", ""},
		{"const under draft 4", `{"$schema":"http://json-schema.org/draft-04/schema#","const":1}`, "/const", "", ""},
		{"if under draft 6", `{"$schema":"http://json-schema.org/draft-06/schema#","if":{"type":"string"}}`, "/if", "", ""},
		{"a property named like a later keyword", `{"type":"object","properties":{"prefixItems":{"type":"integer"}},"required":["prefixItems"]}`, "", `{"prefixItems":1}`, `{"prefixItems":"x"}`},
		{"a later keyword's name as data", `{"enum":[{"dependentRequired":1}],"default":{"prefixItems":[]}}`, "", `{"dependentRequired":1}`, `{}`},
		{"draft 7 over https", `{"$schema":"https://json-schema.org/draft-07/schema","if":{"type":"string"},"then":{"minLength":2}}`, "", `"ab"`, `"a"`},
		{"draft 4 read as draft 4", `{"$schema":"http://json-schema.org/draft-04/schema#","minimum":5,"exclusiveMinimum":true}`, "", `6`, `5`},
		{"draft 6 read as draft 6", `{"$schema":"https://json-schema.org/draft-06/schema#","exclusiveMinimum":5}`, "", `6`, `5`},
		{"no draft declared", `{"type":"array","items":{"type":"integer"},"contains":{"const":3}}`, "", `[1,3]`, `[1,2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := s.Compile(json.RawMessage(tt.schema))
			var refused *schema.Error
			if tt.pointer != "" {
				if !errors.As(err, &refused) || refused.Pointer != tt.pointer {
					t.Fatalf("got %v, want a refusal at %q", err, tt.pointer)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			for value, want := range map[string]bool{tt.valid: true, tt.invalid: false} {
				doc, err := schema.Parse(json.RawMessage(value))
				if err != nil {
					t.Fatal(err)
				}
				if got := len(in.Validate(doc, "")) == 0; got != want {
					t.Errorf("%s valid: %v, want %v", value, got, want)
				}
			}
		})
	}
}
