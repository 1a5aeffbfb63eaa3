package e2e

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/interrupthost/interrupthost/infra/local/devjwt"
	"github.com/interrupthost/interrupthost/infra/local/gateway"
	"github.com/interrupthost/interrupthost/infra/local/samtemplate"
)

func gatewayForTemplate(t *testing.T) *gateway.Gateway {
	t.Helper()
	r := root(t)
	tmpl, err := samtemplate.Load(filepath.Join(r, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.FromTemplate(tmpl, filepath.Join(r, ".local", "functions"), gateway.Options{
		Root: r,
		Resolver: samtemplate.Resolver{Template: tmpl,
			Overrides: map[string]string{"JwtIssuer": devjwt.Issuer, "JwtAudience": devjwt.Audience},
			Resources: map[string]string{"RunLogTable": "t", "KeyringSecret": "k"}},
		MaxInstances: 1, Logs: io.Discard, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	return gw
}
