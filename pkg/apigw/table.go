package apigw

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Needs are what a function builds at init beside its handlers, read from its operations.
type Needs uint8

const (
	// NeedsRunLog: the host over the run-log table.
	NeedsRunLog Needs = 1 << iota
	// NeedsKeyring: the token keyring (tokens minted or verified, the page's cookies).
	NeedsKeyring
	// NeedsWebhookSecrets: the webhook endpoints' signing secrets.
	NeedsWebhookSecrets
	// NeedsSignIn: the approval page's sign-in with the identity provider.
	NeedsSignIn
	// NeedsSubscriptions: the outbound subscriptions (their store and secrets), without a host.
	NeedsSubscriptions
	// NeedsDelivery: a deliverer beside the subscriptions (the run log, the keyring for signed
	// approval links, the public base URL), for an operator's resend.
	NeedsDelivery
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
	Needs  Needs
	// serve answers with JSON; page with the approval page's HTML. One of the two is set.
	serve func(*API, context.Context, *call) (reply, error)
	page  func(*API, context.Context, *call) (events.APIGatewayV2HTTPResponse, error)
}

// Shorthands of the table.
var (
	writers, readers, anyone    = []string{ScopeInterruptsWrite}, []string{ScopeRunsRead}, []string(nil)
	onHost, withKeys, withHooks = NeedsRunLog, NeedsRunLog | NeedsKeyring, NeedsRunLog | NeedsWebhookSecrets
	onPage                      = NeedsRunLog | NeedsKeyring | NeedsSignIn
)

// Operations are every route of the API: adding one is an entry here, its handler, its route in
// template.yaml and its operation in openapi.yaml.
var Operations = []Operation{
	{Route: "POST /runs/{runId}/interrupts", Function: "request-interrupt", Scopes: writers, Needs: withKeys, serve: (*API).requestInterrupt},
	{Route: "POST /runs/{runId}/interrupts/{nodeId}", Function: "resolve-by-run", Scopes: []string{ScopeApprovalsRespond}, Needs: onHost, serve: (*API).resolveByRun},
	{Route: "POST /runs/{runId}/interrupts/{nodeId}/tokens", Function: "mint-token", Scopes: []string{ScopeInterruptsWrite, ScopeApprovalsRespond, ScopeTokensDelegate}, Needs: withKeys, serve: (*API).mintToken},
	{Route: "GET /interrupts/{token}", Function: "inspect-by-token", Scopes: anyone, Needs: withKeys, serve: (*API).inspectByToken},
	{Route: "HEAD /interrupts/{token}", Function: "inspect-by-token", Scopes: anyone, Needs: withKeys, serve: (*API).inspectByToken},
	{Route: "POST /interrupts/{token}", Function: "resolve-by-token", Scopes: anyone, Needs: withKeys, serve: (*API).resolveByToken},
	{Route: "GET /runs/{runId}", Function: "get-run", Scopes: readers, Needs: onHost, serve: (*API).getRun},
	{Route: "GET /interrupts", Function: "get-run", Scopes: readers, Needs: onHost, serve: (*API).listPending},
	{Route: "GET /runs/{runId}/events", Function: "list-events", Scopes: readers, Needs: onHost, serve: (*API).listEvents},
	{Route: "POST /runs/{runId}/cancel", Function: "end-run", Scopes: writers, Needs: onHost, serve: (*API).cancelRun},
	{Route: "POST /runs/{runId}/complete", Function: "end-run", Scopes: writers, Needs: onHost, serve: (*API).completeRun},
	{Route: "PUT /runs/{runId}/configurable", Function: "configure-run", Scopes: []string{ScopeRunsConfigure}, Needs: onHost, serve: (*API).configureRun},
	{Route: "POST /runs/{runId}/agent-decisions", Function: "agent-decisions", Scopes: writers, Needs: onHost, serve: (*API).agentDecisions},
	{Route: "GET /.well-known/interrupt-host", Function: "discovery", Scopes: anyone, serve: (*API).discovery},
	{Route: "POST /webhook-endpoints", Function: "webhook-endpoints", Scopes: []string{ScopeWebhooksManage}, Needs: withHooks, serve: (*API).createEndpoint},
	{Route: "GET /webhook-endpoints", Function: "webhook-endpoints", Scopes: []string{ScopeWebhooksManage}, Needs: withHooks, serve: (*API).listEndpoints},
	{Route: "GET /webhook-endpoints/{id}", Function: "webhook-endpoints", Scopes: []string{ScopeWebhooksManage}, Needs: withHooks, serve: (*API).getEndpoint},
	{Route: "DELETE /webhook-endpoints/{id}", Function: "webhook-endpoints", Scopes: []string{ScopeWebhooksManage}, Needs: withHooks, serve: (*API).deleteEndpoint},
	{Route: "PUT /webhook-endpoints/{id}/secrets", Function: "webhook-endpoints", Scopes: []string{ScopeWebhooksManage}, Needs: withHooks, serve: (*API).replaceSecrets},
	{Route: "POST /webhooks/{endpointId}", Function: "webhook-ingest", Scopes: anyone, Needs: withHooks, serve: (*API).ingestWebhook},
	{Route: "POST /subscriptions", Function: "subscriptions", Scopes: []string{ScopeSubscriptionsManage}, Needs: NeedsSubscriptions, serve: (*API).createSubscription},
	{Route: "GET /subscriptions", Function: "subscriptions", Scopes: []string{ScopeSubscriptionsManage}, Needs: NeedsSubscriptions, serve: (*API).listSubscriptions},
	{Route: "GET /subscriptions/{id}", Function: "subscriptions", Scopes: []string{ScopeSubscriptionsManage}, Needs: NeedsSubscriptions, serve: (*API).getSubscription},
	{Route: "DELETE /subscriptions/{id}", Function: "subscriptions", Scopes: []string{ScopeSubscriptionsManage}, Needs: NeedsSubscriptions, serve: (*API).deleteSubscription},
	{Route: "GET /subscriptions/{id}/deliveries", Function: "subscriptions", Scopes: []string{ScopeSubscriptionsManage}, Needs: NeedsSubscriptions, serve: (*API).listDeliveries},
	{Route: "POST /subscriptions/{id}/deliveries", Function: "subscriptions", Scopes: []string{ScopeSubscriptionsManage}, Needs: NeedsSubscriptions | NeedsDelivery, serve: (*API).resendDelivery},
	{Route: "GET /approve/{token}", Function: "approval-page", Scopes: anyone, Needs: onPage, page: (*API).pageByToken},
	{Route: "HEAD /approve/{token}", Function: "approval-page", Scopes: anyone, Needs: onPage, page: (*API).pageByToken},
	{Route: "POST /approve/{token}", Function: "approval-page", Scopes: anyone, Needs: onPage, page: (*API).pageByToken},
	{Route: "GET /approve/{runId}/{interruptId}", Function: "approval-page", Scopes: anyone, Needs: onPage, page: (*API).pageSignedIn},
	{Route: "HEAD /approve/{runId}/{interruptId}", Function: "approval-page", Scopes: anyone, Needs: onPage, page: (*API).pageSignedIn},
	{Route: "POST /approve/{runId}/{interruptId}", Function: "approval-page", Scopes: anyone, Needs: onPage, page: (*API).pageSignedIn},
	{Route: "GET /signin/callback", Function: "approval-page", Scopes: anyone, Needs: onPage, page: (*API).signInCallback},
	{Route: "POST /signin/signout", Function: "approval-page", Scopes: anyone, Needs: onPage, page: (*API).signOut},
}

