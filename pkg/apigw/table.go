package apigw

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Operation is one route of the API, as template.yaml deploys it and openapi.yaml documents it
// (TestTheTableIsTheTemplate and TestTheTableIsTheDocument hold all three to one another).
type Operation struct {
	// Route is API Gateway's route key: "POST /runs/{runId}/interrupts".
	Route string
	// Function is the function serving it: its folder under functions/.
	Function string
	// Scopes are the JWT scopes any one of which opens the route; none: API Gateway serves it
	// without its JWT authorizer, and the function authenticates what the request holds.
	Scopes []string
	// serve answers with JSON; page with the approval page's HTML, and crash with its page when
	// page panics. Either serve or page and crash are set.
	serve func(*API, context.Context, *call) (reply, error)
	page  func(*API, context.Context, *call) (events.APIGatewayV2HTTPResponse, error)
	crash func() events.APIGatewayV2HTTPResponse
}

// Routes are one function's operations. Each function's main serves its own (API.Serve), and
// nothing else refers to them but Functions: so a function's binary links the handlers of its
// routes and not the others' (the approval page's templates, the subscriptions' code). The
// tables are literals of constants, which the compiler lays out as data rather than building
// at init, where they would all be linked into every function.
type Routes struct {
	// Function is the function's folder under functions/ and its name in template.yaml.
	Function   string
	Operations []Operation
}

// The functions of the API and their routes: adding a route is an entry here, its handler, its
// route in template.yaml and its operation in openapi.yaml; adding a function is a Routes here,
// in Functions, and its main.
var (
	RequestInterrupt = Routes{Function: "request-interrupt", Operations: []Operation{
		{Route: "POST /runs/{runId}/interrupts", Scopes: []string{ScopeInterruptsWrite}, serve: (*API).requestInterrupt},
	}}
	ResolveByRun = Routes{Function: "resolve-by-run", Operations: []Operation{
		{Route: "POST /runs/{runId}/interrupts/{nodeId}", Scopes: []string{ScopeApprovalsRespond}, serve: (*API).resolveByRun},
	}}
	MintToken = Routes{Function: "mint-token", Operations: []Operation{
		{Route: "POST /runs/{runId}/interrupts/{nodeId}/tokens", Scopes: []string{ScopeInterruptsWrite, ScopeApprovalsRespond, ScopeTokensDelegate}, serve: (*API).mintToken},
	}}
	InspectByToken = Routes{Function: "inspect-by-token", Operations: []Operation{
		{Route: "GET /interrupts/{token}", serve: (*API).inspectByToken},
		{Route: "HEAD /interrupts/{token}", serve: (*API).inspectByToken},
	}}
	ResolveByToken = Routes{Function: "resolve-by-token", Operations: []Operation{
		{Route: "POST /interrupts/{token}", serve: (*API).resolveByToken},
	}}
	GetRun = Routes{Function: "get-run", Operations: []Operation{
		{Route: "GET /runs/{runId}", Scopes: []string{ScopeRunsRead}, serve: (*API).getRun},
		{Route: "GET /interrupts", Scopes: []string{ScopeRunsRead}, serve: (*API).listPending},
	}}
	ListEvents = Routes{Function: "list-events", Operations: []Operation{
		{Route: "GET /runs/{runId}/events", Scopes: []string{ScopeRunsRead}, serve: (*API).listEvents},
	}}
	EndRun = Routes{Function: "end-run", Operations: []Operation{
		{Route: "POST /runs/{runId}/cancel", Scopes: []string{ScopeInterruptsWrite}, serve: (*API).cancelRun},
		{Route: "POST /runs/{runId}/complete", Scopes: []string{ScopeInterruptsWrite}, serve: (*API).completeRun},
	}}
	ConfigureRun = Routes{Function: "configure-run", Operations: []Operation{
		{Route: "PUT /runs/{runId}/configurable", Scopes: []string{ScopeRunsConfigure}, serve: (*API).configureRun},
	}}
	AgentDecisions = Routes{Function: "agent-decisions", Operations: []Operation{
		{Route: "POST /runs/{runId}/agent-decisions", Scopes: []string{ScopeInterruptsWrite}, serve: (*API).agentDecisions},
	}}
	Discovery = Routes{Function: "discovery", Operations: []Operation{
		{Route: "GET /.well-known/interrupt-host", serve: (*API).discovery},
	}}
	WebhookEndpoints = Routes{Function: "webhook-endpoints", Operations: []Operation{
		{Route: "POST /webhook-endpoints", Scopes: []string{ScopeWebhooksManage}, serve: (*API).createEndpoint},
		{Route: "GET /webhook-endpoints", Scopes: []string{ScopeWebhooksManage}, serve: (*API).listEndpoints},
		{Route: "GET /webhook-endpoints/{id}", Scopes: []string{ScopeWebhooksManage}, serve: (*API).getEndpoint},
		{Route: "DELETE /webhook-endpoints/{id}", Scopes: []string{ScopeWebhooksManage}, serve: (*API).deleteEndpoint},
		{Route: "PUT /webhook-endpoints/{id}/secrets", Scopes: []string{ScopeWebhooksManage}, serve: (*API).replaceSecrets},
	}}
	WebhookIngest = Routes{Function: "webhook-ingest", Operations: []Operation{
		{Route: "POST /webhooks/{endpointId}", serve: (*API).ingestWebhook},
	}}
	Subscriptions = Routes{Function: "subscriptions", Operations: []Operation{
		{Route: "POST /subscriptions", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).createSubscription},
		{Route: "GET /subscriptions", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).listSubscriptions},
		{Route: "GET /subscriptions/{id}", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).getSubscription},
		{Route: "DELETE /subscriptions/{id}", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).deleteSubscription},
		{Route: "GET /subscriptions/{id}/deliveries", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).listDeliveries},
		{Route: "POST /subscriptions/{id}/deliveries", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).resendDelivery},
	}}
	ApprovalPage = Routes{Function: "approval-page", Operations: []Operation{
		{Route: "GET /approve/{token}", page: (*API).pageByToken, crash: pageCrash},
		{Route: "HEAD /approve/{token}", page: (*API).pageByToken, crash: pageCrash},
		{Route: "POST /approve/{token}", page: (*API).pageByToken, crash: pageCrash},
		{Route: "GET /approve/{runId}/{interruptId}", page: (*API).pageSignedIn, crash: pageCrash},
		{Route: "HEAD /approve/{runId}/{interruptId}", page: (*API).pageSignedIn, crash: pageCrash},
		{Route: "POST /approve/{runId}/{interruptId}", page: (*API).pageSignedIn, crash: pageCrash},
		{Route: "GET /signin/callback", page: (*API).signInCallback, crash: pageCrash},
		{Route: "POST /signin/signout", page: (*API).signOut, crash: pageCrash},
	}}
)

