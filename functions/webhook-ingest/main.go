// Command webhook-ingest serves POST /webhooks/{endpointId}: providers' signed events.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
)

func main() {
	lambda.Start(app.MustServe(context.Background(), apigw.WebhookIngest, secrets.WebhookSecrets))
}
