package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/infra/local/gateway"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// serveGateway runs a second gateway over the stack's stores and built functions, with template
// parameters overridden (e.g. RefKinds), and returns its URL.
func serveGateway(t *testing.T, params map[string]string) string {
	t.Helper()
	localaws.NeedsStack(t)
	gw := gatewayWith(t, map[string]string{"RunLogTable": os.Getenv("TABLE_NAME"), "KeyringSecret": os.Getenv("KEYRING_SECRET_ID")}, params)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return srv.URL
}

func gatewayWith(t testing.TB, resources, params map[string]string) *gateway.Gateway {
	t.Helper()
	r := root(t)
	tmpl, err := samtemplate.Load(filepath.Join(r, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// It accepts the suite's JWTs, which are issued for the stack's gateway.
	overrides := map[string]string{"JwtIssuer": devjwt.IssuerAt(gatewayURL()), "JwtAudience": devjwt.Audiences, "AgentsClientId": devjwt.MCPClientID,
		"McpClientMetadataUrls": devjwt.LoopbackClientURLs, "OverridePrincipals": "supervisor", "AWS::StackName": os.Getenv("TABLE_NAME")}
	maps.Copy(overrides, params)
	gw, err := gateway.FromTemplate(tmpl, functionsDir(t), gateway.Options{
		Root:         r,
		URL:          gatewayURL(),
		Resolver:     samtemplate.Resolver{Template: tmpl, Overrides: overrides, Resources: resources},
		EnvOverrides: map[string]string{"PUBLIC_BASE_URL": "http://127.0.0.1", "WEBHOOK_SECRET_PREFIX": os.Getenv("WEBHOOK_SECRET_PREFIX"), "SUBSCRIPTION_SECRET_PREFIX": os.Getenv("SUBSCRIPTION_SECRET_PREFIX"), "SLACK_SECRET_PREFIX": os.Getenv("SLACK_SECRET_PREFIX"), "TEAMS_SECRET_PREFIX": os.Getenv("TEAMS_SECRET_PREFIX")},
		RIE:          filepath.Join(r, ".local", "bin", "aws-lambda-rie"),
		MaxInstances: 4, Logs: io.Discard, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	return gw
}

// functionProcesses are the pids of the running function processes built in functionsDir whose
// name is name ("" for any); with grandparent set, only those the emulators it started run.
func functionProcesses(t testing.TB, name string, grandparent int) []int {
	t.Helper()
	dir := functionsDir(t)
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", p.Name(), "exe"))
		if err != nil || !strings.HasPrefix(exe, dir+string(filepath.Separator)) || (name != "" && filepath.Base(exe) != name) {
			continue
		}
		if grandparent != 0 && parentOf(parentOf(pid)) != grandparent {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// parentOf is pid's parent, or 0.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// gone waits until pid has exited (and been reaped), for at most 5 s.
func gone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, fs.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still there after 5 s", pid)
		}
		<-time.After(5 * time.Millisecond) // a process's end is not signalled to a non-parent: poll
	}
}

// TestADeadFunctionProcessIsReplaced: a function process killed between two events (as a
// sandbox dies) costs the next request nothing: the gateway gives it a new instance, as Lambda
// gives it a new sandbox, instead of answering the emulator's Runtime.ExitError.
func TestADeadFunctionProcessIsReplaced(t *testing.T) {
	localaws.NeedsStack(t)
	gw := gatewayWith(t, map[string]string{"RunLogTable": os.Getenv("TABLE_NAME"), "KeyringSecret": os.Getenv("KEYRING_SECRET_ID")}, nil)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	for round := range 3 {
		a := call{base: srv.URL, method: "GET", path: "/.well-known/interrupt-host"}.must(t)
		if a.Status != 200 {
			t.Fatalf("round %d: %d %s", round, a.Status, a.Body)
		}
		pids := functionProcesses(t, "discovery", os.Getpid())
		if len(pids) != 1 {
			t.Fatalf("round %d: discovery processes %v, want the one instance's", round, pids)
		}
		if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		gone(t, pids[0])
	}
}
