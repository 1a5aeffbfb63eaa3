// Command mcp serves the Model Context Protocol endpoint, POST (and GET and DELETE) /mcp, whose
// tools let an agent ask people and wait for them, and its protected resource metadata, GET
// /.well-known/oauth-protected-resource and /.well-known/oauth-protected-resource/mcp.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw/mcphttp"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
	"github.com/interrupthost/interrupthost/pkg/bearer"
	"github.com/interrupthost/interrupthost/pkg/environ"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/mcp"
)

func main() {
	ctx := context.Background()
	e := app.Must(app.Load())
	tools := mcp.New(app.Must(secrets.Tokens(ctx, e)), mcp.Options{Version: host.Version, Log: environ.Logger(), Policies: app.Must(e.Policies(ctx))})
	issuer, audiences := environ.TokenIssuer()
	verifier := app.Must(bearer.New(issuer, audiences, nil, nil)).AllowClients(app.Must(environ.ClientMetadataURLs()))
	lambda.Start(mcphttp.New(e.Gateway()).MCP(tools, verifier))
}
