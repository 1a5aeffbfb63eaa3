// Command request-interrupt serves POST /runs/{runId}/interrupts.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	lambda.Start(app.MustServe(context.Background(), "request-interrupt"))
}
