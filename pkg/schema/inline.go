package schema

import (
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
)

// What one inline schema may ask of the host (docs/engines.md, "Limits and bad input"). A caller's schema
// runs on every resolve of its interrupt, so its cost is bounded when it is requested, and the
// cost of one validation is bounded before it runs: gojsonschema cannot be interrupted.
const (
	// MaxInlineBytes bounds an inline schema's JSON.
	MaxInlineBytes = 32 << 10
	// MaxInlineNodes bounds the schema objects of an inline schema, counting what every $ref
	// stands for once per place it is used, so that references cannot multiply the work.
	MaxInlineNodes = 2000
	// MaxPatternCost bounds the regular-expression instructions of every pattern and
	// patternProperties key, $refs counted where used: matching costs about one step per
	// instruction and input byte, so this keeps a body-sized string under a second.
	MaxPatternCost = 500
	// ValidationBudget bounds one validation: the values of the document times the schema's
	// nodes. Documents past it are refused before validation starts.
	ValidationBudget = 20_000_000
)

// Error refuses an inline schema the host will not run: Pointer locates the offending member
// inside the schema (a JSON Pointer, "" for the whole schema).
type Error struct {
	Pointer string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("schema at %q: %s", e.Pointer, e.Message) }

// cost is what validating against a schema location takes, its $refs followed.
type cost struct{ nodes, patterns int }

func (c cost) add(o cost) cost { return cost{c.nodes + o.nodes, c.patterns + o.patterns} }

// analysis walks an inline schema once, following local $refs, and refuses references that do
// not resolve, references that recurse (a schema that refers back to itself would recurse in
// gojsonschema until the stack overflows, and takes the process down), and schemas over the
// limits above.
type analysis struct {
	root  any
	done  map[string]cost
	stack map[string]bool
}

// analyse returns the cost of a parsed inline schema, or the *Error that refuses it.
func analyse(root any) (cost, error) {
	a := &analysis{root: root, done: map[string]cost{}, stack: map[string]bool{"": true}}
	return a.walk(root, "")
}

func (a *analysis) walk(node any, at string) (cost, error) {
	var c cost
	switch v := node.(type) {
	case map[string]any:
		c.nodes = 1
		for k, child := range v {
			here := at + "/" + PointerEscape(k)
			var sub cost
			var err error
			switch s, isString := child.(string); {
			case (k == "$id" || k == "id") && isString:
				err = &Error{Pointer: here, Message: "identifiers would rebase references: inline schemas may not set one"}
			case k == "$ref" && isString:
				sub, err = a.ref(s, here)
			case k == "pattern" && isString:
				sub.patterns, err = patternCost(s, here)
			case k == "patternProperties":
				if props, ok := child.(map[string]any); ok {
					for p := range props {
						n, perr := patternCost(p, here+"/"+PointerEscape(p))
						if perr != nil {
							return c, perr
						}
						sub.patterns += n
					}
				}
			}
			if err != nil {
				return c, err
			}
			inner, err := a.walk(child, here)
			if err != nil {
				return c, err
			}
			c = c.add(sub).add(inner)
			if err := c.check(at); err != nil {
				return c, err
			}
		}
	case []any:
		for i, child := range v {
			sub, err := a.walk(child, at+"/"+strconv.Itoa(i))
			if err != nil {
				return c, err
			}
			c = c.add(sub)
			if err := c.check(at); err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

func (c cost) check(at string) error {
	switch {
	case c.nodes > MaxInlineNodes:
		return &Error{Pointer: at, Message: fmt.Sprintf("expands to more than %d schema objects (each $ref counted where it is used)", MaxInlineNodes)}
	case c.patterns > MaxPatternCost:
		return &Error{Pointer: at, Message: fmt.Sprintf("its patterns need more than %d regular-expression instructions in all (each $ref counted where it is used)", MaxPatternCost)}
	}
	return nil
}

// ref follows a local reference ("#" or "#/json/pointer") to what it stands for.
func (a *analysis) ref(ref, at string) (cost, error) {
	target := strings.TrimPrefix(ref, "#")
	if !strings.HasPrefix(ref, "#") || (target != "" && !strings.HasPrefix(target, "/")) {
		return cost{}, &Error{Pointer: at, Message: "only references to a JSON Pointer inside the schema (#/...) are allowed"}
	}
	if a.stack[target] || strings.HasPrefix(at, target+"/") {
		return cost{}, &Error{Pointer: at, Message: "refers to a schema that contains it: recursive schemas are not accepted"}
	}
	if c, ok := a.done[target]; ok {
		return c, nil
	}
	node, ok := Resolve(a.root, target)
	if !ok {
		return cost{}, &Error{Pointer: at, Message: fmt.Sprintf("refers to %q, which the schema does not contain", ref)}
	}
	a.stack[target] = true
	c, err := a.walk(node, target)
	delete(a.stack, target)
	if err != nil {
		return c, err
	}
	a.done[target] = c
	return c, nil
}

// Resolve finds the value a JSON Pointer (RFC 6901: "" for the whole document, else "/" and
// escaped segments) names in doc, a document as encoding/json decodes it into any. Array
// indexes are decimal without leading zeros.
func Resolve(doc any, pointer string) (any, bool) {
	if pointer == "" {
		return doc, true
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, false
	}
	node := doc
	for _, seg := range strings.Split(pointer[1:], "/") {
		seg = pointerUnescaper.Replace(seg)
		switch v := node.(type) {
		case map[string]any:
			child, ok := v[seg]
			if !ok {
				return nil, false
			}
			node = child
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v) || (len(seg) > 1 && seg[0] == '0') {
				return nil, false
			}
			node = v[i]
		default:
			return nil, false
		}
	}
	return node, true
}

var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// patternCost is the size of a pattern's compiled program, in instructions: the factor by which
// matching it multiplies the length of the input.
func patternCost(pattern, at string) (int, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, &Error{Pointer: at, Message: "is not a regular expression this host can run: " + err.Error()}
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, &Error{Pointer: at, Message: "is not a regular expression this host can run: " + err.Error()}
	}
	if n := len(prog.Inst); n <= MaxPatternCost {
		return n, nil
	}
	return 0, &Error{Pointer: at, Message: fmt.Sprintf("needs more than %d regular-expression instructions (bounded repeats multiply them)", MaxPatternCost)}
}
