package apigw

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
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
	switch {
	case errors.As(err, &typeErr):
		return interrupt.Invalid("the body does not match the operation's shape",
			interrupt.FieldError{Path: "/" + strings.ReplaceAll(typeErr.Field, ".", "/"), Message: "must be " + typeErr.Type.String()})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return interrupt.Invalid("the body does not match the operation's shape",
			interrupt.FieldError{Path: "/" + name, Message: "Additional property " + name + " is not allowed"})
	default:
		return interrupt.Invalid("the body is not valid JSON")
	}
}

// missing is the validation error for absent required members.
func missing(names ...string) error {
	fields := make([]interrupt.FieldError, len(names))
	for i, name := range names {
		fields[i] = interrupt.FieldError{Path: "/" + name, Message: name + " is required"}
	}
	return interrupt.Invalid("the body misses required members", fields...)
}
