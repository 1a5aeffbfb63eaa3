// Command slack-interactions serves POST /slack/interactions: the clicks of tenants' Slack apps
// on their approvals' Approve and Reject buttons, each verified as Slack's and recorded as the
// approver whose contact names the member who clicked.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw/slackhttp"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
)

func main() {
	ctx := context.Background()
	e := app.Must(app.Load())
	lambda.Start(slackhttp.New(e.Gateway()).SlackInteractions(app.Must(secrets.SlackClicks(ctx, e))))
}
