// Command end-run serves POST /runs/{runId}/cancel and POST /runs/{runId}/complete.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	lambda.Start(app.MustServe(context.Background(), apigw.EndRun, app.Host))
}
