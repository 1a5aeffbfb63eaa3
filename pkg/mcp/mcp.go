// Package mcp serves the host to agents over the Model Context Protocol: four tools through
// which an agent asks people (an approval, a question) and learns what they decided, each an
// ordinary interrupt of the host, so the events, subscriptions, mail, the page, the inbox and
// the reminders see it as any other. It speaks MCP's Streamable HTTP transport in its stateless
// form (JSON answers, no session kept between requests), so any instance of the function
// answers any request (docs/design.md, "Agents over MCP").
//
// The HTTP layer authenticates the caller (pkg/apigw/mcphttp) and hands the request on with it
// (ServeMCP); each tool checks the scope it needs, as each route of the API does.
package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Host is what the tools call: the host's own operations, as the API's routes call them.
type Host interface {
	RequestInterrupt(ctx context.Context, p interrupt.Principal, runID string, req host.Request) (host.InterruptView, bool, error)
	EndRun(ctx context.Context, p interrupt.Principal, runID string, end interrupt.RunStatus, reason string) (host.RunEnd, error)
	EndOwnRun(ctx context.Context, p interrupt.Principal, runID string, end interrupt.RunStatus, reason string) (host.RunEnd, error)
	InterruptOutcome(ctx context.Context, p interrupt.Principal, runID, interruptID string) (host.Outcome, error)
	PendingInterrupts(ctx context.Context, p interrupt.Principal, after string, limit int) (host.PendingPage, error)
	ApproveByPolicy(ctx context.Context, p interrupt.Principal, runID, interruptID string, ref interrupt.PolicyRef, m interrupt.StandingMatch) (host.Resolution, error)
}

// ToolAccess is who may call a tool: a JWT holding Scope (an engine's: an agent running as a
// service), or the agents' sign-in, whose interrupt.ScopeAgentsAsk every tool takes as its
// person asking as themself (caller.self).
type ToolAccess struct {
	Tool, Scope string
}

// Access is every tool's, in the order tools/list answers them: the one place the tools'
// scopes are named (each tool's check reads its entry), and the MCP rows of the host's table of
// who may do what (docs/operations.md). The scopes are the API's own for the same operations.
var Access = []ToolAccess{
	{"request_approval", "interrupts:write"},
	{"ask_question", "interrupts:write"},
	{"get_outcome", "runs:read"},
	{"list_pending", "runs:read"},
	{"end_run", "interrupts:write"},
}

// MaxWait bounds how long get_outcome waits for a decision within one call: under the 30 s an
// API Gateway integration may take, with room for the reads around the wait.
const MaxWait = 25 * time.Second

// Options are the server's choices.
type Options struct {
	// Version is the implementation's version, as initialize reports it.
	Version string
	// Poll is how often get_outcome reads the run's log while it waits; 0 means a second.
	Poll time.Duration
	// Log receives the errors a tool answers as internal (never an argument or a token).
	Log *slog.Logger
	// Policies are the tenants' tool policies request_approval asks under (package policy);
	// nil: no tenant has any, and an agent names who decides.
	Policies Policies
}

// Policies find the policy a call of a tool asks under: the tool's own, else the tenant's
// default, else none (nil); and match a call to its standing approvals.
type Policies interface {
	For(ctx context.Context, tenant, tool string) (*policy.Policy, error)
	Standing(p policy.Policy, args json.RawMessage) (interrupt.StandingMatch, bool)
}

// Server is the MCP endpoint over a host. Safe for concurrent requests: it keeps nothing
// between them.
type Server struct {
	host     Host
	policies Policies
	poll     time.Duration
	log      *slog.Logger
	handler  http.Handler
}

// New returns the endpoint over h.
func New(h Host, opts Options) *Server {
	s := &Server{host: h, policies: opts.Policies, poll: opts.Poll, log: opts.Log}
	if s.poll <= 0 {
		s.poll = time.Second
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "interrupt-host", Title: "Interrupt host", Version: opts.Version}, &sdk.ServerOptions{
		// What is served, and only that, none with listChanged (a stateless endpoint keeps no
		// stream to send the notification on; nothing changes while it runs): tools, logging,
		// and prompts and resources, which the SDK answers (there are none: empty lists, and a
		// read of any resource is not found). No completions: unserved (below).
		// Logging is deprecated from protocol 2026-07-28 (SEP-2577) and still answered: the
		// earlier versions this endpoint serves negotiate it.
		Capabilities: &sdk.ServerCapabilities{
			Tools: &sdk.ToolCapabilities{},
			//lint:ignore SA1019 served for the protocol versions before 2026-07-28
			Logging: &sdk.LoggingCapabilities{},
			Prompts: &sdk.PromptCapabilities{}, Resources: &sdk.ResourceCapabilities{},
		},
		Instructions: "Ask people and wait for them durably: request_approval or ask_question, then get_outcome until its status is not pending. " +
			"Pass the same runId and key again after a restart or a retry: you get the same interrupt, never a second ask.",
	})
	// The requests write, and the same runId and key again change nothing; the reads change
	// nothing at all, so a client need not ask its user before each poll.
	asks := &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(true)}
	reads := &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	addTool(srv, s, &sdk.Tool{Name: "request_approval", Description: requestApprovalDoc, Annotations: asks}, s.requestApproval)
	addTool(srv, s, &sdk.Tool{Name: "ask_question", Description: askQuestionDoc, Annotations: asks}, s.askQuestion)
	addTool(srv, s, &sdk.Tool{Name: "get_outcome", Description: getOutcomeDoc, Annotations: reads}, s.getOutcome)
	addTool(srv, s, &sdk.Tool{Name: "list_pending", Description: listPendingDoc, Annotations: reads}, s.listPending)
	ends := &sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(true), OpenWorldHint: new(false)}
	addTool(srv, s, &sdk.Tool{Name: "end_run", Description: endRunDoc, Annotations: ends}, s.endRun)
	srv.AddReceivingMiddleware(unserved)
	s.handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	return s
}

