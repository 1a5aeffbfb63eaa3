// Package mcptest is what the MCP endpoint's tests share: pkg/mcp's over the in-memory host and
// the end-to-end suite's over the local stack, both through the official Go SDK's client.
package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect is the SDK's client connected to the endpoint at url over transport (which says who
// calls), at the protocol version the SDK negotiates by default, or at version; closed when the
// test ends.
func Connect(t testing.TB, url string, transport http.RoundTripper, version string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil)
	var opts *sdk.ClientSessionOptions
	if version != "" {
		opts = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: transport}, DisableStandaloneSSE: true, MaxRetries: -1,
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Call calls tool with args and decodes its structured output into out; it answers a tool
// error's text, or "" when the tool answered.
func Call(t testing.TB, cs *sdk.ClientSession, tool string, args, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		return res.Content[0].(*sdk.TextContent).Text
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s answered %s: %v", tool, b, err)
	}
	return ""
}
