package apigw

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/metrics"
)

// ScopeIntegrationsManage registers and removes a tenant's chat apps (PUT and DELETE
// /integrations/slack): an administrator's alone, since a chat app's signing secret is as strong
// as every vote its clicks cast (subscriptions:manage only reads the app).
const ScopeIntegrationsManage = "integrations:manage"

// SlackAppView is a tenant's Slack app as its API shows it: never its secrets, and the URL the
// app's manifest names for interactivity (the client reads it as client.SlackApp).
type SlackAppView struct {
	slack.App
	InteractionsURL string `json:"interactionsUrl"`
}

func (a *API) slackView(c *call, app slack.App) (SlackAppView, error) {
	base, err := a.baseURL(c.req)
	if err != nil {
		return SlackAppView{}, err
	}
	return SlackAppView{App: app, InteractionsURL: slack.InteractionsURL(base)}, nil
}

// putSlackApp serves PUT /integrations/slack: 201 with the app made, 200 with the app replaced.
func (a *API) putSlackApp(ctx context.Context, c *call) (reply, error) {
	var body slack.Request
	if _, err := decodeBody(c.req, &body); err != nil {
		return reply{}, err
	}
	app, created, err := a.slack.Put(ctx, c.principal, body)
	if err != nil {
		return reply{}, err
	}
	v, err := a.slackView(c, app)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return reply{status: status, body: v}, err
}

// getSlackApp serves GET /integrations/slack.
func (a *API) getSlackApp(ctx context.Context, c *call) (reply, error) {
	app, err := a.slack.Get(ctx, c.principal)
	if err != nil {
		return reply{}, err
	}
	v, err := a.slackView(c, app)
	return reply{status: http.StatusOK, body: v}, err
}

// deleteSlackApp serves DELETE /integrations/slack: 204.
func (a *API) deleteSlackApp(ctx context.Context, c *call) (reply, error) {
	if err := a.slack.Delete(ctx, c.principal); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

// slackInteractions serves POST /slack/interactions, which API Gateway leaves open: Slack's
// signature with the signing secret of the app the click names authenticates it (package
// clicks). Every verified request answers 200 (Slack shows an error to the clicker otherwise);
// a refusal is told to the clicker through the click's response_url. Each is counted by its
// outcome, or by the code it was refused with.
func (a *API) slackInteractions(ctx context.Context, c *call) (reply, error) {
	body, err := rawBody(c)
	var ans slack.Answer
	if err == nil {
		ans, err = a.clicks.Handle(ctx, lowered(c.req.Headers), body)
	}
	a.countOutcome(metrics.SlackClicks, ans.Outcome, err)
	if err != nil {
		return reply{}, err
	}
	if len(ans.Body) == 0 {
		return reply{status: http.StatusOK}, nil
	}
	return reply{status: http.StatusOK, body: ans.Body}, nil
}

// rawBody is a request's body as sent, for a signature over its bytes, within MaxBody.
func rawBody(c *call) ([]byte, error) {
	body := []byte(c.req.Body)
	if c.req.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(c.req.Body); err != nil {
			return nil, interrupt.Invalid("the body is not valid base64")
		}
	}
	if len(body) > MaxBody {
		return nil, interrupt.Errorf(interrupt.CodePayloadTooLarge, "the body exceeds %d bytes", MaxBody)
	}
	return body, nil
}

// lowered are headers with their names lowercased, as signature checks read them.
func lowered(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = v
	}
	return out
}
