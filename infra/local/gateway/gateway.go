// Package gateway is the local stand-in for API Gateway's HTTP API: it serves the routes that
// template.yaml declares, checks JWTs and route scopes the way the JWT authorizer does, and
// invokes each function's real bootstrap under the Lambda Runtime Interface Emulator with the
// payload format 2.0 event AWS would send. Under devjwt.IssuerPath it serves the identity
// provider that issues those JWTs (devjwt.Provider), which in AWS is the deployment's own.
package gateway

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// MaxBody is Lambda's synchronous invocation payload limit, which caps request bodies behind
// API Gateway.
const MaxBody = 6 << 20

// Route is one served route: the template's route with its authorizer resolved and its pool.
type Route struct {
	samtemplate.Route
	Function string
	Issuer   string
	Audience []string
	// Required are the route's AuthorizationScopes (samtemplate.Route.Scopes), resolved.
	Required []string
	pool     *Pool
	segments []string
}

// Gateway serves HTTP requests to function pools.
type Gateway struct {
	routes    []*Route
	schedules []*scheduled
	streams   []*streamed
	queues    []*queued
	rotations map[string]*rotation
	pools     map[string]*Pool
	tokens    *devjwt.Verifier
	// issuer serves the identity provider's paths; nil in a gateway New built for its routes.
	issuer http.Handler
	log    *slog.Logger
	now    func() time.Time
}

// New returns a gateway over routes whose functions run in pools (by function name), verifying
// JWTs with the keys keys finds for each route's issuer.
func New(routes []*Route, pools map[string]*Pool, keys devjwt.KeySource, log *slog.Logger) (*Gateway, error) {
	for _, r := range routes {
		r.pool = pools[r.Function]
		if r.pool == nil {
			return nil, fmt.Errorf("gateway: no pool for %s", r.Function)
		}
		r.segments = strings.Split(strings.Trim(r.Path, "/"), "/")
	}
	sorted := slices.Clone(routes)
	// The most specific route wins, as in API Gateway: literal segments before parameters.
	slices.SortStableFunc(sorted, func(a, b *Route) int { return literals(b.segments) - literals(a.segments) })
	return &Gateway{routes: sorted, pools: pools, tokens: devjwt.NewVerifier(keys), log: log, now: time.Now}, nil
}

func literals(segments []string) int {
	n := 0
	for _, s := range segments {
		if !strings.HasPrefix(s, "{") {
			n++
		}
	}
	return n
}

// Routes lists the served routes by key ("POST /runs/{runId}").
func (g *Gateway) Routes() []string {
	var out []string
	for _, r := range g.routes {
		out = append(out, r.Key())
	}
	slices.Sort(out)
	return out
}

// match finds the route for a method and an escaped path, with its decoded path parameters.
func (g *Gateway) match(method, escapedPath string) (*Route, map[string]string) {
	segments := strings.Split(strings.Trim(escapedPath, "/"), "/")
	for _, r := range g.routes {
		if r.Method != method || len(r.segments) != len(segments) {
			continue
		}
		params := map[string]string{}
		ok := true
		for i, s := range r.segments {
			if strings.HasPrefix(s, "{") {
				v, err := url.PathUnescape(segments[i])
				if err != nil || v == "" {
					ok = false
					break
				}
				params[strings.Trim(s, "{}")] = v
			} else if s != segments[i] {
				ok = false
				break
			}
		}
		if ok {
			return r, params
		}
	}
	return nil, nil
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	requestID := newRequestID()
	status, route, function := g.serve(w, req, requestID)
	// The path is not logged: on token routes it carries the token.
	g.log.Info("request", "requestId", requestID, "method", req.Method,
		"route", route, "function", function, "status", status, "latencyMs", time.Since(start).Milliseconds())
}

