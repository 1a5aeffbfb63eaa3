package interrupt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"time"

	"github.com/gowebpki/jcs"
)

// ToolCall is the exact call an approval asks people to allow: a tool's name and the arguments
// it would be called with, as an agent (or its engine) would make it. Given by the request as a
// host member beside its payload, kept with the interrupt; an accepted approval answers the call
// as approved (ApprovedCall) and a receipt the call's executor redeems once, for that call alone
// (docs/design.md, "Receipts").
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// ReceiptTTLMs is how long after the decision its receipt redeems; DefaultReceiptTTL when 0.
	ReceiptTTLMs int64 `json:"receiptTtlMs,omitempty"`
	// Policy is the tenant's policy the approval was asked under (who decides, the quorum, the
	// deadline and the actions were its, not the agent's); nil for none.
	Policy *PolicyRef `json:"policy,omitempty"`
}

// PolicyRef names one version of a tenant's tool policy: what a decision was made under.
type PolicyRef struct {
	// Tool is the tool the policy is for, or DefaultPolicy for the tenant's default.
	Tool    string `json:"tool"`
	Version int    `json:"version"`
}

// DefaultPolicy is the Tool of a tenant's default policy: no tool's name (it is no
// ValidToolName), so that a tool named "default" has a policy of its own.
const DefaultPolicy = "*"

// Said is r as the surfaces say it: "Policy issue_refund v3", "The default policy v1".
func (r PolicyRef) Said() string {
	if r.Tool == DefaultPolicy {
		return fmt.Sprintf("The default policy v%d", r.Version)
	}
	return fmt.Sprintf("Policy %s v%d", r.Tool, r.Version)
}

// Tool call bounds: a name as MCP names tools, arguments an object a request carries, a
// receipt's life from a second to a day.
const (
	MaxToolArguments  = 32 << 10
	MinReceiptTTL     = time.Second
	MaxReceiptTTL     = 24 * time.Hour
	DefaultReceiptTTL = 15 * time.Minute
)

var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// ValidToolName reports whether s names a tool as MCP names them: 1 to 128 letters, digits,
// '_', '-' and '.'.
func ValidToolName(s string) bool { return toolNamePattern.MatchString(s) }

// Check says what is wrong with c, at the JSON Pointer at: a name MCP would not give a tool,
// arguments that are not a JSON object of at most MaxToolArguments bytes that canonicalizes
// (RFC 8785 reads numbers as IEEE doubles: one past them has no canonical form), or a receipt
// life out of bounds.
func (c ToolCall) Check(at string) []FieldError {
	var out []FieldError
	if !ValidToolName(c.Name) {
		out = append(out, FieldError{Path: at + "/name", Message: "must be a tool name: 1 to 128 letters, digits, '_', '-' or '.'"})
	}
	if f := CheckArguments(c.Arguments, at+"/arguments"); f != nil {
		out = append(out, *f)
	}
	if ms := c.ReceiptTTLMs; ms != 0 && (ms < MinReceiptTTL.Milliseconds() || ms > MaxReceiptTTL.Milliseconds()) {
		out = append(out, FieldError{Path: at + "/receiptTtlMs", Message: fmt.Sprintf("must be %d to %d", MinReceiptTTL.Milliseconds(), MaxReceiptTTL.Milliseconds())})
	}
	return out
}

// CheckArguments says what is wrong with arguments (edited ones among them) at the pointer at:
// nil for a JSON object of at most MaxToolArguments bytes with a canonical form.
func CheckArguments(arguments json.RawMessage, at string) *FieldError {
	trimmed := bytes.TrimSpace(arguments)
	switch {
	case len(trimmed) == 0 || trimmed[0] != '{':
		return &FieldError{Path: at, Message: "must be a JSON object: the call's arguments by name"}
	case len(arguments) > MaxToolArguments:
		return &FieldError{Path: at, Message: fmt.Sprintf("must be at most %d bytes", MaxToolArguments)}
	}
	if fields := CheckNumbers(arguments, at); len(fields) > 0 {
		return &fields[0]
	}
	for start, end := range literals(arguments) {
		if !exact(string(arguments[start:end])) {
			return &FieldError{Path: at + pointerTo(arguments, start), Message: "is a number no IEEE double holds exactly (RFC 8785 compares numbers as doubles, so another number would match it): send it as a string"}
		}
	}
	if _, err := ArgumentsDigest(arguments); err != nil {
		return &FieldError{Path: at, Message: "has no canonical JSON form (RFC 8785): " + err.Error()}
	}
	return nil
}

