// Command inspect-by-token serves GET and HEAD /interrupts/{token}.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
)

func main() {
	lambda.Start(app.MustServe(context.Background(), apigw.InspectByToken, secrets.Keyring))
}