func (g *Gateway) serve(w http.ResponseWriter, req *http.Request, requestID string) (status int, route, function string) {
	w.Header().Set("Apigw-Requestid", requestID)
	if g.issuer != nil && strings.HasPrefix(req.URL.Path, devjwt.IssuerPath+"/") {
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		g.issuer.ServeHTTP(rec, req)
		return rec.status, devjwt.IssuerPath, ""
	}
	r, params := g.match(req.Method, req.URL.EscapedPath())
	if r == nil {
		return message(w, http.StatusNotFound, "Not Found"), "", ""
	}
	var claims devjwt.Claims
	var err error
	if r.Authorizer != samtemplate.NoAuthorizer {
		claims, err = g.authorize(req, r)
	}
	if err != nil {
		if err == errForbidden {
			// API Gateway's own 403 names nothing; the stand-in says which scopes the route
			// takes, as the functions' own checks do, so a developer sees what the token lacks.
			w.Header().Set("Www-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, strings.Join(r.Required, " ")))
			return message(w, http.StatusForbidden, "Forbidden"), r.Key(), ""
		}
		w.Header().Set("Www-Authenticate", `Bearer error="invalid_token"`)
		return message(w, http.StatusUnauthorized, "Unauthorized"), r.Key(), ""
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxBody+1))
	if err != nil {
		return message(w, http.StatusBadRequest, "Bad Request"), r.Key(), ""
	}
	if len(body) > MaxBody {
		return message(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large"), r.Key(), ""
	}
	event := g.event(req, r, params, claims, body, requestID)
	raw, err := json.Marshal(event)
	if err != nil {
		return message(w, http.StatusInternalServerError, "Internal Server Error"), r.Key(), r.Function
	}
	out, err := r.pool.Invoke(req.Context(), requestID, raw)
	if err != nil {
		g.log.Error("invoke failed", "requestId", requestID, "function", r.Function, "error", err)
		return message(w, http.StatusInternalServerError, "Internal Server Error"), r.Key(), r.Function
	}
	return writeResponse(w, out), r.Key(), r.Function
}

// statusWriter remembers the status written through it, for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader records status and writes it.
func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

var errForbidden = fmt.Errorf("gateway: forbidden")

// authorize is the JWT authorizer: a valid token from the issuer for the audience, then, when
// the route lists scopes, at least one of them among the token's.
func (g *Gateway) authorize(req *http.Request, r *Route) (devjwt.Claims, error) {
	token := strings.TrimSpace(req.Header.Get("Authorization"))
	if len(token) > 7 && strings.EqualFold(token[:7], "bearer ") {
		token = strings.TrimSpace(token[7:])
	}
	if token == "" {
		return nil, devjwt.ErrInvalid
	}
	var claims devjwt.Claims
	var err error
	for _, aud := range r.Audience {
		if claims, err = g.tokens.Verify(token, r.Issuer, aud, g.now()); err == nil {
			break
		}
	}
	if claims == nil {
		return nil, devjwt.ErrInvalid
	}
	if len(r.Required) > 0 {
		granted := tokenScopes(claims)
		if !slices.ContainsFunc(r.Required, func(s string) bool { return slices.Contains(granted, s) }) {
			return nil, errForbidden
		}
	}
	return claims, nil
}

func tokenScopes(c devjwt.Claims) []string {
	for _, name := range []string{"scope", "scp"} {
		switch v := c[name].(type) {
		case string:
			return strings.Fields(v)
		case []any:
			var out []string
			for _, s := range v {
				out = append(out, fmt.Sprint(s))
			}
			return out
		}
	}
	return nil
}

// event builds the payload format 2.0 event API Gateway sends for req.
func (g *Gateway) event(req *http.Request, r *Route, params map[string]string, claims devjwt.Claims, body []byte, requestID string) events.APIGatewayV2HTTPRequest {
	now := g.now()
	headers := map[string]string{}
	var cookies []string
	for name, values := range req.Header {
		lower := strings.ToLower(name)
		if lower == "cookie" {
			for _, v := range values {
				for _, c := range strings.Split(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		headers[lower] = strings.Join(values, ",")
	}
	headers["host"] = req.Host
	var query map[string]string
	if q := req.URL.Query(); len(q) > 0 {
		query = map[string]string{}
		for k, v := range q {
			query[k] = strings.Join(v, ",")
		}
	}
	if len(params) == 0 {
		params = nil
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              r.Key(),
		RawPath:               req.URL.EscapedPath(),
		RawQueryString:        req.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     r.Key(),
			AccountID:    "000000000000",
			Stage:        "$default",
			RequestID:    requestID,
			APIID:        "local",
			DomainName:   req.Host,
			DomainPrefix: strings.Split(req.Host, ".")[0],
			Time:         now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: req.Method, Path: req.URL.Path, Protocol: req.Proto,
				SourceIP: sourceIP(req.RemoteAddr), UserAgent: req.UserAgent(),
			},
		},
	}
	if claims != nil {
		ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: flatten(claims), Scopes: tokenScopes(claims)},
		}
	}
	if len(body) > 0 {
		if isText(headers["content-type"]) && utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
	}
	return ev
}

// flatten renders claims as API Gateway passes them to functions: every value a string, arrays
// as "[a b]".
func flatten(c devjwt.Claims) map[string]string {
	out := make(map[string]string, len(c))
	for k, v := range c {
		switch x := v.(type) {
		case string:
			out[k] = x
		case float64:
			out[k] = strconv.FormatFloat(x, 'f', -1, 64)
		case []string:
			out[k] = "[" + strings.Join(x, " ") + "]"
		case []any:
			parts := make([]string, len(x))
			for i, p := range x {
				parts[i] = fmt.Sprint(p)
			}
			out[k] = "[" + strings.Join(parts, " ") + "]"
		default:
			b, _ := json.Marshal(x)
			out[k] = string(b)
		}
	}
	return out
}

func isText(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return contentType == ""
	}
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt == "application/xml" || strings.HasSuffix(mt, "+xml") || mt == "application/x-www-form-urlencoded" ||
		mt == "application/javascript"
}

func sourceIP(remote string) string {
	if i := strings.LastIndex(remote, ":"); i > 0 {
		return strings.Trim(remote[:i], "[]")
	}
	return remote
}

// writeResponse writes a function's payload format 2.0 answer; anything else is the 500 API
// Gateway answers for a failed integration.
func writeResponse(w http.ResponseWriter, out []byte) int {
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode < 100 || resp.StatusCode > 599 {
		return message(w, http.StatusInternalServerError, "Internal Server Error")
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return message(w, http.StatusInternalServerError, "Internal Server Error")
		}
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
	return resp.StatusCode
}

// message answers as API Gateway itself does, before or instead of a function.
func message(w http.ResponseWriter, status int, text string) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"message":%q}`, text)
	return status
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Close stops every pool: the routes', the schedules', the streams' and the queues'.
func (g *Gateway) Close() {
	for _, p := range g.pools {
		p.Close()
	}
}

// Pool is the pool that runs function, or nil: for a tool that invokes a function with an event
// of its own, as the cold-start benchmark does.
func (g *Gateway) Pool(function string) *Pool { return g.pools[function] }
