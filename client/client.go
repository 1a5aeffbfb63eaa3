// Package client is the engine's side of the interrupt host: request an interrupt, resolve it,
// read a run's snapshot and events, wait for an interrupt's outcome, and verify the host's
// signed deliveries. It depends on nothing but the standard library, so an engine imports it
// without the host's own dependencies; its types are the wire shapes of openapi.yaml.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one host as one caller. Safe for concurrent use.
type Client struct {
	base   string
	bearer string
	http   *http.Client
	// PollInterval is how often Await reads the events when no delivery wakes it; 0 means 1s.
	PollInterval time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithBearer authenticates every call with a JWT (the API Gateway authorizer's).
func WithBearer(jwt string) Option { return func(c *Client) { c.bearer = jwt } }

// WithHTTPClient sends the calls with h instead of a client with a 30 s timeout.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New returns a client of the host whose API is at baseURL (the stack's ApiUrl output).
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimSuffix(baseURL, "/"), http: &http.Client{Timeout: 30 * time.Second}}
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
}

// FieldError names one failing JSON location of a refused body.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (p *Problem) Error() string {
	return fmt.Sprintf("interrupt host: %d %s: %s", p.Status, p.Code, p.Detail)
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

// do sends one call and decodes a 2xx answer into out (nil: none expected).
func (c *Client) do(ctx context.Context, method, path string, in, out any, opts ...CallOption) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		p := &Problem{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
		if json.Unmarshal(raw, p) != nil || p.Code == "" {
			p.Code, p.Detail = "http_"+strconv.Itoa(resp.StatusCode), strings.TrimSpace(string(raw))
		}
		p.Status = resp.StatusCode
		return p
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("interrupt host: %s %s answered %d with %.200s: %w", method, path, resp.StatusCode, raw, err)
	}
	return nil
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
}

// Request suspends the run at nodeID on an interrupt (payload is the InterruptPayload). The same
// payload key again answers the interrupt as the log has it: resolved, with its resumeValue,
// once someone resolved it.
func (c *Client) Request(ctx context.Context, runID, nodeID string, payload json.RawMessage, token *TokenRequest, opts ...CallOption) (Interrupt, error) {
	return c.request(ctx, runID, nodeID, "", payload, token, opts)
}

// RequestFrom is Request for an external-event interrupt that waits on the webhook endpoint
// endpointID: only that endpoint's events resolve it. A tenant holding more than one endpoint
// must name it.
func (c *Client) RequestFrom(ctx context.Context, runID, nodeID, endpointID string, payload json.RawMessage, token *TokenRequest, opts ...CallOption) (Interrupt, error) {
	return c.request(ctx, runID, nodeID, endpointID, payload, token, opts)
}

func (c *Client) request(ctx context.Context, runID, nodeID, endpointID string, payload json.RawMessage, token *TokenRequest, opts []CallOption) (Interrupt, error) {
	var out Interrupt
	in := struct {
		NodeID   string          `json:"nodeId"`
		Payload  json.RawMessage `json:"payload"`
		Token    *TokenRequest   `json:"token,omitempty"`
		Endpoint string          `json:"endpoint,omitempty"`
	}{nodeID, payload, token, endpointID}
	err := c.do(ctx, http.MethodPost, "/runs/"+esc(runID)+"/interrupts", in, &out, opts...)
	return out, err
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
// vote). A second resolve of a resolved interrupt is a Problem interrupt_already_resolved.
func (c *Client) Resolve(ctx context.Context, runID, nodeID string, resumeValue any, opts ...CallOption) (Resolution, error) {
	var out Resolution
	err := c.do(ctx, http.MethodPost, "/runs/"+esc(runID)+"/interrupts/"+esc(nodeID), map[string]any{"resumeValue": resumeValue}, &out, opts...)
	return out, err
}

// ResolveByToken resolves the interrupt a resolve token names; the token authenticates.
func (c *Client) ResolveByToken(ctx context.Context, token string, resumeValue any, opts ...CallOption) (Resolution, error) {
	var out Resolution
	err := c.do(ctx, http.MethodPost, "/interrupts/"+esc(token), map[string]any{"resumeValue": resumeValue}, &out, opts...)
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
