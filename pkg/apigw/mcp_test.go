package apigw_test

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/apigw"
)

// TestTheMCPTransport: one JSON-RPC message per POST, read as every body is, from an allowed
// Origin or none. A batch, a body past MaxBody, duplicate members, nesting past MaxDepth and a
// foreign Origin (checked before the token) are refused as problems, and nothing runs: no
// interrupt is requested. An allowed Origin, or none, is served.
func TestTheMCPTransport(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	h, err := apigw.New(slog.New(slog.NewJSONHandler(io.Discard, nil)), apigw.Options{MCPOrigins: []string{"http://127.0.0.1:3000"}}).Function("mcp", s.services)
	if err != nil {
		t.Fatal(err)
	}
	request := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"request_approval","arguments":{"runId":"r1","key":"k` + string(rune('0'+id)) + `","title":"Pay","approvers":["alice"]}}}`
	}
	deep := strings.Repeat(`{"a":`, apigw.MaxDepth+1) + `1` + strings.Repeat(`}`, apigw.MaxDepth+1)
	headers := func(origin string) map[string]string {
		h := map[string]string{"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
		if origin != "" {
			h["origin"] = origin
		}
		return h
	}
	before := s.items(t)
	for _, tc := range []struct {
		name, body, origin string
		who                *caller
		status             int
	}{
		{"a batch", "[" + request(1) + "," + request(2) + "]", "", &engine, http.StatusBadRequest},
		{"a batch of one", "[" + request(1) + "]", "", &engine, http.StatusBadRequest},
		{"a body past MaxBody", request(1)[:len(request(1))-2] + `,"pad":"` + strings.Repeat("x", apigw.MaxBody) + `"}}`, "", &engine, http.StatusRequestEntityTooLarge},
		{"duplicate members", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, "", &engine, http.StatusBadRequest},
		{"nesting past MaxDepth", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + deep + `}`, "", &engine, http.StatusBadRequest},
		{"a foreign Origin", request(1), "http://evil.example.com", &engine, http.StatusForbidden},
		{"a foreign Origin, no token", request(1), "http://evil.example.com", nil, http.StatusForbidden},
		{"the Origin null", request(1), "null", &engine, http.StatusForbidden},
	} {
		r := invoke(t, h, call{who: tc.who, route: "POST /mcp", rawPath: "/mcp", body: tc.body, headers: headers(tc.origin)})
		if r.Status != tc.status || r.Headers["Content-Type"] != "application/problem+json" {
			t.Errorf("%s: %d %s, want %d and a problem", tc.name, r.Status, r.Body, tc.status)
		}
	}
	if after := s.items(t); after != before {
		t.Fatalf("refused messages wrote: %s, then %s", before, after)
	}
	for _, origin := range []string{"", "http://127.0.0.1:3000"} {
		r := invoke(t, h, call{who: &engine, route: "POST /mcp", rawPath: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: headers(origin)})
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"result"`) {
			t.Errorf("a ping from %q: %d %s", origin, r.Status, r.Body)
		}
	}
}
