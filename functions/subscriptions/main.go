// Command subscriptions serves POST /subscriptions, GET and DELETE /subscriptions/{id} and
// GET /subscriptions/{id}/deliveries.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
)

func main() {
	lambda.Start(app.MustServe(context.Background(), apigw.Subscriptions, secrets.Resends))
}
