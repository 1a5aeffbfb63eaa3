// Package client is the engine's side of the interrupt host: request an interrupt, resolve it,
// read a run's snapshot and events, wait for an interrupt's outcome, and verify the host's
// signed deliveries. It depends on nothing but the standard library, so an engine imports it
// without the host's own dependencies; its types are the wire shapes of openapi.yaml.
package client

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Client calls one host as one caller. Safe for concurrent use.
type Client struct {
	base    string
	bearer  BearerSource
	http    *http.Client
	retries int
	// otherPayloads keeps a replay of another payload an answer (AcceptOtherPayloads).
	otherPayloads bool
	// PollInterval is how often Await reads the events when no delivery wakes it; 0 means 1s.
	PollInterval time.Duration
}

// Option configures a Client.
type Option func(*Client)

// AcceptOtherPayloads makes a request under a key that named another payload before answer the
// first request's interrupt without an error, as the host does (Interrupt.SamePayload false);
// without it, Request returns a *ReplayError.
func AcceptOtherPayloads() Option { return func(c *Client) { c.otherPayloads = true } }

// ReplayError is a request under a key that named another payload before: the host answered
// the interrupt first requested under it, which Interrupt is, and recorded nothing of this
// request. It is usually a key reused by mistake (two steps of a run sharing one).
type ReplayError struct {
	Interrupt Interrupt
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("interrupt host: key %q of run %s was requested before with another payload: interrupt %s is the first request's, and nothing of this one was recorded", e.Interrupt.Key, e.Interrupt.RunID, e.Interrupt.InterruptID)
}

// WithBearer authenticates every call with a JWT (the API Gateway authorizer's), the same for
// the client's life. A JWT expires (Cognito's in an hour) long before an approval is decided:
// a client that waits should take a WithBearerSource.
func WithBearer(jwt string) Option {
	return func(c *Client) {
		c.bearer = BearerFunc(func(context.Context, bool) (string, error) { return jwt, nil })
	}
}

// BearerSource gives the JWT a call sends: the same one until it expires, a new one when the
// host refused the last (refresh true, after a 401). An oauth2.TokenSource fits in a BearerFunc
// (its Token().AccessToken; golang.org/x/oauth2's ReuseTokenSource refreshes before expiry),
// without this module importing it.
type BearerSource interface {
	Bearer(ctx context.Context, refresh bool) (string, error)
}

// BearerFunc is a BearerSource of a function.
type BearerFunc func(ctx context.Context, refresh bool) (string, error)

// Bearer calls f.
func (f BearerFunc) Bearer(ctx context.Context, refresh bool) (string, error) { return f(ctx, refresh) }

// WithBearerSource authenticates every call with the JWT src gives; a call the host refuses as
// unauthenticated (401) is sent once more with a fresh one.
func WithBearerSource(src BearerSource) Option { return func(c *Client) { c.bearer = src } }

// WithHTTPClient sends the calls with h instead of a client with a 30 s timeout.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithRetries sets how many times a call is sent again after an answer that says to (429, a 503
// or 502/504 of the host or its gateway, a lost connection where retrying is safe): 0 sends
// every call once. The default is DefaultRetries.
func WithRetries(n int) Option { return func(c *Client) { c.retries = max(n, 0) } }

// DefaultRetries is how many times a call is sent again by default: with the backoff below, a
// call gives up after about 10 s of a host that keeps answering 503.
const DefaultRetries = 5

// New returns a client of the host whose API is at baseURL (the stack's ApiUrl output).
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimSuffix(baseURL, "/"), http: &http.Client{Timeout: 30 * time.Second}, retries: DefaultRetries}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Problem is the host's application/problem+json answer to a refused call.
type Problem struct {
	Status int          `json:"status"`
	Code   string       `json:"code"`
	Detail string       `json:"detail"`
	Errors []FieldError `json:"errors,omitempty"`
	// RetryAfter is the Retry-After header of a 503, if any.
	RetryAfter string `json:"-"`
	// Scope is the scope a 403 says the call needs, where its WWW-Authenticate challenge names
	// one.
	Scope string `json:"-"`
}

// gatewayCode is the code of a refusal the API's gateway answered itself, before the host ran
// ({"message": "Unauthorized"}): the host's code for the same refusal, so that a missing scope
// (forbidden) is told from a bad or expired token (unauthorized) in code; http_<status> for a
// status the host has no code of its own for.
func gatewayCode(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusRequestEntityTooLarge:
		return "payload_too_large"
	}
	return "http_" + strconv.Itoa(status)
}

