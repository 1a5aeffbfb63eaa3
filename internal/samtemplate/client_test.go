package samtemplate_test

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/interrupthost/interrupthost/client"
)

// clientMethods are the engine's client's method for each operation of openapi.yaml, or why it
// has none: an HTML page a person opens, a provider's or the host's own call.
var clientMethods = map[string]string{
	"requestInterrupt": "Request", "resolveInterruptByRun": "Resolve", "mintToken": "Mint",
	"listPendingInterrupts": "Pending", "listInbox": "Inbox", "inspectInterruptByToken": "Inspect",
	"resolveInterruptByToken": "ResolveByToken", "getRun": "Snapshot", "listEvents": "Events",
	"cancelRun": "Cancel", "completeRun": "Complete", "discovery": "Discover", "configureRun": "Configure",
	"decide": "Decide", "listWebhookEndpoints": "Endpoints", "createWebhookEndpoint": "CreateEndpoint",
	"getWebhookEndpoint": "Endpoint", "deleteWebhookEndpoint": "DeleteEndpoint", "replaceWebhookSecrets": "ReplaceEndpointSecrets",
	"listContacts": "Contacts", "putContact": "PutContact", "getContact": "Contact", "deleteContact": "DeleteContact",
	"listSubscriptions": "Subscriptions", "createSubscription": "Subscribe", "getSubscription": "Subscription",
	"deleteSubscription": "Unsubscribe", "listDeliveries": "Deliveries", "resendDelivery": "Resend",
	"putSlackApp": "PutSlackApp", "getSlackApp": "SlackApp", "deleteSlackApp": "DeleteSlackApp",
	"putTeamsBot": "PutTeamsBot", "getTeamsBot": "TeamsBot", "deleteTeamsBot": "DeleteTeamsBot",
	"getOutcome": "OutcomeOf", "redeemReceipt": "Redeem",
	// Not the engine's to call.
	"headInterruptByToken":         "-: Inspect's GET answers the same",
	"ingestWebhook":                "-: a payment provider's call, signed by the provider",
	"slackInteractions":            "-: Slack's call, signed with the app's signing secret",
	"teamsMessages":                "-: the Bot Framework's call, with its token",
	"deliverEvent":                 "-: the host's call to a receiver: client.Receiver serves it",
	"showInboxPage":                "-: an HTML page a person opens",
	"headInboxPage":                "-: an HTML page a person opens",
	"showApprovalPage":             "-: an HTML page a person opens",
	"headApprovalPage":             "-: an HTML page a person opens",
	"decideOnApprovalPage":         "-: a form a person posts",
	"showSignedInApprovalPage":     "-: an HTML page a person opens",
	"headSignedInApprovalPage":     "-: an HTML page a person opens",
	"decideOnSignedInApprovalPage": "-: a form a person posts",
	"signInCallback":               "-: the identity provider's redirect of a person",
	"signOut":                      "-: a form a person posts",
	"setAwayOnInbox":               "-: a form a person posts",
	"showConsole":                  "-: an HTML page an operator opens",
	"headConsole":                  "-: an HTML page an operator opens",
	"putPolicy":                    "PutPolicy",
	"putDelegation":                "PutDelegation",
	"getDelegation":                "Delegation",
	"deleteDelegation":             "EndDelegation",
	"listDelegations":              "Delegations",
	"getPolicy":                    "Policy",
	"deletePolicy":                 "DeletePolicy",
	"listPolicies":                 "Policies",
	"putDefaultPolicy":             "PutPolicy",
	"getDefaultPolicy":             "Policy",
	"deleteDefaultPolicy":          "DeletePolicy",
	"listConsoleRuns":              "-: an HTML page an operator opens",
	"headConsoleRuns":              "-: an HTML page an operator opens",
	"showConsoleRun":               "-: an HTML page an operator opens",
	"headConsoleRun":               "-: an HTML page an operator opens",
	"cancelFromConsole":            "-: a form an operator posts (the engine's is Cancel)",
	"completeFromConsole":          "-: a form an operator posts (the engine's is Complete)",
	"resendFromConsole":            "-: a form an operator posts (the engine's is Resend)",
	"mcp":                          "-: an agent's MCP client speaks it (pkg/mcp)",
	"mcpStream":                    "-: an agent's MCP client asks it, and is answered 405",
	"mcpEndSession":                "-: an agent's MCP client asks it, and is answered 405",
	"protectedResource":            "-: an MCP client reads it to find the token's issuer",
	"protectedResourceOfMcp":       "-: an MCP client reads it to find the token's issuer",
}

// TestTheClientCallsEveryOperation: every operation of openapi.yaml is a method of the engine's
// client, or is named here as one no engine calls, and the client has no method of an operation
// the document does not have.
func TestTheClientCallsEveryOperation(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root(t), "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		// Each path's operations, and its parameters; webhooks are what the host calls.
		Paths    map[string]map[string]any `yaml:"paths"`
		Webhooks map[string]map[string]any `yaml:"webhooks"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeFor[*client.Client]()
	var ops []string
	for _, methods := range append(slices.Collect(maps.Values(doc.Paths)), slices.Collect(maps.Values(doc.Webhooks))...) {
		for _, op := range methods {
			if o, ok := op.(map[string]any); ok && o["operationId"] != nil {
				ops = append(ops, o["operationId"].(string))
			}
		}
	}
	for _, op := range ops {
		method, ok := clientMethods[op]
		switch {
		case !ok:
			t.Errorf("operation %s: no client method, and no reason it has none", op)
		case method[0] == '-':
		default:
			if _, ok := typ.MethodByName(method); !ok {
				t.Errorf("operation %s: the client has no method %s", op, method)
			}
		}
	}
	for op := range clientMethods {
		if !slices.Contains(ops, op) {
			t.Errorf("%s is no operation of openapi.yaml", op)
		}
	}
}
