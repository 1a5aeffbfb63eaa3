// Command console serves the operators' console: GET /console (what waits in the tenant),
// GET /console/runs/{runId} (a run's story, what it waits on, its deliveries), and the forms
// that end a run or resend a delivery, POST /console/runs/{runId}/cancel, .../complete and
// .../resend.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw/web"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/delivery"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
	"github.com/interrupthost/interrupthost/pkg/environ"
)

func main() {
	ctx := context.Background()
	e := app.Must(app.Load())
	subs, resender, err := delivery.Resends(ctx, e)
	environ.ExitOn(err)
	lambda.Start(web.New(e.Gateway()).Console(app.Must(e.Host(ctx)), app.Must(secrets.SignIn(ctx, e)), subs, resender, app.Must(e.Contacts(ctx))))
}