// challengeScope is the scope a Bearer challenge names (scope="a b"), "" for none.
func challengeScope(challenge string) string {
	_, rest, ok := strings.Cut(challenge, `scope="`)
	if !ok {
		return ""
	}
	scope, _, _ := strings.Cut(rest, `"`)
	return scope
}

// FieldError names one failing JSON location of a refused body.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Error says the status, the code and the detail, and the first field error, which is most
// often what was wrong ("3 approvals can never come from the 2 principals of approversList").
func (p *Problem) Error() string {
	msg := fmt.Sprintf("interrupt host: %d %s: %s", p.Status, p.Code, p.Detail)
	if len(p.Errors) > 0 {
		msg += fmt.Sprintf(" (%s: %s", p.Errors[0].Path, p.Errors[0].Message)
		if n := len(p.Errors) - 1; n > 0 {
			msg += fmt.Sprintf("; and %d more", n)
		}
		msg += ")"
	}
	return msg
}

// IsCode reports whether err is a Problem with code (interrupt_already_resolved, ...).
func IsCode(err error, code string) bool {
	var p *Problem
	return errors.As(err, &p) && p.Code == code
}

// CallOption adds to one call.
type CallOption func(*http.Request)

// IdempotencyKey sends an Idempotency-Key: a retry with the same key answers the first answer.
func IdempotencyKey(key string) CallOption {
	return func(r *http.Request) { r.Header.Set("Idempotency-Key", key) }
}

// do sends one call and decodes a 2xx answer into out (nil: none expected), sending it again
// (retry) while the host's answer says to.
func (c *Client) do(ctx context.Context, method, path string, in, out any, opts ...CallOption) error {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = b
	}
	refreshed, refresh := false, false
	for attempt := 0; ; attempt++ {
		a := c.send(ctx, method, path, body, refresh, opts)
		refresh = false
		if a.status == http.StatusUnauthorized && !refreshed && c.bearer != nil {
			refreshed, refresh = true, true // once, with a fresh token: the one sent may have expired
			continue
		}
		wait, again := retry(method, opts, a, attempt, c.retries)
		if again {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
			continue
		}
		if a.err != nil {
			return a.err
		}
		if a.status < 200 || a.status > 299 {
			p := &Problem{Status: a.status, RetryAfter: a.header.Get("Retry-After")}
			if json.Unmarshal(a.body, p) != nil || p.Code == "" {
				p.Code, p.Detail = gatewayCode(a.status), strings.TrimSpace(string(a.body))
			}
			p.Status, p.Scope = a.status, challengeScope(a.header.Get("WWW-Authenticate"))
			return p
		}
		if out == nil || a.status == http.StatusNoContent {
			return nil
		}
		if err := json.Unmarshal(a.body, out); err != nil {
			return fmt.Errorf("interrupt host: %s %s answered %d with %.200s: %w", method, path, a.status, a.body, err)
		}
		if created, ok := out.(interface{ setCreated(bool) }); ok {
			created.setCreated(a.status == http.StatusCreated)
		}
		return nil
	}
}

