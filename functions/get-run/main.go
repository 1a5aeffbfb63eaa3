// Command get-run serves GET /runs/{runId}.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	ctx := context.Background()
	e := app.Must(app.Load())
	lambda.Start(e.API().GetRun(app.Must(e.Host(ctx))))
}
