// Command receipts serves GET /runs/{runId}/outcomes/{interruptId}, an interrupt's outcome with
// its approved call's receipt, and POST /receipts/redeem, which spends a receipt once.
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
	lambda.Start(jsonapi.New(e.Gateway()).Receipts(app.Must(secrets.Tokens(ctx, e))))
}
