package apigw

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Services are what the tests hand a function's constructor.
type Services = services

// constructors build each function as its main does, by the constructor its main calls (held
// to the mains by TestTheMainsCallTheConstructors): the tests serve a function through the same
// wiring it is deployed with.
var constructors = map[string]struct {
	name  string
	build func(a *API, s Services) Handler
}{
	"request-interrupt": {"RequestInterrupt", func(a *API, s Services) Handler { return a.RequestInterrupt(s.Tokens, s.Policies) }},
	"resolve-by-run":    {"ResolveByRun", func(a *API, s Services) Handler { return a.ResolveByRun(s.Host) }},
	"mint-token":        {"MintToken", func(a *API, s Services) Handler { return a.MintToken(s.Tokens) }},
	"inspect-by-token":  {"InspectByToken", func(a *API, s Services) Handler { return a.InspectByToken(s.Tokens) }},
	"resolve-by-token":  {"ResolveByToken", func(a *API, s Services) Handler { return a.ResolveByToken(s.Tokens) }},
	"get-run":           {"GetRun", func(a *API, s Services) Handler { return a.GetRun(s.Host) }},
	"receipts":          {"Receipts", func(a *API, s Services) Handler { return a.Receipts(s.Tokens) }},
	"console": {"Console", func(a *API, s Services) Handler {
		return a.Console(s.Host, s.SignIn, s.Subscriptions, s.Resender, s.Contacts)
	}},
	"list-events":       {"ListEvents", func(a *API, s Services) Handler { return a.ListEvents(s.Host) }},
	"end-run":           {"EndRun", func(a *API, s Services) Handler { return a.EndRun(s.Host) }},
	"configure-run":     {"ConfigureRun", func(a *API, s Services) Handler { return a.ConfigureRun(s.Host) }},
	"agent-decisions":   {"AgentDecisions", func(a *API, s Services) Handler { return a.AgentDecisions(s.Host) }},
	"discovery":         {"Discovery", func(a *API, _ Services) Handler { return a.Discovery() }},
	"webhook-endpoints": {"WebhookEndpoints", func(a *API, s Services) Handler { return a.WebhookEndpoints(s.Webhooks) }},
	"webhook-ingest":    {"WebhookIngest", func(a *API, s Services) Handler { return a.WebhookIngest(s.Webhooks) }},
	"subscriptions": {"Subscriptions", func(a *API, s Services) Handler {
		return a.Subscriptions(s.Subscriptions, s.Resender, s.Slack, s.Teams)
	}},
	"contacts":           {"Contacts", func(a *API, s Services) Handler { return a.Contacts(s.Contacts) }},
	"approval-page":      {"ApprovalPage", func(a *API, s Services) Handler { return a.ApprovalPage(s.Tokens, s.SignIn) }},
	"mcp":                {"MCP", func(a *API, s Services) Handler { return a.MCP(s.MCP, s.Bearer) }},
	"slack-interactions": {"SlackInteractions", func(a *API, s Services) Handler { return a.SlackInteractions(s.Clicks) }},
	"teams-messages":     {"TeamsMessages", func(a *API, s Services) Handler { return a.TeamsMessages(s.TeamsMessages) }},
	"policies":           {"Policies", func(a *API, s Services) Handler { return a.Policies(s.Policies) }},
}

// Function is the handler of the function named function (its folder under functions/) over
// s, built by the constructor its main calls: the tests pick a function by name, with what they
// choose to give it.
func (a *API) Function(function string, s Services) (Handler, error) {
	c, ok := constructors[function]
	if !ok {
		return nil, fmt.Errorf("apigw: no function %q serves an operation", function)
	}
	return c.build(a, s), nil
}

// TestTheMainsCallTheConstructors: every function of the table has a constructor the tests
// build it by, and its main calls that constructor.
func TestTheMainsCallTheConstructors(t *testing.T) {
	t.Parallel()
	for _, r := range Functions() {
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
	if len(constructors) != len(Functions()) {
		t.Errorf("%d constructors for %d functions", len(constructors), len(Functions()))
	}
}
