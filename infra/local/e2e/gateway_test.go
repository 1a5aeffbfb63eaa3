package e2e

import (
	"io"
	"log/slog"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/interrupthost/interrupthost/infra/local/devjwt"
	"github.com/interrupthost/interrupthost/infra/local/gateway"
	"github.com/interrupthost/interrupthost/infra/local/localaws"
	"github.com/interrupthost/interrupthost/infra/local/samtemplate"
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
	overrides := map[string]string{"JwtIssuer": devjwt.IssuerAt(gatewayURL()), "JwtAudience": devjwt.Audience, "OverridePrincipals": "supervisor",
		"WebhookSecretPrefix": os.Getenv("WEBHOOK_SECRET_PREFIX"), "SubscriptionSecretPrefix": os.Getenv("SUBSCRIPTION_SECRET_PREFIX")}
	maps.Copy(overrides, params)
	gw, err := gateway.FromTemplate(tmpl, functionsDir(t), gateway.Options{
		Root:         r,
		URL:          gatewayURL(),
		Resolver:     samtemplate.Resolver{Template: tmpl, Overrides: overrides, Resources: resources},
		EnvOverrides: map[string]string{"PUBLIC_BASE_URL": "http://127.0.0.1"},
		RIE:          filepath.Join(r, ".local", "bin", "aws-lambda-rie"),
		MaxInstances: 4, Logs: io.Discard, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	return gw
}
