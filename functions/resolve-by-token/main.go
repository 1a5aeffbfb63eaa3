// Command resolve-by-token serves POST /interrupts/{token}.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	lambda.Start(app.MustServe(context.Background(), "resolve-by-token"))
}
