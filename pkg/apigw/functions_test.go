package apigw_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/apigw/jsonapi"
	"github.com/interrupthost/interrupthost/pkg/apigw/mcphttp"
	"github.com/interrupthost/interrupthost/pkg/apigw/routes"
	"github.com/interrupthost/interrupthost/pkg/apigw/slackhttp"
	"github.com/interrupthost/interrupthost/pkg/apigw/teamshttp"
	"github.com/interrupthost/interrupthost/pkg/apigw/web"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/signin"
)

// Services are what the tests hand a function's constructor: every service of every function's
// routes, of which each constructor takes its own.
type Services struct {
	Host     *host.Host
	Tokens   *host.Signer
	Webhooks *host.Webhooks
	// SignIn signs approvers in on the approval page; nil: the page's links without a
	// credential answer 404.
	SignIn        *signin.Flow
	Subscriptions *outbound.Subscriptions
	// Resender sends a delivered event again (POST /subscriptions/{id}/deliveries).
	Resender apigw.Resender
	Contacts *contacts.Directory
	// MCP serves the Model Context Protocol endpoint; Bearer verifies its callers' tokens.
	MCP    mcphttp.ToolServer
	Bearer mcphttp.TokenVerifier
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
	// Delegations are the approvers' delegations (PUT, GET, DELETE /delegations/...).
	Delegations *delegation.Book
}

// constructors build each function as its main does, by the constructor its main calls (held
// to the mains by TestTheMainsCallTheConstructors): the tests serve a function through the same
// wiring it is deployed with.
var constructors = map[string]struct {
	name  string
	build func(g *apigw.Gateway, s Services) apigw.Handler
}{
	"request-interrupt": {"RequestInterrupt", func(g *apigw.Gateway, s Services) apigw.Handler {
		return jsonapi.New(g).RequestInterrupt(s.Tokens, s.Policies)
	}},
	"resolve-by-run":   {"ResolveByRun", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).ResolveByRun(s.Host) }},
	"mint-token":       {"MintToken", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).MintToken(s.Tokens) }},
	"inspect-by-token": {"InspectByToken", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).InspectByToken(s.Tokens) }},
	"resolve-by-token": {"ResolveByToken", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).ResolveByToken(s.Tokens) }},
	"get-run":          {"GetRun", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).GetRun(s.Host) }},
	"receipts":         {"Receipts", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).Receipts(s.Tokens) }},
	"console": {"Console", func(g *apigw.Gateway, s Services) apigw.Handler {
		return web.New(g).Console(s.Host, s.SignIn, s.Subscriptions, s.Resender, s.Contacts)
	}},
	"list-events":       {"ListEvents", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).ListEvents(s.Host) }},
	"end-run":           {"EndRun", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).EndRun(s.Host) }},
	"configure-run":     {"ConfigureRun", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).ConfigureRun(s.Host) }},
	"agent-decisions":   {"AgentDecisions", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).AgentDecisions(s.Host) }},
	"discovery":         {"Discovery", func(g *apigw.Gateway, _ Services) apigw.Handler { return jsonapi.New(g).Discovery() }},
	"webhook-endpoints": {"WebhookEndpoints", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).WebhookEndpoints(s.Webhooks) }},
	"webhook-ingest":    {"WebhookIngest", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).WebhookIngest(s.Webhooks) }},
	"subscriptions": {"Subscriptions", func(g *apigw.Gateway, s Services) apigw.Handler {
		return jsonapi.New(g).Subscriptions(s.Subscriptions, s.Resender, s.Slack, s.Teams)
	}},
	"contacts": {"Contacts", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).Contacts(s.Contacts) }},
	"approval-page": {"ApprovalPage", func(g *apigw.Gateway, s Services) apigw.Handler {
		return web.New(g).ApprovalPage(s.Tokens, s.SignIn, s.Delegations)
	}},
	"mcp":                {"MCP", func(g *apigw.Gateway, s Services) apigw.Handler { return mcphttp.New(g).MCP(s.MCP, s.Bearer) }},
	"slack-interactions": {"SlackInteractions", func(g *apigw.Gateway, s Services) apigw.Handler { return slackhttp.New(g).SlackInteractions(s.Clicks) }},
	"policies":           {"Policies", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).Policies(s.Policies) }},
	"delegations":        {"Delegations", func(g *apigw.Gateway, s Services) apigw.Handler { return jsonapi.New(g).Delegations(s.Delegations) }},
	"teams-messages": {"TeamsMessages", func(g *apigw.Gateway, s Services) apigw.Handler {
		return teamshttp.New(g).TeamsMessages(s.TeamsMessages)
	}},
}

// functionOf is the handler of the function named function (its folder under functions/) over
// g and s, built by the constructor its main calls: the tests pick a function by name, with what
// they choose to give it.
func functionOf(g *apigw.Gateway, function string, s Services) (apigw.Handler, error) {
	c, ok := constructors[function]
	if !ok {
		return nil, fmt.Errorf("apigw: no function %q serves an operation", function)
	}
	return c.build(g, s), nil
}

// TestTheMainsCallTheConstructors: every function of the table has a constructor the tests
// build it by, and its main calls that constructor.
func TestTheMainsCallTheConstructors(t *testing.T) {
	t.Parallel()
	for _, r := range routes.Functions() {
		c, ok := constructors[r.Function]
		if !ok {
			t.Errorf("%s: no constructor the tests build it by", r.Function)
			continue
		}
		main, err := os.ReadFile(filepath.Join("..", "..", "functions", r.Function, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(main), "."+c.name+"(") {
			t.Errorf("functions/%s/main.go does not call API.%s", r.Function, c.name)
		}
	}
	if len(constructors) != len(routes.Functions()) {
		t.Errorf("%d constructors for %d functions", len(constructors), len(routes.Functions()))
	}
}
