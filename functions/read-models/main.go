// Command read-models keeps the run-log table's read models (the tenants' waiting indexes) from
// its DynamoDB stream, off the commit path, and redrives the stream batches it gave up on from
// its dead-letter queue.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	lambda.Start(app.MustReadModels(context.Background()))
}
