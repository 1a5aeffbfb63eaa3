package apigw

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/identity"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// claims are the claims of the JWT the gateway's authorizer verified, as its issuer wrote them.
// API Gateway hands a function every claim flattened to a string, an array as "[a b]", which
// cannot be read back: a group "Finance Admins" reads as two groups, "not admins" as "admins",
// and a numeric tenant as a string. The same JWT is in the request's Authorization header (the
// authorizer's identity source); the function reads the claims from there, and only when they
// agree with what the authorizer verified. Its signature is not checked again here: the function
// holds no issuer keys, and a token that differs from the verified one is refused.
type claims = identity.Claims

// bearerClaims decodes the Authorization header's JWT and checks it against the authorizer's
// claims: the principal claim (the deployment's PrincipalClaim) must be the one the authorizer
// verified, and every claim both hold as a string must be the same. A token whose principal claim
// is missing or no string names nobody: it is refused saying so, so the deployment learns which
// claim its provider's tokens lack, and is never read as an empty principal.
func bearerClaims(req events.APIGatewayV2HTTPRequest, verified map[string]string, principal string) (claims, error) {
	refused := interrupt.Errorf(interrupt.CodeUnauthorized, "the bearer token is not the one the gateway verified")
	// The authorizer takes the token bare or after "Bearer ", as API Gateway does.
	jwt := strings.TrimSpace(req.Headers["authorization"])
	if scheme, token, ok := strings.Cut(jwt, " "); ok {
		if !strings.EqualFold(scheme, "Bearer") {
			return nil, refused
		}
		jwt = strings.TrimSpace(token)
	}
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return nil, refused
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, refused
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil || c == nil {
		return nil, refused
	}
	switch who := c.Text(principal); {
	case who == "":
		return nil, interrupt.Errorf(interrupt.CodeUnauthorized, "the JWT carries no %s claim (a string), which names the caller here (PrincipalClaim)", principal)
	case who != verified[principal]:
		return nil, refused
	}
	for name, raw := range c {
		var s string
		if want, passed := verified[name]; passed && json.Unmarshal(raw, &s) == nil && want != s {
			return nil, refused
		}
	}
	return c, nil
}
