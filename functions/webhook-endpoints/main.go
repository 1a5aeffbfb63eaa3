// Command webhook-endpoints serves POST /webhook-endpoints, GET and DELETE
// /webhook-endpoints/{id} and PUT /webhook-endpoints/{id}/secrets.
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
	lambda.Start(jsonapi.New(e.Gateway()).WebhookEndpoints(app.Must(secrets.Webhooks(ctx, e))))
}
