package bearer_test

import (
	"testing"

	"github.com/interrupthost/interrupthost/pkg/bearer"
)

// TestURLPatterns: a pattern allows the metadata URLs it spells, * standing for a run of
// characters within the host and port or anywhere in the path, the scheme and host without
// case; nothing else, and the zero value nothing.
func TestURLPatterns(t *testing.T) {
	p, err := bearer.ParseURLPatterns([]string{"https://vscode.dev/oauth/client-metadata.json", "https://*.agents.example/*", "http://127.0.0.1:*/*"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		client string
		match  bool
	}{
		{"https://vscode.dev/oauth/client-metadata.json", true},
		{"HTTPS://VSCode.dev/oauth/client-metadata.json", true},
		{"https://vscode.dev/oauth/client-metadata.json?x=1", false},
		{"https://vscode.dev/oauth/other.json", false},
		{"https://vscode.dev.evil.example/oauth/client-metadata.json", false},
		{"http://vscode.dev/oauth/client-metadata.json", false},
		{"https://a.agents.example/client.json", true},
		{"https://a.agents.example/deep/er/client.json", true},
		{"https://agents.example/client.json", false},
		{"https://a.agents.example.evil.example/client.json", false},
		{"https://evil.example/a.agents.example/client.json", false},
		{"https://u@a.agents.example/client.json", false},
		{"https://a.agents.example/client.json#frag", false},
		{"http://127.0.0.1:8765/client.json", true},
		{"http://127.0.0.1/client.json", false},
		{"http://127.0.0.1:8765@evil.example/client.json", false},
		{"http://localhost:8765/client.json", false},
		{"interrupt-host-local-mcp", false},
		{"", false},
	}
	for _, c := range cases {
		if got := p.Match(c.client); got != c.match {
			t.Errorf("%q: %v, want %v", c.client, got, c.match)
		}
	}
	if (bearer.URLPatterns{}).Match("https://vscode.dev/oauth/client-metadata.json") {
		t.Error("the zero value allows a client")
	}
}

// TestURLPatternsRefused: a pattern that is no http(s) URL with a host is an error, not a
// pattern that allows nothing (or everything) unseen.
func TestURLPatternsRefused(t *testing.T) {
	for _, pattern := range []string{"*", "vscode.dev/client.json", "ftp://x.example/c.json", "https://", "https:///c.json", "https://x.example/c.json#f", "https://u@x.example/c.json", "https://x.example /c.json"} {
		if _, err := bearer.ParseURLPatterns([]string{pattern}); err == nil {
			t.Errorf("%q was taken", pattern)
		}
	}
	if p, err := bearer.ParseURLPatterns(nil); err != nil || p.Match("https://x.example/c.json") {
		t.Errorf("no patterns: %v %v", p, err)
	}
}