// unserved refuses completion, which the server does not declare, as JSON-RPC's method not
// found: a client reads the declared capabilities as what is there.
func unserved(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if strings.HasPrefix(method, "completion/") {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method + " (the server declares no completions)"}
		}
		return next(ctx, method, req)
	}
}

// addTool adds a tool whose handler's panic is a tool's internal error, logged: the SDK runs
// each call on a goroutine of its own, where a panic would end the process.
func addTool[In, Out any](srv *sdk.Server, s *Server, t *sdk.Tool, h sdk.ToolHandlerFor[In, Out]) {
	sdk.AddTool(srv, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (res *sdk.CallToolResult, out Out, err error) {
		defer func() {
			if v := recover(); v != nil {
				res, err = nil, s.toolError(ctx, t.Name, fmt.Errorf("panic: %v", v))
			}
		}()
		return h(ctx, req, in)
	})
}

// caller is who calls, and where the approval page is: what the HTTP layer authenticated.
// self is set for a caller that holds only the agents' scope: a person who asks as themself,
// in runs they began, and reads only what they asked.
type caller struct {
	principal interrupt.Principal
	base      string
	self      bool
}

type callerKey struct{}

// ServeMCP serves one MCP request of the authenticated principal p; the page links the tools
// answer are under base, the API's public URL.
func (s *Server) ServeMCP(w http.ResponseWriter, r *http.Request, p interrupt.Principal, base string) {
	ctx := context.WithValue(r.Context(), callerKey{}, caller{principal: p, base: strings.TrimSuffix(base, "/")})
	s.handler.ServeHTTP(w, r.WithContext(ctx))
}

// callerWith is the caller of tool, who must hold its scope (Access), else the agents' scope,
// which makes it a caller that asks as itself (caller.self).
func callerWith(ctx context.Context, tool string) (caller, error) {
	i := slices.IndexFunc(Access, func(a ToolAccess) bool { return a.Tool == tool })
	if i < 0 {
		return caller{}, fmt.Errorf("mcp: tool %s has no entry in Access", tool)
	}
	scope := Access[i].Scope
	c, ok := ctx.Value(callerKey{}).(caller)
	switch {
	case !ok:
		return c, interrupt.Errorf(interrupt.CodeUnauthorized, "the request carries no authenticated caller")
	case c.principal.Holds(scope):
	case c.principal.Holds(interrupt.ScopeAgentsAsk):
		c.self = true
	default:
		return c, interrupt.Errorf(interrupt.CodeForbidden, "this tool needs scope %s or %s", scope, interrupt.ScopeAgentsAsk)
	}
	return c, nil
}

// pageURL is where people decide the interrupt: its link without a credential, which signs
// them in.
func (c caller) pageURL(runID, interruptID string) string {
	return c.base + host.PagePath(runID, interruptID)
}

// toolError is err as the agent reads it: a refusal in the problem's words (its code, its
// message, each field), or an internal error, logged here and not shown. The SDK answers it as
// a tool result with isError set, so the model sees it and can correct its call.
func (s *Server) toolError(ctx context.Context, tool string, err error) error {
	var e *interrupt.Error
	if !errors.As(err, &e) {
		s.log.LogAttrs(ctx, slog.LevelError, "tool failed", slog.String("tool", tool), slog.String("error", err.Error()))
		return errors.New("internal: the host could not answer; call again")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Code, e.Message)
	for _, f := range e.Fields {
		fmt.Fprintf(&b, "; %s %s", f.Path, f.Message)
	}
	return errors.New(b.String())
}

// runAndKey are the run and the re-entry key of a request: a new run when none is named (its
// key then need not be), else the named run, whose key must be given, since the same run and
// key answer the same interrupt. The key is also the interrupt's node.
func runAndKey(runID, key, fallback string) (string, string, bool, error) {
	made := runID == ""
	if made {
		runID = host.AgentRunPrefix + strings.ToLower(rand.Text())
		if key == "" {
			key = fallback
		}
	}
	switch {
	case !runlog.ValidID(runID):
		return "", "", made, interrupt.Invalid("runId is not an id", interrupt.FieldError{Path: "/runId", Message: "must be 1 to 128 of A-Z a-z 0-9 . _ : -"})
	case key == "":
		return "", "", made, interrupt.Invalid("key is required with runId: the same runId and key answer the same interrupt",
			interrupt.FieldError{Path: "/key", Message: "is required with runId"})
	case !runlog.ValidID(key):
		return "", "", made, interrupt.Invalid("key is not an id", interrupt.FieldError{Path: "/key", Message: "must be 1 to 128 of A-Z a-z 0-9 . _ : -"})
	}
	return runID, key, made, nil
}
