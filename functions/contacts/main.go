// Command contacts serves PUT, GET and DELETE /contacts/{kind}/{ref} and GET /contacts: the
// tenant's directory of where the people, groups and roles its approvals name are reached.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw/jsonapi"
	"github.com/interrupthost/interrupthost/pkg/app"
)

func main() {
	ctx := context.Background()
	e := app.Must(app.Load())
	lambda.Start(jsonapi.New(e.Gateway()).Contacts(app.Must(e.Contacts(ctx))))
}
