// Command webhook-ingest serves POST /webhooks/{endpointId}: providers' signed events.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	lambda.Start(app.MustServe(context.Background(), "webhook-ingest"))
}
