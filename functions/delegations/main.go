// Command delegations serves PUT, GET and DELETE /delegations/{principal} and GET /delegations:
// approvers' delegations, who decides in whose place while they are away.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw/jsonapi"
	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	ctx := context.Background()
	e := app.Must(app.Load())
	lambda.Start(jsonapi.New(e.Gateway()).Delegations(app.Must(e.Delegations(ctx))))
}
