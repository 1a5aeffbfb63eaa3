// Command teams-messages serves POST /teams/messages, the messaging endpoint of tenants' Teams
// bots: each activity verified as the Bot Framework's, and a card's Approve or Reject recorded
// as the approver whose contact names the Entra user who clicked.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw/teamshttp"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
)

func main() {
	ctx := context.Background()
	e := app.Must(app.Load())
	lambda.Start(teamshttp.New(e.Gateway()).TeamsMessages(app.Must(secrets.TeamsMessages(ctx, e))))
}
