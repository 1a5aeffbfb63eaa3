// Command subscriptions serves POST /subscriptions, GET and DELETE /subscriptions/{id}, GET and
// POST /subscriptions/{id}/deliveries (a resend), PUT, GET and DELETE /integrations/slack (the
// tenant's Slack app) and /integrations/teams (the tenant's Teams bot).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/delivery"
	"github.com/interrupthost/interrupthost/pkg/environ"
)

func main() {
	e := app.Must(app.Load())
	subs, resender, slack, teams, err := delivery.Subscriptions(context.Background(), e)
	environ.ExitOn(err)
	lambda.Start(e.API().Subscriptions(subs, resender, slack, teams))
}
