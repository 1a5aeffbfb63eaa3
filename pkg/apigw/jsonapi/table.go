package jsonapi

import (
	"log/slog"

	"github.com/interrupthost/interrupthost/pkg/apigw"

	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/policy"
)

type (
	call     = apigw.Call
	reply    = apigw.Reply
	function = apigw.Function[*controller]
	endpoint = apigw.Endpoint[*controller]
)

// The functions of the JSON API and their routes: adding a route is an entry here, its handler
// and its operation in openapi.yaml (template.yaml's route is generated from this table: make
// functions; a function of several routes names the route's event in functions/manifest.yaml);
// adding a function is a function here, in Routes, its constructor below, its main, its place in
// package routes' order and its entry in functions/manifest.yaml.
func requestInterrupt() function {
	return function{Function: "request-interrupt", Operations: []endpoint{
		{Route: "POST /runs/{runId}/interrupts", Scopes: []string{apigw.ScopeInterruptsWrite}, Serve: (*controller).requestInterrupt},
	}}
}

func resolveByRun() function {
	return function{Function: "resolve-by-run", Operations: []endpoint{
		{Route: "POST /runs/{runId}/interrupts/{nodeId}", Scopes: []string{apigw.ScopeApprovalsRespond}, Serve: (*controller).resolveByRun},
	}}
}

func mintToken() function {
	return function{Function: "mint-token", Operations: []endpoint{
		{Route: "POST /runs/{runId}/interrupts/{nodeId}/tokens", Scopes: []string{apigw.ScopeInterruptsWrite, apigw.ScopeApprovalsRespond, apigw.ScopeTokensDelegate}, Serve: (*controller).mintToken},
	}}
}

func inspectByToken() function {
	return function{Function: "inspect-by-token", Operations: []endpoint{
		{Route: "GET /interrupts/{token}", Proof: apigw.ProofLink, Serve: (*controller).inspectByToken},
		{Route: "HEAD /interrupts/{token}", Proof: apigw.ProofLink, Serve: (*controller).inspectByToken},
	}}
}

func resolveByToken() function {
	return function{Function: "resolve-by-token", Operations: []endpoint{
		{Route: "POST /interrupts/{token}", Proof: apigw.ProofLink, Serve: (*controller).resolveByToken},
	}}
}

func getRun() function {
	return function{Function: "get-run", Operations: []endpoint{
		{Route: "GET /runs/{runId}", Scopes: []string{apigw.ScopeRunsRead}, Serve: (*controller).getRun},
		{Route: "GET /interrupts", Scopes: []string{apigw.ScopeRunsRead}, Serve: (*controller).listPending},
		{Route: "GET /inbox", Scopes: []string{apigw.ScopeApprovalsRespond}, Serve: (*controller).inbox},
	}}
}

func receipts() function {
	return function{Function: "receipts", Operations: []endpoint{
		{Route: "GET /runs/{runId}/outcomes/{interruptId}", Scopes: []string{apigw.ScopeRunsRead}, Serve: (*controller).getOutcome},
		{Route: "POST /receipts/redeem", Proof: apigw.ProofReceipt, Scopes: []string{apigw.ScopeReceiptsRedeem}, Serve: (*controller).redeemReceipt},
	}}
}

func listEvents() function {
	return function{Function: "list-events", Operations: []endpoint{
		{Route: "GET /runs/{runId}/events", Scopes: []string{apigw.ScopeRunsRead}, Serve: (*controller).listEvents},
	}}
}

func endRun() function {
	return function{Function: "end-run", Operations: []endpoint{
		{Route: "POST /runs/{runId}/cancel", Scopes: []string{apigw.ScopeInterruptsWrite}, Serve: (*controller).cancelRun},
		{Route: "POST /runs/{runId}/complete", Scopes: []string{apigw.ScopeInterruptsWrite}, Serve: (*controller).completeRun},
	}}
}

func configureRun() function {
	return function{Function: "configure-run", Operations: []endpoint{
		{Route: "PUT /runs/{runId}/configurable", Scopes: []string{apigw.ScopeRunsConfigure}, Serve: (*controller).configureRun},
	}}
}

func agentDecisions() function {
	return function{Function: "agent-decisions", Operations: []endpoint{
		{Route: "POST /runs/{runId}/agent-decisions", Scopes: []string{apigw.ScopeInterruptsWrite}, Serve: (*controller).agentDecisions},
	}}
}

