package apigw

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/signin"
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
	// serve answers with JSON; page with the approval page's HTML, and crash with its page when
	// page panics. Either serve or page and crash are set.
	serve func(*API, context.Context, *call) (reply, error)
	page  func(*API, context.Context, *call) (events.APIGatewayV2HTTPResponse, error)
	crash func() events.APIGatewayV2HTTPResponse
}

// Routes are one function's operations. Only the function's constructor (API.GetRun, ...) and
// Functions name them, and only the constructor serves them: so a function's binary links the
// handlers of its routes and not the others' (the approval page's templates, the subscriptions'
// code). The
// tables are literals of constants, which the compiler lays out as data rather than building
// at init, where they would all be linked into every function.
type Routes struct {
	// Function is the function's folder under functions/ and its name in template.yaml.
	Function   string
	Operations []Operation
}

// The functions of the API and their routes: adding a route is an entry here, its handler and
// its operation in openapi.yaml (template.yaml's route is generated from this table: make
// functions; a function of several routes names the route's event in functions/manifest.yaml);
// adding a function is a Routes here, in Functions, its constructor below, its main and its
// entry in functions/manifest.yaml.
var (
	requestInterrupt = Routes{Function: "request-interrupt", Operations: []Operation{
		{Route: "POST /runs/{runId}/interrupts", Scopes: []string{ScopeInterruptsWrite}, serve: (*API).requestInterrupt},
	}}
	resolveByRun = Routes{Function: "resolve-by-run", Operations: []Operation{
		{Route: "POST /runs/{runId}/interrupts/{nodeId}", Scopes: []string{ScopeApprovalsRespond}, serve: (*API).resolveByRun},
	}}
	mintToken = Routes{Function: "mint-token", Operations: []Operation{
		{Route: "POST /runs/{runId}/interrupts/{nodeId}/tokens", Scopes: []string{ScopeInterruptsWrite, ScopeApprovalsRespond, ScopeTokensDelegate}, serve: (*API).mintToken},
	}}
	inspectByToken = Routes{Function: "inspect-by-token", Operations: []Operation{
		{Route: "GET /interrupts/{token}", Proof: ProofLink, serve: (*API).inspectByToken},
		{Route: "HEAD /interrupts/{token}", Proof: ProofLink, serve: (*API).inspectByToken},
	}}
	resolveByToken = Routes{Function: "resolve-by-token", Operations: []Operation{
		{Route: "POST /interrupts/{token}", Proof: ProofLink, serve: (*API).resolveByToken},
	}}
	getRun = Routes{Function: "get-run", Operations: []Operation{
		{Route: "GET /runs/{runId}", Scopes: []string{ScopeRunsRead}, serve: (*API).getRun},
		{Route: "GET /interrupts", Scopes: []string{ScopeRunsRead}, serve: (*API).listPending},
		{Route: "GET /inbox", Scopes: []string{ScopeApprovalsRespond}, serve: (*API).inbox},
	}}
	consoleRoutes = Routes{Function: "console", Operations: []Operation{
		{Route: "GET /console", Proof: ProofOperator, page: (*API).consoleHome, crash: consoleCrash},
		{Route: "HEAD /console", Proof: ProofOperator, page: (*API).consoleHome, crash: consoleCrash},
		{Route: "GET /console/runs", Proof: ProofOperator, page: (*API).consoleRuns, crash: consoleCrash},
		{Route: "HEAD /console/runs", Proof: ProofOperator, page: (*API).consoleRuns, crash: consoleCrash},
		{Route: "GET /console/runs/{runId}", Proof: ProofOperator, page: (*API).consoleRun, crash: consoleCrash},
		{Route: "HEAD /console/runs/{runId}", Proof: ProofOperator, page: (*API).consoleRun, crash: consoleCrash},
		{Route: "POST /console/runs/{runId}/cancel", Proof: ProofOperator, page: (*API).consoleEnd, crash: consoleCrash},
		{Route: "POST /console/runs/{runId}/complete", Proof: ProofOperator, page: (*API).consoleEnd, crash: consoleCrash},
		{Route: "POST /console/runs/{runId}/resend", Proof: ProofOperator, page: (*API).consoleResend, crash: consoleCrash},
	}}
	receipts = Routes{Function: "receipts", Operations: []Operation{
		{Route: "GET /runs/{runId}/outcomes/{interruptId}", Scopes: []string{ScopeRunsRead}, serve: (*API).getOutcome},
		{Route: "POST /receipts/redeem", Proof: ProofReceipt, Scopes: []string{ScopeReceiptsRedeem}, serve: (*API).redeemReceipt},
	}}
	listEvents = Routes{Function: "list-events", Operations: []Operation{
		{Route: "GET /runs/{runId}/events", Scopes: []string{ScopeRunsRead}, serve: (*API).listEvents},
	}}
	endRun = Routes{Function: "end-run", Operations: []Operation{
		{Route: "POST /runs/{runId}/cancel", Scopes: []string{ScopeInterruptsWrite}, serve: (*API).cancelRun},
		{Route: "POST /runs/{runId}/complete", Scopes: []string{ScopeInterruptsWrite}, serve: (*API).completeRun},
	}}
	configureRun = Routes{Function: "configure-run", Operations: []Operation{
		{Route: "PUT /runs/{runId}/configurable", Scopes: []string{ScopeRunsConfigure}, serve: (*API).configureRun},
	}}
	agentDecisions = Routes{Function: "agent-decisions", Operations: []Operation{
		{Route: "POST /runs/{runId}/agent-decisions", Scopes: []string{ScopeInterruptsWrite}, serve: (*API).agentDecisions},
	}}
	discovery = Routes{Function: "discovery", Operations: []Operation{
		{Route: "GET /.well-known/interrupt-host", Proof: ProofPublic, serve: (*API).discovery},
	}}
	webhookEndpoints = Routes{Function: "webhook-endpoints", Operations: []Operation{
		{Route: "POST /webhook-endpoints", Scopes: []string{ScopeWebhooksManage}, serve: (*API).createEndpoint},
		{Route: "GET /webhook-endpoints", Scopes: []string{ScopeWebhooksManage}, serve: (*API).listEndpoints},
		{Route: "GET /webhook-endpoints/{id}", Scopes: []string{ScopeWebhooksManage}, serve: (*API).getEndpoint},
		{Route: "DELETE /webhook-endpoints/{id}", Scopes: []string{ScopeWebhooksManage}, serve: (*API).deleteEndpoint},
		{Route: "PUT /webhook-endpoints/{id}/secrets", Scopes: []string{ScopeWebhooksManage}, serve: (*API).replaceSecrets},
	}}
	webhookIngest = Routes{Function: "webhook-ingest", Operations: []Operation{
		{Route: "POST /webhooks/{endpointId}", Proof: ProofProvider, serve: (*API).ingestWebhook},
	}}
	subscriptions = Routes{Function: "subscriptions", Operations: []Operation{
		{Route: "POST /subscriptions", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).createSubscription},
		{Route: "GET /subscriptions", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).listSubscriptions},
		{Route: "GET /subscriptions/{id}", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).getSubscription},
		{Route: "DELETE /subscriptions/{id}", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).deleteSubscription},
		{Route: "PUT /integrations/slack", Scopes: []string{ScopeIntegrationsManage}, serve: (*API).putSlackApp},
		{Route: "GET /integrations/slack", Scopes: []string{ScopeIntegrationsManage, ScopeSubscriptionsManage}, serve: (*API).getSlackApp},
		{Route: "DELETE /integrations/slack", Scopes: []string{ScopeIntegrationsManage}, serve: (*API).deleteSlackApp},
		{Route: "PUT /integrations/teams", Scopes: []string{ScopeIntegrationsManage}, serve: (*API).putTeamsBot},
		{Route: "GET /integrations/teams", Scopes: []string{ScopeIntegrationsManage, ScopeSubscriptionsManage}, serve: (*API).getTeamsBot},
		{Route: "DELETE /integrations/teams", Scopes: []string{ScopeIntegrationsManage}, serve: (*API).deleteTeamsBot},
		{Route: "GET /subscriptions/{id}/deliveries", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).listDeliveries},
		{Route: "POST /subscriptions/{id}/deliveries", Scopes: []string{ScopeSubscriptionsManage}, serve: (*API).resendDelivery},
	}}
	contactsRoutes = Routes{Function: "contacts", Operations: []Operation{
		{Route: "PUT /contacts/{kind}/{ref}", Scopes: []string{ScopeContactsManage}, serve: (*API).putContact},
		{Route: "GET /contacts/{kind}/{ref}", Scopes: []string{ScopeContactsManage}, serve: (*API).getContact},
		{Route: "DELETE /contacts/{kind}/{ref}", Scopes: []string{ScopeContactsManage}, serve: (*API).deleteContact},
		{Route: "GET /contacts", Scopes: []string{ScopeContactsManage}, serve: (*API).listContacts},
	}}
	policiesRoutes = Routes{Function: "policies", Operations: []Operation{
		{Route: "PUT /policies/tools/{toolName}", Scopes: []string{ScopePoliciesManage}, serve: (*API).putPolicy},
		{Route: "GET /policies/tools/{toolName}", Scopes: []string{ScopePoliciesManage}, serve: (*API).getPolicy},
		{Route: "DELETE /policies/tools/{toolName}", Scopes: []string{ScopePoliciesManage}, serve: (*API).deletePolicy},
		{Route: "GET /policies/tools", Scopes: []string{ScopePoliciesManage}, serve: (*API).listPolicies},
		{Route: "PUT /policies/default", Scopes: []string{ScopePoliciesManage}, serve: (*API).putPolicy},
		{Route: "GET /policies/default", Scopes: []string{ScopePoliciesManage}, serve: (*API).getPolicy},
		{Route: "DELETE /policies/default", Scopes: []string{ScopePoliciesManage}, serve: (*API).deletePolicy},
	}}
	approvalPage = Routes{Function: "approval-page", Operations: []Operation{
		{Route: "GET /approve/{token}", Proof: ProofLink, page: (*API).pageByToken, crash: pageCrash},
		{Route: "HEAD /approve/{token}", Proof: ProofLink, page: (*API).pageByToken, crash: pageCrash},
		{Route: "POST /approve/{token}", Proof: ProofLink, page: (*API).pageByToken, crash: pageCrash},
		{Route: "GET /approve/{runId}/{interruptId}", Proof: ProofSession, page: (*API).pageSignedIn, crash: pageCrash},
		{Route: "HEAD /approve/{runId}/{interruptId}", Proof: ProofSession, page: (*API).pageSignedIn, crash: pageCrash},
		{Route: "POST /approve/{runId}/{interruptId}", Proof: ProofSession, page: (*API).pageSignedIn, crash: pageCrash},
		{Route: "GET /approve", Proof: ProofSession, page: (*API).inboxPage, crash: pageCrash},
		{Route: "HEAD /approve", Proof: ProofSession, page: (*API).inboxPage, crash: pageCrash},
		{Route: "GET /signin/callback", Proof: ProofSignIn, page: (*API).signInCallback, crash: pageCrash},
		{Route: "POST /signin/signout", Proof: ProofSignIn, page: (*API).signOut, crash: pageCrash},
	}}
	slackInteractions = Routes{Function: "slack-interactions", Operations: []Operation{
		{Route: "POST /slack/interactions", Proof: ProofSlack, serve: (*API).slackInteractions},
	}}
	teamsMessages = Routes{Function: "teams-messages", Operations: []Operation{
		{Route: "POST /teams/messages", Proof: ProofTeams, serve: (*API).teamsMessages},
	}}
	mcpRoutes = Routes{Function: "mcp", Operations: []Operation{
		{Route: "POST /mcp", Proof: ProofBearer, page: (*API).mcpEndpoint, crash: mcpCrash},
		{Route: "GET /mcp", Proof: ProofBearer, page: (*API).mcpEndpoint, crash: mcpCrash},
		{Route: "DELETE /mcp", Proof: ProofBearer, page: (*API).mcpEndpoint, crash: mcpCrash},
		{Route: "GET /.well-known/oauth-protected-resource", Proof: ProofPublic, serve: (*API).protectedResource},
		{Route: "GET /.well-known/oauth-protected-resource/mcp", Proof: ProofPublic, serve: (*API).protectedResource},
	}}
)

