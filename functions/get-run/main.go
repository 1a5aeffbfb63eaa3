// Command get-run serves GET /runs/{runId}.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw/jsonapi"
	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	ctx := context.Background()
	e := app.Must(app.Load())
	lambda.Start(jsonapi.New(e.Gateway()).GetRun(app.Must(e.Host(ctx))))
}