// exact reports whether the number literal n is the shortest form of some double, so that its
// canonical form (RFC 8785) is n's own value: 9007199254740993 or 1.00000000000000000001 are
// not (they read as 9007199254740992 and 1, and would match a call carrying those).
func exact(n string) bool {
	f, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return false
	}
	want, ok := new(big.Rat).SetString(n)
	got, ok2 := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return ok && ok2 && want.Cmp(got) == 0
}

// ReceiptTTL is how long after the decision the call's receipt redeems.
func (c ToolCall) ReceiptTTL() time.Duration {
	if c.ReceiptTTLMs == 0 {
		return DefaultReceiptTTL
	}
	return time.Duration(c.ReceiptTTLMs) * time.Millisecond
}

// ApprovedCall is the call as people approved it: the request's, or its arguments as an
// approver edited them ("Edit, then accept"), with ArgumentsDigest to compare calls by.
type ApprovedCall struct {
	Name            string          `json:"name"`
	Arguments       json.RawMessage `json:"arguments"`
	ArgumentsDigest string          `json:"argumentsDigest"`
}

// ArgumentsDigest is the lowercase hex SHA-256 of arguments' canonical JSON (RFC 8785, the JSON
// Canonicalization Scheme): two spellings of one object (members in another order, other
// spacing, 1e3 for 1000) have one digest, so a call is compared as a value, not as bytes.
func ArgumentsDigest(arguments json.RawMessage) (string, error) {
	canonical, err := jcs.Transform(arguments)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:]), nil
}

// SameCall reports whether a and b ask people to allow one call, so that a request sent again
// under its re-entry key is told whether it is the one first requested (samePayload): both
// none, or the same tool, the same arguments as values (their canonical JSON, RFC 8785, as
// ArgumentsDigest compares them: members in another order or other spacing are the same
// call), and the same receipt life as it applies (0 and DefaultReceiptTTL alike). An
// approver approves the call as a whole, so any other call is another request.
func SameCall(a, b *ToolCall) bool {
	if a == nil || b == nil {
		return a == b
	}
	da, errA := ArgumentsDigest(a.Arguments)
	db, errB := ArgumentsDigest(b.Arguments)
	return a.Name == b.Name && errA == nil && errB == nil && da == db && a.ReceiptTTL() == b.ReceiptTTL()
}

// Approved is c as an approval's resume value approved it: accept approves the arguments asked,
// edit-accept the edited ones (its editedArtifactData); any other action approves nothing (nil).
func (c ToolCall) Approved(resumeValue json.RawMessage) *ApprovedCall {
	var v struct {
		Action Action          `json:"action"`
		Edited json.RawMessage `json:"editedArtifactData"`
	}
	if json.Unmarshal(resumeValue, &v) != nil {
		return nil
	}
	args := c.Arguments
	switch v.Action {
	case ActionAccept:
	case ActionEditAccept:
		args = v.Edited
	default:
		return nil
	}
	digest, err := ArgumentsDigest(args)
	if err != nil {
		return nil
	}
	return &ApprovedCall{Name: c.Name, Arguments: args, ArgumentsDigest: digest}
}

// Redeemed is the payload of receipt.redeemed: the receipt of an interrupt's approved call was
// spent, by whom, for the call whose digest it names. One per interrupt, ever.
type Redeemed struct {
	NodeID          string `json:"nodeId"`
	InterruptID     string `json:"interruptId"`
	Name            string `json:"name"`
	ArgumentsDigest string `json:"argumentsDigest"`
	By              string `json:"by"`
}