// answer is what one attempt of a call came back with: the host's status, headers and body (at
// most 8 MiB of it), or the error that kept it from answering (err, the others zero) or its
// body from being read.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// send sends one attempt of a call.
func (c *Client) send(ctx context.Context, method, path string, body []byte, refresh bool, opts []CallOption) answer {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return answer{err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.bearer != nil {
		jwt, err := c.bearer.Bearer(ctx, refresh)
		if err != nil {
			return answer{err: fmt.Errorf("interrupt host: the bearer token: %w", err)}
		}
		req.Header.Set("Authorization", "Bearer "+jwt)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	return answer{status: resp.StatusCode, header: resp.Header, body: raw, err: err}
}

// retry says whether an attempt's answer a calls for another, and after how long: a 429, a 502,
// 503 or 504 (the host's unavailable, which wrote nothing, or its gateway's), after Retry-After
// when the host sends one, else full-jitter exponential backoff (100 ms doubling, at most 3 s);
// a lost connection, or the host's outcome_unknown, only for a call that is safe to send again:
// a read, a PUT or DELETE, or a write carrying an Idempotency-Key (Request and the resolves
// always do). Never a refusal of what was asked, never past retries.
func retry(method string, opts []CallOption, a answer, attempt, retries int) (time.Duration, bool) {
	if attempt >= retries || errors.Is(a.err, context.Canceled) || errors.Is(a.err, context.DeadlineExceeded) {
		return 0, false
	}
	probe := &http.Request{Header: http.Header{}}
	for _, o := range opts {
		o(probe)
	}
	safe := method == http.MethodGet || method == http.MethodHead || method == http.MethodPut || method == http.MethodDelete || probe.Header.Get("Idempotency-Key") != ""
	switch {
	case a.err != nil:
		if !safe {
			return 0, false
		}
	case a.status == http.StatusTooManyRequests, a.status == http.StatusBadGateway, a.status == http.StatusGatewayTimeout:
	case a.status == http.StatusServiceUnavailable:
		// outcome_unknown is a 503 too: the write may have landed, so only a safe call is sent
		// again (it answers what happened).
		var p struct{ Code string }
		if _ = json.Unmarshal(a.body, &p); p.Code == "outcome_unknown" && !safe {
			return 0, false
		}
	default:
		return 0, false
	}
	if s, perr := strconv.Atoi(a.header.Get("Retry-After")); a.err == nil && perr == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, 30*time.Second), true
	}
	backoff := min(100*time.Millisecond<<attempt, 3*time.Second)
	return time.Duration(rand.Int64N(int64(backoff) + 1)), true
}

// idempotent is opts with an Idempotency-Key of its own when they carry none, so that every
// attempt of a write is one write.
func idempotent(opts []CallOption) []CallOption {
	probe := &http.Request{Header: http.Header{}}
	for _, o := range opts {
		o(probe)
	}
	if probe.Header.Get("Idempotency-Key") != "" {
		return opts
	}
	return append(slices.Clone(opts), IdempotencyKey(newKey()))
}

// newKey is a fresh Idempotency-Key: 128 random bits, hex.
func newKey() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func esc(s string) string { return url.PathEscape(s) }

// Token is a signed token minted for an interrupt.
type Token struct {
	Token     string `json:"token"`
	Intent    string `json:"intent"`
	ExpiresAt string `json:"expiresAt"`
	// URL is the approval page the token opens (Mint answers it; a request's tokens have none).
	URL string `json:"url,omitempty"`
}

// TokenRequest asks for a token with the interrupt: intent "resolve" or "inspect".
type TokenRequest struct {
	Intent    string `json:"intent"`
	TTLMs     int64  `json:"ttlMs,omitempty"`
	Principal string `json:"principal,omitempty"`
}

// Interrupt is an interrupt as request-interrupt answers it.
type Interrupt struct {
	RunID       string          `json:"runId"`
	NodeID      string          `json:"nodeId"`
	InterruptID string          `json:"interruptId"`
	Key         string          `json:"key"`
	Kind        string          `json:"kind"`
	Status      string          `json:"status"`
	ResumeValue json.RawMessage `json:"resumeValue,omitempty"`
	Seq         int64           `json:"seq"`
	Tokens      []Token         `json:"tokens"`
	// Created is true when this call requested it (201), false when the payload's key had been
	// requested before and this is that interrupt as it stands (200: a replay).
	Created bool `json:"-"`
	// SamePayload is set on a replay: whether the payload sent is the one first requested under
	// the key. False means this call sent another request under an old key, and was answered
	// the first one.
	SamePayload *bool `json:"samePayload,omitempty"`
}

func (in *Interrupt) setCreated(created bool) { in.Created = created }

// Request suspends the run at nodeID on an interrupt (payload is the InterruptPayload). The same
// payload key again answers the interrupt as the log has it: resolved, with its resumeValue,
// once someone resolved it; the same key with another payload answers it too, with a
// *ReplayError (AcceptOtherPayloads keeps that an answer). RequestWith sends what the host keeps beside a payload (whom to ask,
// reminders, escalation).
func (c *Client) Request(ctx context.Context, runID, nodeID string, payload json.RawMessage, token *TokenRequest, opts ...CallOption) (Interrupt, error) {
	return c.RequestWith(ctx, runID, InterruptRequest{NodeID: nodeID, Payload: payload, Token: token}, opts...)
}

