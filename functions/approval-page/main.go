// Command approval-page serves GET, HEAD and POST /approve/{token}: the page an approver opens
// from a mail or chat link, and the decision it posts.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	lambda.Start(app.Must(context.Background(), app.WithKeyring).ApprovalPage())
}
