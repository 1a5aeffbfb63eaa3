package jsonapi

import (
	"context"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
)

// SlackAppView is a tenant's Slack app as its API shows it: never its secrets, and the URL the
// app's manifest names for interactivity (the client reads it as client.SlackApp).
type SlackAppView struct {
	slack.App
	InteractionsURL string `json:"interactionsUrl"`
}

func (a *API) slackView(c *call, app slack.App) (SlackAppView, error) {
	base, err := a.gw.BaseURL(c.Req)
	if err != nil {
		return SlackAppView{}, err
	}
	return SlackAppView{App: app, InteractionsURL: slack.InteractionsURL(base)}, nil
}

// putSlackApp serves PUT /integrations/slack: 201 with the app made, 200 with the app replaced.
func (a *API) putSlackApp(ctx context.Context, c *call) (reply, error) {
	var body slack.Request
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	app, created, err := a.slack.Put(ctx, c.Principal, body)
	if err != nil {
		return reply{}, err
	}
	v, err := a.slackView(c, app)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return reply{Status: status, Body: v}, err
}

// getSlackApp serves GET /integrations/slack.
func (a *API) getSlackApp(ctx context.Context, c *call) (reply, error) {
	app, err := a.slack.Get(ctx, c.Principal)
	if err != nil {
		return reply{}, err
	}
	v, err := a.slackView(c, app)
	return reply{Status: http.StatusOK, Body: v}, err
}

// deleteSlackApp serves DELETE /integrations/slack: 204.
func (a *API) deleteSlackApp(ctx context.Context, c *call) (reply, error) {
	if err := a.slack.Delete(ctx, c.Principal); err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusNoContent}, nil
}