// Functions are every function that serves the API, in the order of the table above.
func Functions() []Routes {
	return []Routes{RequestInterrupt, ResolveByRun, MintToken, InspectByToken, ResolveByToken, GetRun, ListEvents, EndRun, ConfigureRun, AgentDecisions, Discovery, WebhookEndpoints, WebhookIngest, Subscriptions, ApprovalPage}
}

// Operations are every route of the API, each naming its function.
func Operations() []Operation {
	var ops []Operation
	for _, r := range Functions() {
		for _, o := range r.Operations {
			o.Function = r.Function
			ops = append(ops, o)
		}
	}
	return ops
}

// Serve is the handler of a function: each of its routes with its own scope check, chosen by
// the event's route key. A route key the function does not serve (a mis-wired gateway) is 404.
func (a *API) Serve(r Routes) Handler {
	routes := map[string]Handler{}
	for _, o := range r.Operations {
		if o.page != nil {
			page := o.page
			routes[o.Route] = a.observed(o.crash, func(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
				return page(a, ctx, c)
			})
			continue
		}
		serve := o.serve
		routes[o.Route] = a.routeAny(o.Scopes, func(ctx context.Context, c *call) (reply, error) { return serve(a, ctx, c) })
	}
	unknown := a.routeAny(nil, func(context.Context, *call) (reply, error) {
		return reply{}, interrupt.Errorf(interrupt.CodeNotFound, "no such operation")
	})
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		if h, ok := routes[req.RouteKey]; ok {
			return h(ctx, req)
		}
		return unknown(ctx, req)
	}
}

// Function is Serve of the function named function (its folder under functions/), for tests
// and tools that pick a function by name; it links every function's routes.
func (a *API) Function(function string) (Handler, error) {
	for _, r := range Functions() {
		if r.Function == function {
			return a.Serve(r), nil
		}
	}
	return nil, fmt.Errorf("apigw: no function %q serves an operation", function)
}
