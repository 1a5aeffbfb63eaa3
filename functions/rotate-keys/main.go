// Command rotate-keys is the Secrets Manager rotation of the token keyring.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	handler, err := app.RotationHandler(context.Background())
	if err != nil {
		slog.Error("init failed", "error", err)
		os.Exit(1)
	}
	lambda.Start(handler)
}
