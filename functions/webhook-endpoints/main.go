// Command webhook-endpoints serves POST /webhook-endpoints, GET and DELETE
// /webhook-endpoints/{id} and PUT /webhook-endpoints/{id}/secrets.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	lambda.Start(app.MustServe(context.Background(), "webhook-endpoints"))
}