// RequestFrom is Request for an external-event interrupt that waits on the webhook endpoint
// endpointID: only that endpoint's events resolve it. A tenant holding more than one endpoint
// must name it.
func (c *Client) RequestFrom(ctx context.Context, runID, nodeID, endpointID string, payload json.RawMessage, token *TokenRequest, opts ...CallOption) (Interrupt, error) {
	return c.RequestWith(ctx, runID, InterruptRequest{NodeID: nodeID, Payload: payload, Token: token, Endpoint: endpointID}, opts...)
}

// RequestWith is Request with every member of the request: the payload and what the host keeps
// beside it.
func (c *Client) RequestWith(ctx context.Context, runID string, r InterruptRequest, opts ...CallOption) (Interrupt, error) {
	var out Interrupt
	err := c.do(ctx, http.MethodPost, "/runs/"+esc(runID)+"/interrupts", r, &out, idempotent(opts)...)
	if err == nil && !out.Created && out.SamePayload != nil && !*out.SamePayload && !c.otherPayloads {
		return out, &ReplayError{Interrupt: out}
	}
	return out, err
}

// InterruptRequest is request-interrupt's body: the InterruptPayload at a node, and what the host
// keeps beside it, since the payload is closed. A test of the host's repository holds its members
// to openapi.yaml's.
type InterruptRequest struct {
	NodeID  string          `json:"nodeId"`
	Payload json.RawMessage `json:"payload"`
	// Token asks for a token minted with the interrupt.
	Token *TokenRequest `json:"token,omitempty"`
	// Endpoint is the webhook endpoint an external-event interrupt waits on (RequestFrom).
	Endpoint string `json:"endpoint,omitempty"`
	// Reminders and Escalation follow up an interrupt a person decides while it waits;
	// omitted, the deployment's defaults.
	Reminders  *Reminders  `json:"reminders,omitempty"`
	Escalation *Escalation `json:"escalation,omitempty"`
	// Display is how, and to whom, people are shown it: a clarification's Audience is whom to
	// ask (its payload names no one), RequesterName who asks as people know it.
	Display *Display `json:"display,omitempty"`
	// ToolCall is, for an approval, the exact call it allows (ToolCall).
	ToolCall *ToolCall `json:"toolCall,omitempty"`
	// Policy asks under the tenant's policy of the call's tool (PutPolicy): the payload then
	// names none of who decides, the quorum, the actions or the deadline, which are the policy's.
	Policy string `json:"policy,omitempty"`
}

// Reminders are Count reminders to whom has not decided yet, the first AfterMs after the
// request, then one every EveryMs (required for more than one).
type Reminders struct {
	AfterMs int64 `json:"afterMs"`
	EveryMs int64 `json:"everyMs,omitempty"`
	Count   int   `json:"count"`
}

// Escalation notifies To once, AfterMs after the request, if it is still pending; it widens
// nothing.
type Escalation struct {
	AfterMs int64 `json:"afterMs"`
	To      []Ref `json:"to"`
	// Delegate hands the decision on: from the escalation, each principal of To decides in
	// the place of each approver of approversList who has not voted.
	Delegate bool `json:"delegate,omitempty"`
}

// Ref names a principal, a group or a role (Kind "principal", "group", "role").
type Ref struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
}

// Display is how, and to whom, people are shown an interrupt.
type Display struct {
	RequesterName string   `json:"requesterName,omitempty"`
	ArtifactURL   string   `json:"artifactUrl,omitempty"`
	Audience      []string `json:"audience,omitempty"`
	// Title and Description are a question's (a clarification's payload has neither): its
	// heading and what its people need to know. An approval's are in its payload's data.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// Resolution is the answer of a resolve.
type Resolution struct {
	RunID       string          `json:"runId"`
	NodeID      string          `json:"nodeId"`
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Seq         int64           `json:"seq"`
	Tally       json.RawMessage `json:"tally,omitempty"`
	ResumeValue json.RawMessage `json:"resumeValue,omitempty"`
}

// Resolve resolves the interrupt pending at nodeID as the caller (an approval: casts the caller's
// vote). A second resolve of a resolved interrupt is a Problem interrupt_already_resolved. It
// carries an Idempotency-Key, the caller's (IdempotencyKey) or one of its own, so that its
// retries are one resolve.
func (c *Client) Resolve(ctx context.Context, runID, nodeID string, resumeValue any, opts ...CallOption) (Resolution, error) {
	var out Resolution
	err := c.do(ctx, http.MethodPost, "/runs/"+esc(runID)+"/interrupts/"+esc(nodeID), map[string]any{"resumeValue": resumeValue}, &out, idempotent(opts)...)
	return out, err
}

// ResolveByToken resolves the interrupt a resolve token names; the token authenticates.
func (c *Client) ResolveByToken(ctx context.Context, token string, resumeValue any, opts ...CallOption) (Resolution, error) {
	var out Resolution
	err := c.do(ctx, http.MethodPost, "/interrupts/"+esc(token), map[string]any{"resumeValue": resumeValue}, &out, idempotent(opts)...)
	return out, err
}

// Inspect reads the InterruptPayload a token names.
func (c *Client) Inspect(ctx context.Context, token string) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.do(ctx, http.MethodGet, "/interrupts/"+esc(token), nil, &out)
	return out, err
}

