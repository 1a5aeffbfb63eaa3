// Command webhook-ingest serves POST /webhooks/{endpointId}: providers' signed events.
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
	lambda.Start(jsonapi.New(e.Gateway()).WebhookIngest(app.Must(secrets.Webhooks(ctx, e))))
}
