// Command policies serves PUT, GET and DELETE /policies/tools/{toolName}, GET /policies/tools and
// PUT, GET and DELETE /policies/default: the tenant's tool policies, who approves an agent's
// calls of each tool.
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
	lambda.Start(jsonapi.New(e.Gateway()).Policies(app.Must(e.Policies(ctx))))
}
