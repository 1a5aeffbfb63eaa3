// Command request-interrupt serves POST /runs/{runId}/interrupts.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
)

func main() {
	lambda.Start(app.MustServe(context.Background(), apigw.RequestInterrupt, secrets.Keyring))
}
