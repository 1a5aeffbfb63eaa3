// Command deliver-events delivers the run-log table's new commits, from its DynamoDB stream, to
// the subscriptions that name their events.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app/delivery"
)

func main() {
	lambda.Start(delivery.MustDeliver(context.Background()))
}