// services are what the routes call. Each function's constructor below takes those its routes
// need, by type, so a main cannot serve a route without the service it calls.
type services struct {
	Host     *host.Host
	Tokens   *host.Signer
	Webhooks *host.Webhooks
	// SignIn signs approvers in on the approval page; nil: the page's links without a
	// credential answer 404.
	SignIn        *signin.Flow
	Subscriptions *outbound.Subscriptions
	// Resender sends a delivered event again (POST /subscriptions/{id}/deliveries).
	Resender Resender
	Contacts *contacts.Directory
	// MCP serves the Model Context Protocol endpoint; Bearer verifies its callers' tokens.
	MCP    ToolServer
	Bearer TokenVerifier
	// Slack are the tenants' Slack apps (PUT, GET, DELETE /integrations/slack); Clicks their
	// clicks (POST /slack/interactions).
	Slack  *slack.Integrations
	Clicks *slack.Interactions
	// Teams are the tenants' Teams bots (PUT, GET, DELETE /integrations/teams); TeamsMessages
	// the activities the Bot Framework sends them (POST /teams/messages).
	Teams         *teams.Integrations
	TeamsMessages *teams.Messages
	// Policies are the tenants' tool policies (PUT, GET, DELETE /policies/...).
	Policies *policy.Book
}

