// Command expiry-sweep records interrupt.expired for interrupts past their deadline, on an
// EventBridge Scheduler schedule.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	lambda.Start(app.MustSweep(context.Background()))
}
