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

// MaxBody is the largest request body accepted, decoded. Every value is stored once (docs/deploying.md,
// "The run log's stored form"), so any body within it fits in one commit's DynamoDB item.
const MaxBody = 128 << 10

// Body is a request body read once: its bytes (base64 undone) and the JSON value they hold,
// parsed strictly. Decoding into the operation's shape and the idempotency fingerprint both start
// from it, so they can never read two different bodies.
type Body struct {
	raw []byte
	// value is the parsed body: maps, slices, strings, json.Number, bools and nil.
	value any
}

// readBody reads a JSON request body: its media type, its size after base64, its JSON, and its
// numbers, within bounds before anything parses them (interrupt.CheckNumbers). Every route
// with a JSON body reads it here.
func readBody(req events.APIGatewayV2HTTPRequest) (Body, error) {
	ct := req.Headers["content-type"]
	if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return Body{}, interrupt.Errorf(interrupt.CodeUnsupportedMedia, "the body must be application/json")
	}
	raw := []byte(req.Body)
	if req.IsBase64Encoded {
		var err error
		if raw, err = base64.StdEncoding.DecodeString(req.Body); err != nil {
			return Body{}, interrupt.Invalid("the body is not valid base64")
		}
	}
	if len(raw) > MaxBody {
		return Body{}, interrupt.Errorf(interrupt.CodePayloadTooLarge, "the body exceeds %d bytes", MaxBody)
	}
	value, err := StrictJSON(raw)
	if err != nil {
		return Body{}, err
	}
	if fields := interrupt.CheckNumbers(raw, ""); fields != nil {
		return Body{}, interrupt.Invalid("the body holds a number beyond the host's bounds", fields...)
	}
	return Body{raw: raw, value: value}, nil
}

// decode fills v, a struct whose fields are the body's members: members not in v are refused
// (bodies are closed), names match exactly.
func (b Body) decode(v any) error {
	if err := exactMembers(b.value, reflect.TypeOf(v), ""); err != nil {
		return err
	}
	if err := json.Unmarshal(b.raw, v); err != nil {
		return bodyError(err)
	}
	return nil
}

// DecodeBody reads req's body and decodes it into v.
func DecodeBody(req events.APIGatewayV2HTTPRequest, v any) (Body, error) {
	b, err := readBody(req)
	if err != nil {
		return b, err
	}
	return b, b.decode(v)
}

// MaxDepth bounds the nesting of a body: deeper documents only serve to exhaust a validator.
const MaxDepth = 64

// StrictJSON parses body, refusing what encoding/json would accept silently: invalid UTF-8 (it
// would become U+FFFD), duplicate object keys (the last would win, and two readers may disagree
// on which), nesting deeper than MaxDepth, and anything after the value.
func StrictJSON(raw []byte) (any, error) {
	if !utf8.Valid(raw) {
		return nil, interrupt.Invalid("the body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	value, err := strictValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, interrupt.Invalid("the body holds more than one JSON value")
	}
	return value, nil
}

var errNotJSON = interrupt.Invalid("the body is not valid JSON")

func strictValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, errNotJSON
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if depth == MaxDepth {
		return nil, interrupt.Invalid(fmt.Sprintf("the body nests deeper than %d levels", MaxDepth))
	}
	switch d {
	case '[':
		list := []any{}
		for dec.More() {
			v, err := strictValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, errNotJSON
		}
		return list, nil
	case '{':
		obj := map[string]any{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, errNotJSON
			}
			k := tok.(string)
			if _, dup := obj[k]; dup {
				return nil, interrupt.Invalid(fmt.Sprintf("the body repeats the member %q in one object", k))
			}
			if obj[k], err = strictValue(dec, depth+1); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, errNotJSON
		}
		return obj, nil
	}
	return nil, errNotJSON
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
// pass the duplicate-member check beside it. It descends into members that decode into structs,
// and into the items of arrays.
func exactMembers(value any, t reflect.Type, at string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if items, ok := value.([]any); ok && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		for i, item := range items {
			if err := exactMembers(item, t.Elem(), fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
		return nil
	}
	members, ok := value.(map[string]any)
	if t.Kind() != reflect.Struct || !ok {
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

// Missing is the validation error for absent required members.
func Missing(names ...string) error {
	fields := make([]interrupt.FieldError, len(names))
	for i, name := range names {
		fields[i] = interrupt.FieldError{Path: "/" + name, Message: name + " is required"}
	}
	return interrupt.Invalid("the body misses required members", fields...)
}

// RawBody is a request's body as sent, for a signature over its bytes, within MaxBody.
func RawBody(c *Call) ([]byte, error) {
	body := []byte(c.Req.Body)
	if c.Req.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(c.Req.Body); err != nil {
			return nil, interrupt.Invalid("the body is not valid base64")
		}
	}
	if len(body) > MaxBody {
		return nil, interrupt.Errorf(interrupt.CodePayloadTooLarge, "the body exceeds %d bytes", MaxBody)
	}
	return body, nil
}

// Lowered are headers with their names lowercased, as signature checks read them.
func Lowered(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = v
	}
	return out
}
