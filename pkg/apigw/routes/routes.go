// Package routes is the table of every function of the API and its routes, from the packages
// that serve them (jsonapi, web, mcphttp, slackhttp, teamshttp): what template.yaml's routes are generated
// from, openapi.yaml and the docs are held to, and the table of who may do what is printed from.
// No function imports it, so that each links its own routes' handlers only.
package routes

import (
	"fmt"
	"slices"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/apigw/jsonapi"
	"github.com/interrupthost/interrupthost/pkg/apigw/mcphttp"
	"github.com/interrupthost/interrupthost/pkg/apigw/slackhttp"
	"github.com/interrupthost/interrupthost/pkg/apigw/teamshttp"
	"github.com/interrupthost/interrupthost/pkg/apigw/web"
)

// order is the order of the functions in template.yaml's generated regions and in
// docs/operations.md's table of who may do what: a new function is added at its end.
var order = []string{
	"request-interrupt", "resolve-by-run", "mint-token", "inspect-by-token", "resolve-by-token", "get-run",
	"receipts", "list-events", "end-run", "configure-run", "agent-decisions", "discovery",
	"webhook-endpoints", "webhook-ingest", "subscriptions", "approval-page", "contacts", "mcp",
	"slack-interactions", "console", "policies", "delegations", "teams-messages",
}

// Functions are every function that serves the API, in order.
func Functions() []apigw.Routes {
	all := slices.Concat(jsonapi.Routes(), web.Routes(), mcphttp.Routes(), slackhttp.Routes(), teamshttp.Routes())
	if len(all) != len(order) {
		panic(fmt.Sprintf("routes: %d functions serve the API, and the order names %d", len(all), len(order)))
	}
	slices.SortStableFunc(all, func(a, b apigw.Routes) int {
		return slices.Index(order, a.Function) - slices.Index(order, b.Function)
	})
	return all
}

// Operations are every route of the API, each naming its function.
func Operations() []apigw.Operation {
	var ops []apigw.Operation
	for _, r := range Functions() {
		ops = append(ops, r.Operations...)
	}
	return ops
}