// on is a over s.
func (a *API) on(s services) *API {
	b := *a
	b.host, b.tokens, b.webhooks, b.signIn, b.subs, b.resend = s.Host, s.Tokens, s.Webhooks, s.SignIn, s.Subscriptions, s.Resender
	b.contacts, b.mcp, b.bearer, b.slack, b.clicks, b.policies = s.Contacts, s.MCP, s.Bearer, s.Slack, s.Clicks, s.Policies
	b.teams, b.teamsInvokes = s.Teams, s.TeamsMessages
	return &b
}

// RequestInterrupt serves request-interrupt: a request mints the token it asks for, and one
// that opts in asks under the tenant's tool policy b reads.
func (a *API) RequestInterrupt(t *host.Signer, b *policy.Book) Handler {
	return a.on(services{Host: t.Host(), Tokens: t, Policies: b}).serve(requestInterrupt)
}

// ResolveByRun serves resolve-by-run.
func (a *API) ResolveByRun(h *host.Host) Handler { return a.on(services{Host: h}).serve(resolveByRun) }

// MintToken serves mint-token.
func (a *API) MintToken(t *host.Signer) Handler {
	return a.on(services{Host: t.Host(), Tokens: t}).serve(mintToken)
}

// InspectByToken serves inspect-by-token.
func (a *API) InspectByToken(t *host.Signer) Handler {
	return a.on(services{Host: t.Host(), Tokens: t}).serve(inspectByToken)
}

