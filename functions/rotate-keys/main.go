// Command rotate-keys is the Secrets Manager rotation of the token keyring.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app/rotation"
	"github.com/interrupthost/interrupthost/pkg/environ"
)

func main() {
	handler, err := rotation.Handler(context.Background())
	environ.ExitOn(err)
	lambda.Start(handler)
}
