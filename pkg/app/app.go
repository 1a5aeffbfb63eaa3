// Package app is the composition root every function shares: it reads the deployment's
// configuration from the environment once, at init, and builds the clients and the API over
// them. Functions call it and hand one of the API's handlers to lambda.Start.
package app

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// Environment variables the functions read (set by template.yaml).
const (
	EnvTable        = "TABLE_NAME"
	EnvTenantClaim  = "TENANT_CLAIM"
	EnvCapabilities = "CAPABILITIES"
)

// New builds the API from the environment. The SDK finds its region, credentials and endpoints
// (AWS_ENDPOINT_URL_DYNAMODB locally) the standard way; nothing here is local-only.
func New(ctx context.Context) (*apigw.API, error) {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	table := os.Getenv(EnvTable)
	if table == "" {
		return nil, errors.New("app: " + EnvTable + " is not set")
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	schemas, err := schema.Load()
	if err != nil {
		return nil, err
	}
	h := host.New(dynamo.NewRunLog(dynamo.NewClient(cfg), table), schemas, host.Config{
		Capabilities: list(os.Getenv(EnvCapabilities)),
	})
	return apigw.New(h, log, apigw.Options{TenantClaim: os.Getenv(EnvTenantClaim)}), nil
}

// Must is New for a function's init: a function that cannot be configured must not start.
func Must(ctx context.Context) *apigw.API {
	api, err := New(ctx)
	if err != nil {
		slog.Error("init failed", "error", err)
		os.Exit(1)
	}
	return api
}

func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
