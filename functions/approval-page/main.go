// Command approval-page serves the page an approver opens from a mail or chat link and the
// decision it posts: GET, HEAD and POST /approve/{token} (a link holding a token) and
// /approve/{runId}/{interruptId} (a link holding none: the approver signs in), GET
// /signin/callback, where the identity provider sends the approver back, and POST
// /signin/signout, a signed-in page's sign-out.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interrupthost/interrupthost/pkg/apigw/web"
	"github.com/interrupthost/interrupthost/pkg/app"
	"github.com/interrupthost/interrupthost/pkg/app/secrets"
)

func main() {
	ctx := context.Background()
	e := app.Must(app.Load())
	tokens := app.Must(secrets.Tokens(ctx, e))
	lambda.Start(web.New(e.Gateway()).ApprovalPage(tokens, app.Must(secrets.SignIn(ctx, e))))
}