// Snapshot is a run as get-run answers it.
type Snapshot struct {
	RunID         string `json:"runId"`
	Status        string `json:"status"`
	CurrentNodeID string `json:"currentNodeId,omitempty"`
	Pending       []struct {
		NodeID      string `json:"nodeId"`
		InterruptID string `json:"interruptId"`
		Kind        string `json:"kind"`
	} `json:"pending"`
	LastSeq int64 `json:"lastSeq"`
}

// Snapshot reads the run's state.
func (c *Client) Snapshot(ctx context.Context, runID string) (Snapshot, error) {
	var out Snapshot
	err := c.do(ctx, http.MethodGet, "/runs/"+esc(runID), nil, &out)
	return out, err
}

// Event is an event as list-events returns it (and as a delivery's data carries it).
type Event struct {
	Seq         int64           `json:"seq"`
	Index       int             `json:"index"`
	Type        string          `json:"type"`
	RunID       string          `json:"runId"`
	NodeID      string          `json:"nodeId,omitempty"`
	InterruptID string          `json:"interruptId,omitempty"`
	At          string          `json:"at"`
	Payload     json.RawMessage `json:"payload"`
}

// Page is one page of a run's events; Next is the cursor of the page after it.
type Page struct {
	Events []Event `json:"events"`
	Next   int64   `json:"next"`
}

// Events reads the run's events after the cursor after (0: from the start), a page at a time:
// pass Next back to read on. A page at the end of the log is empty, with Next unchanged.
func (c *Client) Events(ctx context.Context, runID string, after int64, opts ...EventsOption) (Page, error) {
	q := url.Values{"after": {strconv.FormatInt(after, 10)}}
	for _, opt := range opts {
		opt(q)
	}
	var out Page
	err := c.do(ctx, http.MethodGet, "/runs/"+esc(runID)+"/events?"+q.Encode(), nil, &out)
	return out, err
}

// EventsOption sets a query parameter of Events.
type EventsOption func(url.Values)

// Updates lists the state updates only, without the debug detail (votes, asks, agent
// decisions); a page may then hold no event, with Next past the commits it read.
func Updates() EventsOption { return func(q url.Values) { q.Set("mode", "updates") } }

// Limit reads at most n commits (1 to 1000) in the page.
func Limit(n int) EventsOption { return func(q url.Values) { q.Set("limit", strconv.Itoa(n)) } }

// Mint mints a signed token for the interrupt pending at the run's node: an inspect token, or a
// resolve token deciding as req.Principal (a caller holding tokens:delegate mints for anyone).
func (c *Client) Mint(ctx context.Context, runID, nodeID string, req TokenRequest) (Token, error) {
	var out Token
	err := c.do(ctx, http.MethodPost, "/runs/"+esc(runID)+"/interrupts/"+esc(nodeID)+"/tokens", req, &out)
	return out, err
}

// Cancel ends the run as cancelled, Complete as completed; reason is optional. The run's
// pending interrupts end with it.
func (c *Client) Cancel(ctx context.Context, runID, reason string, opts ...CallOption) error {
	return c.do(ctx, http.MethodPost, "/runs/"+esc(runID)+"/cancel", map[string]string{"reason": reason}, nil, opts...)
}

// Complete ends the run as completed.
func (c *Client) Complete(ctx context.Context, runID, reason string, opts ...CallOption) error {
	return c.do(ctx, http.MethodPost, "/runs/"+esc(runID)+"/complete", map[string]string{"reason": reason}, nil, opts...)
}
