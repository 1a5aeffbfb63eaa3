// Command retry-deliveries retries the deliveries that failed, when their backoff is over, on
// an EventBridge Scheduler schedule.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app/delivery"
)

func main() {
	lambda.Start(delivery.MustRetryDeliveries(context.Background()))
}