// Functions are the functions that serve the API, in the order of Operations.
func Functions() []string {
	var names []string
	for _, o := range Operations {
		if !slices.Contains(names, o.Function) {
			names = append(names, o.Function)
		}
	}
	return names
}

// NeedsOf is what function builds at init: what its operations need together.
func NeedsOf(function string) (Needs, error) {
	var n Needs
	found := false
	for _, o := range Operations {
		if o.Function == function {
			n, found = n|o.Needs, true
		}
	}
	if !found {
		return 0, fmt.Errorf("apigw: no function %q serves an operation", function)
	}
	return n, nil
}

// Function is the handler of a function: each of its routes with its own scope check, chosen by
// the event's route key. A route key the function does not serve (a mis-wired gateway) is 404.
func (a *API) Function(function string) (Handler, error) {
	routes := map[string]Handler{}
	for _, o := range Operations {
		if o.Function != function {
			continue
		}
		if o.page != nil {
			page := o.page
			routes[o.Route] = a.observed(pageCrash, func(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
				return page(a, ctx, c)
			})
			continue
		}
		serve := o.serve
		routes[o.Route] = a.routeAny(o.Scopes, func(ctx context.Context, c *call) (reply, error) { return serve(a, ctx, c) })
	}
	if len(routes) == 0 {
		return nil, fmt.Errorf("apigw: no function %q serves an operation", function)
	}
	unknown := a.routeAny(nil, func(context.Context, *call) (reply, error) {
		return reply{}, interrupt.Errorf(interrupt.CodeNotFound, "no such operation")
	})
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		if h, ok := routes[req.RouteKey]; ok {
			return h(ctx, req)
		}
		return unknown(ctx, req)
	}, nil
}