func discovery() function {
	return function{Function: "discovery", Operations: []endpoint{
		{Route: "GET /.well-known/interrupt-host", Proof: apigw.ProofPublic, Serve: (*controller).discovery},
	}}
}

func webhookEndpoints() function {
	return function{Function: "webhook-endpoints", Operations: []endpoint{
		{Route: "POST /webhook-endpoints", Scopes: []string{apigw.ScopeWebhooksManage}, Serve: (*controller).createEndpoint},
		{Route: "GET /webhook-endpoints", Scopes: []string{apigw.ScopeWebhooksManage}, Serve: (*controller).listEndpoints},
		{Route: "GET /webhook-endpoints/{id}", Scopes: []string{apigw.ScopeWebhooksManage}, Serve: (*controller).getEndpoint},
		{Route: "DELETE /webhook-endpoints/{id}", Scopes: []string{apigw.ScopeWebhooksManage}, Serve: (*controller).deleteEndpoint},
		{Route: "PUT /webhook-endpoints/{id}/secrets", Scopes: []string{apigw.ScopeWebhooksManage}, Serve: (*controller).replaceSecrets},
	}}
}

func webhookIngest() function {
	return function{Function: "webhook-ingest", Operations: []endpoint{
		{Route: "POST /webhooks/{endpointId}", Proof: apigw.ProofProvider, Serve: (*controller).ingestWebhook},
	}}
}

func subscriptions() function {
	return function{Function: "subscriptions", Operations: []endpoint{
		{Route: "POST /subscriptions", Scopes: []string{apigw.ScopeSubscriptionsManage}, Serve: (*controller).createSubscription},
		{Route: "GET /subscriptions", Scopes: []string{apigw.ScopeSubscriptionsManage}, Serve: (*controller).listSubscriptions},
		{Route: "GET /subscriptions/{id}", Scopes: []string{apigw.ScopeSubscriptionsManage}, Serve: (*controller).getSubscription},
		{Route: "DELETE /subscriptions/{id}", Scopes: []string{apigw.ScopeSubscriptionsManage}, Serve: (*controller).deleteSubscription},
		{Route: "PUT /integrations/slack", Scopes: []string{apigw.ScopeIntegrationsManage}, Serve: (*controller).putSlackApp},
		{Route: "GET /integrations/slack", Scopes: []string{apigw.ScopeIntegrationsManage, apigw.ScopeSubscriptionsManage}, Serve: (*controller).getSlackApp},
		{Route: "DELETE /integrations/slack", Scopes: []string{apigw.ScopeIntegrationsManage}, Serve: (*controller).deleteSlackApp},
		{Route: "PUT /integrations/teams", Scopes: []string{apigw.ScopeIntegrationsManage}, Serve: (*controller).putTeamsBot},
		{Route: "GET /integrations/teams", Scopes: []string{apigw.ScopeIntegrationsManage, apigw.ScopeSubscriptionsManage}, Serve: (*controller).getTeamsBot},
		{Route: "DELETE /integrations/teams", Scopes: []string{apigw.ScopeIntegrationsManage}, Serve: (*controller).deleteTeamsBot},
		{Route: "GET /subscriptions/{id}/deliveries", Scopes: []string{apigw.ScopeSubscriptionsManage}, Serve: (*controller).listDeliveries},
		{Route: "POST /subscriptions/{id}/deliveries", Scopes: []string{apigw.ScopeSubscriptionsManage}, Serve: (*controller).resendDelivery},
	}}
}

func contactsRoutes() function {
	return function{Function: "contacts", Operations: []endpoint{
		{Route: "PUT /contacts/{kind}/{ref}", Scopes: []string{apigw.ScopeContactsManage}, Serve: (*controller).putContact},
		{Route: "GET /contacts/{kind}/{ref}", Scopes: []string{apigw.ScopeContactsManage}, Serve: (*controller).getContact},
		{Route: "DELETE /contacts/{kind}/{ref}", Scopes: []string{apigw.ScopeContactsManage}, Serve: (*controller).deleteContact},
		{Route: "GET /contacts", Scopes: []string{apigw.ScopeContactsManage}, Serve: (*controller).listContacts},
	}}
}

