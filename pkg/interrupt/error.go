package interrupt

import (
	"errors"
	"fmt"
)

// Code is a machine-readable error code; the spec fixes some, docs/design.md adds the rest. The HTTP
// layer maps each code to a status in one table.
type Code string

// Error codes.
const (
	CodeValidation       Code = "validation_error"
	CodeUnauthorized     Code = "unauthorized"
	CodeTokenInvalid     Code = "interrupt_token_invalid"
	CodeForbidden        Code = "forbidden"
	CodeNotFound         Code = "not_found"
	CodeAlreadyResolved  Code = "interrupt_already_resolved"
	CodeConflict         Code = "conflict"
	CodeAlreadyVoted     Code = "already_voted"
	CodeNotEligible      Code = "approver_not_eligible"
	CodeExpired          Code = "interrupt_expired"
	CodePayloadTooLarge  Code = "payload_too_large"
	CodeIdempotencyReuse Code = "idempotency_key_reused"
	// CodeKeyReused refuses a re-entry key sent with another node or kind than the interrupt
	// it names: a replay would tell an engine that is not deterministic that all is well.
	CodeKeyReused        Code = "key_reused"
	CodeUnsupportedMedia Code = "unsupported_media_type"
	// CodeReceiptSpent refuses a receipt redeemed before; CodeCallDiffers a call other than
	// the one it approved (nothing spent); CodeReceiptExpired one past its expiry.
	CodeReceiptSpent   Code = "receipt_spent"
	CodeCallDiffers    Code = "call_differs"
	CodeReceiptExpired Code = "receipt_expired"
	// CodeMethodNotAllowed refuses a method a route takes only to say so: the MCP endpoint's
	// GET and DELETE, which its stateless transport serves no stream or session to.
	CodeMethodNotAllowed Code = "method_not_allowed"
	CodeUnavailable      Code = "unavailable"
	// CodeOutcomeUnknown says a write was sent and neither its answer nor a read afterwards
	// could tell whether it was applied: a retry with the same Idempotency-Key is safe.
	CodeOutcomeUnknown   Code = "outcome_unknown"
	CodeSignatureInvalid Code = "webhook_signature_invalid"
	CodeInternal         Code = "internal"
)

// FieldError names one failing JSON location (a JSON Pointer into the request body).
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Error is the one error type operations return to callers: its Message is safe to show to a
// client, unlike the wrapped errors of dependencies, which are logged and never returned.
type Error struct {
	Code    Code
	Message string
	Fields  []FieldError
}

func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("%s: %s (%d fields)", e.Code, e.Message, len(e.Fields))
}

// Errorf builds an *Error with a formatted client-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid builds the 400 validation_error that lists failing paths.
func Invalid(message string, fields ...FieldError) *Error {
	return &Error{Code: CodeValidation, Message: message, Fields: fields}
}

// ErrorCode extracts the code of err: an *Error's own, unavailable for dependency outages the
// store marked with ErrUnavailable, and internal for everything else.
func ErrorCode(err error) Code {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	case errors.Is(err, ErrOutcomeUnknown):
		return CodeOutcomeUnknown
	case errors.Is(err, ErrUnavailable):
		return CodeUnavailable
	default:
		return CodeInternal
	}
}

// ErrUnavailable marks a dependency failure after which nothing was written and a retry may
// succeed (throttling, a store that cannot be reached).
var ErrUnavailable = errors.New("interrupt: dependency unavailable")

// ErrOutcomeUnknown marks a write whose outcome the host could not learn: its answer was lost
// and the store could not be read to find it. It may or may not have been applied; a retry with
// the same Idempotency-Key (or of an operation idempotent by its key) answers what happened.
var ErrOutcomeUnknown = errors.New("interrupt: the outcome of a write is unknown")
