package apigw

import (
	"errors"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// statusOf is the one map from error codes to HTTP statuses.
var statusOf = map[interrupt.Code]int{
	interrupt.CodeValidation:       http.StatusBadRequest,
	interrupt.CodeUnauthorized:     http.StatusUnauthorized,
	interrupt.CodeTokenInvalid:     http.StatusUnauthorized,
	interrupt.CodeSignatureInvalid: http.StatusUnauthorized,
	interrupt.CodeForbidden:        http.StatusForbidden,
	interrupt.CodeNotFound:         http.StatusNotFound,
	interrupt.CodeAlreadyResolved:  http.StatusConflict,
	interrupt.CodeConflict:         http.StatusConflict,
	interrupt.CodeAlreadyVoted:     http.StatusConflict,
	interrupt.CodeKeyReused:        http.StatusConflict,
	interrupt.CodeReceiptSpent:     http.StatusConflict,
	interrupt.CodeCallDiffers:      http.StatusConflict,
	interrupt.CodeReceiptExpired:   http.StatusGone,
	interrupt.CodeNotEligible:      http.StatusForbidden,
	interrupt.CodeExpired:          http.StatusGone,
	interrupt.CodePayloadTooLarge:  http.StatusRequestEntityTooLarge,
	interrupt.CodeIdempotencyReuse: http.StatusUnprocessableEntity,
	interrupt.CodeUnsupportedMedia: http.StatusUnsupportedMediaType,
	interrupt.CodeMethodNotAllowed: http.StatusMethodNotAllowed,
	interrupt.CodeUnavailable:      http.StatusServiceUnavailable,
	interrupt.CodeOutcomeUnknown:   http.StatusServiceUnavailable,
	interrupt.CodeInternal:         http.StatusInternalServerError,
}

// StatusFor is the status of err as the token surface answers it.
func StatusFor(err error) int { return statusOf[interrupt.ErrorCode(err)] }

// Problem is an RFC 9457 problem document with the spec's code and, for validation errors, the
// failing JSON paths.
type Problem struct {
	Type   string                 `json:"type"`
	Title  string                 `json:"title"`
	Status int                    `json:"status"`
	Code   interrupt.Code         `json:"code"`
	Detail string                 `json:"detail"`
	Errors []interrupt.FieldError `json:"errors,omitempty"`
}

// ProblemType is the prefix of every problem's type URI; the code completes it.
const ProblemType = "https://interrupthost.dev/problems/"

// ProblemResponse renders err. Only an *interrupt.Error's message reaches the client; any other
// error (an SDK failure, a bug) answers a generic message and is logged by the caller.
func ProblemResponse(err error) events.APIGatewayV2HTTPResponse {
	code := interrupt.ErrorCode(err)
	status := statusOf[code]
	p := Problem{Type: ProblemType + string(code), Title: http.StatusText(status), Status: status, Code: code}
	if e := (*interrupt.Error)(nil); errors.As(err, &e) {
		p.Detail, p.Errors = e.Message, e.Fields
	}
	headers := map[string]string{}
	switch code {
	case interrupt.CodeInternal:
		p.Detail = "internal error; the request id identifies it in the host's logs"
	case interrupt.CodeUnavailable:
		p.Detail = "a dependency is unavailable; nothing was written, retry later"
		headers["Retry-After"] = "1"
	case interrupt.CodeOutcomeUnknown:
		p.Detail = "the write's outcome is unknown (its answer was lost, and the store could not be read to find out); a retry of the same request, with the same Idempotency-Key or re-entry key, is safe and answers what happened"
		headers["Retry-After"] = "1"
	}
	resp := jsonResponse(status, p)
	resp.Headers["Content-Type"] = "application/problem+json"
	for k, v := range headers {
		resp.Headers[k] = v
	}
	return resp
}

// jsonResponse encodes body as the run log stores values, without HTML escaping, so a value is
// read back byte for byte as it was sent; nosniff keeps browsers from reading it as anything
// but JSON.
func jsonResponse(status int, body any) events.APIGatewayV2HTTPResponse {
	if body == nil { // 204: no content, no type
		return events.APIGatewayV2HTTPResponse{StatusCode: status, Headers: map[string]string{"Cache-Control": "no-store"}}
	}
	b, ok := body.([]byte)
	if !ok {
		var err error
		if b, err = runlog.Marshal(body); err != nil {
			status, b = http.StatusInternalServerError, []byte(`{"code":"internal"}`)
		}
	}
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers: map[string]string{
			"Content-Type": "application/json", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
		},
		Body: string(b),
	}
}