// A person sets their own delegation (approvals:respond), an administrator anyone's
// (contacts:manage): delegation.Book says which caller may touch which principal's.
func delegationsRoutes() function {
	return function{Function: "delegations", Operations: []endpoint{
		{Route: "PUT /delegations/{principal}", Scopes: []string{apigw.ScopeApprovalsRespond, apigw.ScopeContactsManage}, Serve: (*controller).putDelegation},
		{Route: "GET /delegations/{principal}", Scopes: []string{apigw.ScopeApprovalsRespond, apigw.ScopeContactsManage}, Serve: (*controller).getDelegation},
		{Route: "DELETE /delegations/{principal}", Scopes: []string{apigw.ScopeApprovalsRespond, apigw.ScopeContactsManage}, Serve: (*controller).deleteDelegation},
		{Route: "GET /delegations", Scopes: []string{apigw.ScopeContactsManage}, Serve: (*controller).listDelegations},
	}}
}

func policiesRoutes() function {
	return function{Function: "policies", Operations: []endpoint{
		{Route: "PUT /policies/tools/{toolName}", Scopes: []string{apigw.ScopePoliciesManage}, Serve: (*controller).putPolicy},
		{Route: "GET /policies/tools/{toolName}", Scopes: []string{apigw.ScopePoliciesManage}, Serve: (*controller).getPolicy},
		{Route: "DELETE /policies/tools/{toolName}", Scopes: []string{apigw.ScopePoliciesManage}, Serve: (*controller).deletePolicy},
		{Route: "GET /policies/tools", Scopes: []string{apigw.ScopePoliciesManage}, Serve: (*controller).listPolicies},
		{Route: "PUT /policies/default", Scopes: []string{apigw.ScopePoliciesManage}, Serve: (*controller).putPolicy},
		{Route: "GET /policies/default", Scopes: []string{apigw.ScopePoliciesManage}, Serve: (*controller).getPolicy},
		{Route: "DELETE /policies/default", Scopes: []string{apigw.ScopePoliciesManage}, Serve: (*controller).deletePolicy},
	}}
}

// API serves the JSON API's functions through a gateway. Safe for concurrent invocations. New
// makes one with no service; each function's constructor (API.GetRun, ...) takes the services
// its routes call, by type, so that a function's main that lacks one does not compile. The
// handlers are the controller's, a type with no exported method: the type a table's handlers
// are served on has its exported methods kept by the linker wherever a template reflects, so
// were the constructors its, every function would link every other's handlers.
type API struct{ c controller }

// controller is the routes' handlers over the services one function was built with.
type controller struct {
	gw       *apigw.Gateway
	host     *host.Host
	tokens   *host.Signer
	webhooks *host.Webhooks
	subs     *outbound.Subscriptions
	resend   apigw.Resender
	contacts *contacts.Directory
	slack    *slack.Integrations
	teams    *teams.Integrations
	policies *policy.Book
	away     *delegation.Book
	log      *slog.Logger
	opts     apigw.Options
}

// New returns the JSON API over g, with no service.
func New(g *apigw.Gateway) *API {
	return &API{c: controller{gw: g, log: g.Log(), opts: g.Options()}}
}

// services are what the routes call. Each function's constructor below takes those its routes
// need, by type, so a main cannot serve a route without the service it calls.
type services struct {
	Host          *host.Host
	Tokens        *host.Signer
	Webhooks      *host.Webhooks
	Subscriptions *outbound.Subscriptions
	// Resender sends a delivered event again (POST /subscriptions/{id}/deliveries).
	Resender apigw.Resender
	Contacts *contacts.Directory
	// Slack are the tenants' Slack apps (PUT, GET, DELETE /integrations/slack).
	Slack *slack.Integrations
	// Teams are the tenants' Teams bots (PUT, GET, DELETE /integrations/teams).
	Teams *teams.Integrations
	// Policies are the tenants' tool policies (PUT, GET, DELETE /policies/...).
	Policies *policy.Book
	// Delegations are the approvers' delegations (PUT, GET, DELETE /delegations/...).
	Delegations *delegation.Book
}

// on is a over s.
func (a *controller) on(s services) *controller {
	b := *a
	b.host, b.tokens, b.webhooks, b.subs, b.resend = s.Host, s.Tokens, s.Webhooks, s.Subscriptions, s.Resender
	b.contacts, b.slack, b.policies, b.away = s.Contacts, s.Slack, s.Policies, s.Delegations
	b.teams = s.Teams
	return &b
}

// serve is the handler of function f over a's services.
func (a *controller) serve(f function) apigw.Handler { return apigw.Serve(a.gw, a, f) }

// RequestInterrupt serves request-interrupt: a request mints the token it asks for, and one
// that opts in asks under the tenant's tool policy b reads.
func (a *API) RequestInterrupt(t *host.Signer, b *policy.Book) apigw.Handler {
	return a.c.on(services{Host: t.Host(), Tokens: t, Policies: b}).serve(requestInterrupt())
}

