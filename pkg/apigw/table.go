package apigw

import (
	"context"

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
	// Proof is what else, or instead, the caller proves, which the function checks itself
	// (ProofJWT: the scopes alone). Scopes and Proof are the host's one table of who may do what
	// (docs/operations.md prints it; TestEveryCredentialOnEveryOperation walks it on the stack).
	Proof Proof
}

// Routes are one function's operations, as the table of every function (package routes) lists
// them.
type Routes struct {
	// Function is the function's folder under functions/ and its name in template.yaml.
	Function   string
	Operations []Operation
}

// Endpoint is an Operation of a function and its handler, a method of C, the controller of the
// package that serves it (jsonapi.API, web.API, ...). Serve answers with JSON; Page with the
// response it makes itself (an HTML page, the MCP endpoint's), and Crash with its page when Page
// panics. Either Serve or Page and Crash are set.
type Endpoint[C any] struct {
	Route  string
	Scopes []string
	Proof  Proof
	Serve  func(C, context.Context, *Call) (Reply, error)
	Page   func(C, context.Context, *Call) (events.APIGatewayV2HTTPResponse, error)
	Crash  func() events.APIGatewayV2HTTPResponse
}

// Function is one function's endpoints on its controller C. Only the function's constructor
// (jsonapi.API.GetRun, ...) and its package's list of its functions name it, and only the
// constructor serves it: so a function's binary links the handlers of its routes and not the
// others' (the approval page's templates, the subscriptions' code). The tables are literals of
// constants, which the compiler lays out as data rather than building at init, where they would
// all be linked into every function.
type Function[C any] struct {
	// Function is the function's folder under functions/ and its name in template.yaml.
	Function   string
	Operations []Endpoint[C]
}

// Routes are f's operations, without their handlers.
func (f Function[C]) Routes() Routes {
	r := Routes{Function: f.Function}
	for _, e := range f.Operations {
		r.Operations = append(r.Operations, Operation{Route: e.Route, Function: f.Function, Scopes: e.Scopes, Proof: e.Proof})
	}
	return r
}

// Serve is the handler of function f over its controller c: each of its routes with its own
// scope check, chosen by the event's route key. A route key the function does not serve (a
// mis-wired gateway) is 404.
func Serve[C any](a *Gateway, c C, f Function[C]) Handler {
	routes := map[string]Handler{}
	for _, o := range f.Operations {
		if o.Page != nil {
			page := o.Page
			routes[o.Route] = a.observed(o.Crash, func(ctx context.Context, call *Call) (events.APIGatewayV2HTTPResponse, error) {
				return page(c, ctx, call)
			})
			continue
		}
		serve := o.Serve
		routes[o.Route] = a.routeAny(o.Scopes, func(ctx context.Context, call *Call) (Reply, error) { return serve(c, ctx, call) })
	}
	unknown := a.routeAny(nil, func(context.Context, *Call) (Reply, error) {
		return Reply{}, interrupt.Errorf(interrupt.CodeNotFound, "no such operation")
	})
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		if h, ok := routes[req.RouteKey]; ok {
			return h(ctx, req)
		}
		return unknown(ctx, req)
	}
}
