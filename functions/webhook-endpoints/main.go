// Command webhook-endpoints serves POST /webhook-endpoints, GET and DELETE
// /webhook-endpoints/{id} and PUT /webhook-endpoints/{id}/secrets.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
)

func main() {
	lambda.Start(app.MustServe(context.Background(), apigw.WebhookEndpoints, secrets.WebhookSecrets))
}
