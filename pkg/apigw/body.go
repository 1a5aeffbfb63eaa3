package apigw

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"strings"

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
