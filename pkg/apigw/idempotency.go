package apigw

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// MaxIdempotencyKey is the longest Idempotency-Key accepted, in characters.
const MaxIdempotencyKey = 255

// Idempotency reads the Idempotency-Key header of a resolve. The key is an RFC 8941 sf-string
// ("...", printable ASCII, \" and \\ escapes, no parameters) or a bare token of printable ASCII
// without quotes, commas, semicolons or backslashes; either at most 255 characters. API Gateway
// joins a repeated header with commas, so a repeated key reads as malformed. No header: nil.
func Idempotency(req events.APIGatewayV2HTTPRequest, b Body) (*host.Idempotency, error) {
	raw, ok := req.Headers["idempotency-key"]
	if !ok {
		return nil, nil
	}
	key, ok := parseKey(strings.Trim(raw, " \t"))
	if !ok {
		return nil, interrupt.Invalid("Idempotency-Key must be one sf-string or token of 1 to 255 printable characters",
			interrupt.FieldError{Path: "Idempotency-Key", Message: "is malformed or repeated"})
	}
	return &host.Idempotency{Key: key, Fingerprint: fingerprint(req, b)}, nil
}

func parseKey(v string) (string, bool) {
	if strings.HasPrefix(v, `"`) {
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '\\':
				if i+1 == len(v) || (v[i+1] != '"' && v[i+1] != '\\') {
					return "", false
				}
				i++
				b.WriteByte(v[i])
			case c == '"':
				key := b.String()
				return key, i == len(v)-1 && key != "" && len(key) <= MaxIdempotencyKey
			case c < 0x20 || c > 0x7e:
				return "", false
			default:
				b.WriteByte(c)
			}
		}
		return "", false
	}
	if v == "" || len(v) > MaxIdempotencyKey {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= 0x20 || c > 0x7e || c == '"' || c == ',' || c == ';' || c == '\\' {
			return "", false
		}
	}
	return v, true
}

// fingerprint identifies a request for Idempotency-Key: its route and path parameters, and its
// body as read (base64 undone) and parsed once, in canonical JSON (members sorted, whitespace
// dropped, numbers as written), so that a retry re-serialised by another client library still
// matches. The host adds the caller.
func fingerprint(req events.APIGatewayV2HTTPRequest, b Body) string {
	var buf bytes.Buffer
	buf.WriteString(req.RouteKey)
	for _, k := range slices.Sorted(maps.Keys(req.PathParameters)) {
		buf.WriteString("\n" + k + "=" + req.PathParameters[k])
	}
	buf.WriteString("\n")
	// json.Marshal, HTML escaping and all, as fingerprints were first computed: a key stored
	// before keeps matching its retries.
	canonical, _ := json.Marshal(b.value)
	buf.Write(canonical)
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}
