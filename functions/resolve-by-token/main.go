// Command resolve-by-token serves POST /interrupts/{token}.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw/jsonapi"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
)

func main() {
	ctx := context.Background()
	e := app.Must(app.Load())
	lambda.Start(jsonapi.New(e.Gateway()).ResolveByToken(app.Must(secrets.Tokens(ctx, e))))
}