// ResolveByToken serves resolve-by-token.
func (a *API) ResolveByToken(t *host.Signer) Handler {
	return a.on(services{Host: t.Host(), Tokens: t}).serve(resolveByToken)
}

// GetRun serves get-run.
func (a *API) GetRun(h *host.Host) Handler { return a.on(services{Host: h}).serve(getRun) }

// Console serves console: the operators' pages, signed in by signIn as the approval page is,
// reading the host, the subscriptions' deliveries and the contacts' names, resending by r.
func (a *API) Console(h *host.Host, signIn *signin.Flow, s *outbound.Subscriptions, r Resender, d *contacts.Directory) Handler {
	return a.on(services{Host: h, SignIn: signIn, Subscriptions: s, Resender: r, Contacts: d}).serve(consoleRoutes)
}

// Receipts serves receipts: an interrupt's outcome with its approved call's receipt, and the
// receipts' redemption.
func (a *API) Receipts(t *host.Signer) Handler {
	return a.on(services{Host: t.Host(), Tokens: t}).serve(receipts)
}

// ListEvents serves list-events.
func (a *API) ListEvents(h *host.Host) Handler { return a.on(services{Host: h}).serve(listEvents) }

// EndRun serves end-run.
func (a *API) EndRun(h *host.Host) Handler { return a.on(services{Host: h}).serve(endRun) }

