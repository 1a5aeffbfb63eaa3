// Command subscriptions serves POST /subscriptions, GET and DELETE /subscriptions/{id}, GET and
// POST /subscriptions/{id}/deliveries (a resend), and PUT, GET and DELETE /integrations/slack
// and /integrations/teams (the tenant's Slack app and Teams bot).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw/jsonapi"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/delivery"
	"github.com/interrupthost/interrupthost/pkg/environ"
)

func main() {
	e := app.Must(app.Load())
	subs, resender, slack, teams, err := delivery.Subscriptions(context.Background(), e)
	environ.ExitOn(err)
	lambda.Start(jsonapi.New(e.Gateway()).Subscriptions(subs, resender, slack, teams))
}
