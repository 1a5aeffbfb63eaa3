// Package clientcheck_test holds the tests of the engine's client (its own module, client/)
// that need the host: its wire shapes against the host's types, its deliveries verified by the
// Standard Webhooks reference library, and an engine's module built against it alone.
package clientcheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnEngineNeedsOnlyTheClient: a program in a module of its own that requires the client
// module (replaced by this tree's client/, as a version tag would fetch it; the host's module
// is never named) tidies with the network off and builds, its go.mod naming the client alone and
// its go.sum empty: the client brings no module with it, the host's least of all.
func TestAnEngineNeedsOnlyTheClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	clientDir, err := filepath.Abs("../../client")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/engine\n\ngo 1.22\n\nrequire github.com/interrupthost/interrupthost/client v0.9.0\n\nreplace github.com/interrupthost/interrupthost/client => " + clientDir + "\n",
		"main.go": `package main

import (
	"context"
	"fmt"
	"time"

	"github.com/interrupthost/interrupthost/client"
)

func main() {
	c := client.New("https://approvals.example.com", client.WithBearer("jwt"))
	payload, err := client.Payload(client.Approval{ArtifactID: "inv-1", ArtifactType: "invoice", Title: "Pay", Actions: []string{"accept"}, RequiredApprovals: 2}, "k", time.Hour, nil)
	fmt.Println(c != nil, len(payload) > 0, err, context.Background() != nil)
}
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	gocmd := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GONOSUMDB=*")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	gocmd("mod", "tidy")
	gocmd("build", "-o", filepath.Join(dir, "engine"), ".")
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(mod), "require") != 1 || strings.Contains(string(mod), "interrupthost/interrupthost ") {
		t.Errorf("the engine's go.mod after tidy:\n%s", mod)
	}
	if sum, err := os.ReadFile(filepath.Join(dir, "go.sum")); err == nil && len(sum) > 0 {
		t.Errorf("the engine's go.sum holds modules:\n%s", sum)
	}
}