// ConfigureRun serves configure-run.
func (a *API) ConfigureRun(h *host.Host) Handler { return a.on(services{Host: h}).serve(configureRun) }

// AgentDecisions serves agent-decisions.
func (a *API) AgentDecisions(h *host.Host) Handler {
	return a.on(services{Host: h}).serve(agentDecisions)
}

// Discovery serves discovery, from the options alone.
func (a *API) Discovery() Handler { return a.on(services{}).serve(discovery) }

// WebhookEndpoints serves webhook-endpoints.
func (a *API) WebhookEndpoints(w *host.Webhooks) Handler {
	return a.on(services{Host: w.Host(), Webhooks: w}).serve(webhookEndpoints)
}

// WebhookIngest serves webhook-ingest.
func (a *API) WebhookIngest(w *host.Webhooks) Handler {
	return a.on(services{Host: w.Host(), Webhooks: w}).serve(webhookIngest)
}

// Subscriptions serves subscriptions: the subscriptions, resends by r, the tenant's Teams bot, and the tenant's Slack
// app.
func (a *API) Subscriptions(s *outbound.Subscriptions, r Resender, slack *slack.Integrations, teams *teams.Integrations) Handler {
	return a.on(services{Subscriptions: s, Resender: r, Slack: slack, Teams: teams}).serve(subscriptions)
}

// TeamsMessages serves teams-messages: the activities the Bot Framework sends tenants' Teams
// bots.
func (a *API) TeamsMessages(m *teams.Messages) Handler {
	return a.on(services{TeamsMessages: m}).serve(teamsMessages)
}

// SlackInteractions serves slack-interactions: the clicks of tenants' Slack apps.
func (a *API) SlackInteractions(x *slack.Interactions) Handler {
	return a.on(services{Clicks: x}).serve(slackInteractions)
}

// Contacts serves contacts: the tenant's directory of where its refs are reached.
func (a *API) Contacts(d *contacts.Directory) Handler {
	return a.on(services{Contacts: d}).serve(contactsRoutes)
}

// Policies serves policies: the tenant's tool policies, who approves an agent's calls of each
// tool.
func (a *API) Policies(b *policy.Book) Handler {
	return a.on(services{Policies: b}).serve(policiesRoutes)
}

// ApprovalPage serves approval-page: the page of a token's link, and of a link without a
// credential for an approver signed in by signIn (nil: such links answer 404).
func (a *API) ApprovalPage(t *host.Signer, signIn *signin.Flow) Handler {
	return a.on(services{Host: t.Host(), Tokens: t, SignIn: signIn}).serve(approvalPage)
}

// MCP serves mcp: the Model Context Protocol endpoint over s, its callers' tokens verified by v,
// and its protected resource metadata.
func (a *API) MCP(s ToolServer, v TokenVerifier) Handler {
	return a.on(services{MCP: s, Bearer: v}).serve(mcpRoutes)
}

// Functions are every function that serves the API, in the order of the table above.
func Functions() []Routes {
	return []Routes{requestInterrupt, resolveByRun, mintToken, inspectByToken, resolveByToken, getRun, receipts, listEvents, endRun, configureRun, agentDecisions, discovery, webhookEndpoints, webhookIngest, subscriptions, approvalPage, contactsRoutes, mcpRoutes, slackInteractions, teamsMessages, consoleRoutes, policiesRoutes}
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

// serve is the handler of a function over a's services: each of its routes with its own scope check, chosen by
// the event's route key. A route key the function does not serve (a mis-wired gateway) is 404.
func (a *API) serve(r Routes) Handler {
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