// ResolveByRun serves resolve-by-run.
func (a *API) ResolveByRun(h *host.Host) apigw.Handler {
	return a.c.on(services{Host: h}).serve(resolveByRun())
}

// MintToken serves mint-token.
func (a *API) MintToken(t *host.Signer) apigw.Handler {
	return a.c.on(services{Host: t.Host(), Tokens: t}).serve(mintToken())
}

// InspectByToken serves inspect-by-token.
func (a *API) InspectByToken(t *host.Signer) apigw.Handler {
	return a.c.on(services{Host: t.Host(), Tokens: t}).serve(inspectByToken())
}

// ResolveByToken serves resolve-by-token.
func (a *API) ResolveByToken(t *host.Signer) apigw.Handler {
	return a.c.on(services{Host: t.Host(), Tokens: t}).serve(resolveByToken())
}

// GetRun serves get-run.
func (a *API) GetRun(h *host.Host) apigw.Handler { return a.c.on(services{Host: h}).serve(getRun()) }

// Receipts serves receipts: an interrupt's outcome with its approved call's receipt, and the
// receipts' redemption.
func (a *API) Receipts(t *host.Signer) apigw.Handler {
	return a.c.on(services{Host: t.Host(), Tokens: t}).serve(receipts())
}

// ListEvents serves list-events.
func (a *API) ListEvents(h *host.Host) apigw.Handler {
	return a.c.on(services{Host: h}).serve(listEvents())
}

// EndRun serves end-run.
func (a *API) EndRun(h *host.Host) apigw.Handler { return a.c.on(services{Host: h}).serve(endRun()) }

// ConfigureRun serves configure-run.
func (a *API) ConfigureRun(h *host.Host) apigw.Handler {
	return a.c.on(services{Host: h}).serve(configureRun())
}

// AgentDecisions serves agent-decisions.
func (a *API) AgentDecisions(h *host.Host) apigw.Handler {
	return a.c.on(services{Host: h}).serve(agentDecisions())
}

// Discovery serves discovery, from the options alone.
func (a *API) Discovery() apigw.Handler { return a.c.on(services{}).serve(discovery()) }

// WebhookEndpoints serves webhook-endpoints.
func (a *API) WebhookEndpoints(w *host.Webhooks) apigw.Handler {
	return a.c.on(services{Host: w.Host(), Webhooks: w}).serve(webhookEndpoints())
}

// WebhookIngest serves webhook-ingest.
func (a *API) WebhookIngest(w *host.Webhooks) apigw.Handler {
	return a.c.on(services{Host: w.Host(), Webhooks: w}).serve(webhookIngest())
}

// Subscriptions serves subscriptions: the subscriptions, resends by r, the tenant's Slack app
// and its Teams bot.
func (a *API) Subscriptions(s *outbound.Subscriptions, r apigw.Resender, slack *slack.Integrations, teams *teams.Integrations) apigw.Handler {
	return a.c.on(services{Subscriptions: s, Resender: r, Slack: slack, Teams: teams}).serve(subscriptions())
}

// Contacts serves contacts: the tenant's directory of where its refs are reached.
func (a *API) Contacts(d *contacts.Directory) apigw.Handler {
	return a.c.on(services{Contacts: d}).serve(contactsRoutes())
}

// Policies serves policies: the tenant's tool policies, who approves an agent's calls of each
// tool.
func (a *API) Policies(b *policy.Book) apigw.Handler {
	return a.c.on(services{Policies: b}).serve(policiesRoutes())
}

// Delegations serves delegations: approvers' delegations, who decides in whose place while
// they are away.
func (a *API) Delegations(b *delegation.Book) apigw.Handler {
	return a.c.on(services{Delegations: b}).serve(delegationsRoutes())
}

// Routes are the functions of the JSON API, for the table of every function (package routes).
func Routes() []apigw.Routes {
	var out []apigw.Routes
	for _, f := range []function{requestInterrupt(), resolveByRun(), mintToken(), inspectByToken(), resolveByToken(), getRun(), receipts(), listEvents(), endRun(), configureRun(), agentDecisions(), discovery(), webhookEndpoints(), webhookIngest(), subscriptions(), contactsRoutes(), policiesRoutes(), delegationsRoutes()} {
		out = append(out, f.Routes())
	}
	return out
}
