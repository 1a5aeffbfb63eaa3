// Command redrive-stream delivers the commits of the stream batches deliver-events gave up on,
// read back from the run-log table, as the stream's dead-letter queue names them.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app/delivery"
)

func main() {
	lambda.Start(delivery.MustRedrive(context.Background()))
}
