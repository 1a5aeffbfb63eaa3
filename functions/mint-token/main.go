// Command mint-token serves POST /runs/{runId}/interrupts/{nodeId}/tokens.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	lambda.Start(app.MustServe(context.Background(), "mint-token"))
}
