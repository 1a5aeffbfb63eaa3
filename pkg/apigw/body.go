package apigw

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// MaxBody is the largest request body accepted, decoded. A commit holds the body's payload (and
// for a resolve, the resume value) plus a few hundred bytes of envelope in one DynamoDB item,
// whose limit is 400 KB; legacy aliases repeat the payload, so the cap leaves room for two copies.
const MaxBody = 128 << 10

// decodeBody decodes a JSON request body into v, a struct whose fields are the body's members:
// members not in v are refused (bodies are closed), and so is anything after the value.
func decodeBody(req events.APIGatewayV2HTTPRequest, v any) error {
	ct := req.Headers["content-type"]
	if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return interrupt.Errorf(interrupt.CodeUnsupportedMedia, "the body must be application/json")
	}
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(req.Body); err != nil {
			return interrupt.Invalid("the body is not valid base64")
		}
	}
	if len(body) > MaxBody {
		return interrupt.Errorf(interrupt.CodePayloadTooLarge, "the body exceeds %d bytes", MaxBody)
	}
	if err := strictJSON(body); err != nil {
		return err
	}
	if err := exactMembers(body, reflect.TypeOf(v), ""); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return interrupt.Invalid("the body holds more than one JSON value")
	}
	return nil
}

// MaxDepth bounds the nesting of a body: deeper documents only serve to exhaust a validator.
const MaxDepth = 64

// strictJSON refuses what encoding/json would accept silently: invalid UTF-8 (it would become
// U+FFFD), duplicate object keys (the last would win, and two readers may disagree on which),
// and nesting deeper than MaxDepth.
func strictJSON(body []byte) error {
	if !utf8.Valid(body) {
		return interrupt.Invalid("the body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) && len(stack) == 0 {
			return nil
		}
		if err != nil {
			return interrupt.Invalid("the body is not valid JSON")
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if len(stack) == MaxDepth {
					return interrupt.Invalid(fmt.Sprintf("the body nests deeper than %d levels", MaxDepth))
				}
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &frame{object: d == '{', keys: map[string]bool{}, key: d == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top == nil || !top.object {
			continue
		}
		if top.key {
			k := tok.(string)
			if top.keys[k] {
				return interrupt.Invalid(fmt.Sprintf("the body repeats the member %q in one object", k))
			}
			top.keys[k] = true
		}
		top.key = !top.key
	}
}

func bodyError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return interrupt.Invalid("the body does not match the operation's shape",
			interrupt.FieldError{Path: "/" + strings.ReplaceAll(typeErr.Field, ".", "/"), Message: "must be " + jsonType(typeErr.Type)})
	}
	return interrupt.Invalid("the body is not valid JSON")
}

// jsonType names the JSON type a Go type decodes from, for messages a client can act on.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// exactMembers refuses every member of a body object that names no field of t exactly:
// encoding/json matches names regardless of case, so "RESUMEVALUE" would fill resumeValue and
// pass the duplicate-member check beside it. It descends into members that decode into structs.
func exactMembers(body []byte, t reflect.Type, at string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return nil // not an object: decoding reports the type
	}
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" && f.IsExported() {
			fields[name] = f.Type
		}
	}
	var unknown []interrupt.FieldError
	for _, name := range slices.Sorted(maps.Keys(members)) {
		ft, ok := fields[name]
		if !ok {
			unknown = append(unknown, interrupt.FieldError{Path: at + "/" + schema.PointerEscape(name), Message: "Additional property " + name + " is not allowed"})
			continue
		}
		if err := exactMembers(members[name], ft, at+"/"+name); err != nil {
			return err
		}
	}
	if len(unknown) > 0 {
		return interrupt.Invalid("the body does not match the operation's shape", unknown...)
	}
	return nil
}

// missing is the validation error for absent required members.
func missing(names ...string) error {
	fields := make([]interrupt.FieldError, len(names))
	for i, name := range names {
		fields[i] = interrupt.FieldError{Path: "/" + name, Message: name + " is required"}
	}
	return interrupt.Invalid("the body misses required members", fields...)
}
