// Package slackhttp serves Slack's interactions route, POST /slack/interactions: the clicks of
// tenants' Slack apps, handed to the Slack channel (pkg/channel/slack) as the bytes Slack signed.
package slackhttp

import (
	"context"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/metrics"
)

type (
	call  = apigw.Call
	reply = apigw.Reply
)

// API serves Slack's clicks through a gateway.
type API struct {
	gw     *apigw.Gateway
	clicks *slack.Interactions
}

// New returns the Slack controller over g, with no service: SlackInteractions takes it.
func New(g *apigw.Gateway) *API { return &API{gw: g} }

var slackInteractions = apigw.Function[*API]{Function: "slack-interactions", Operations: []apigw.Endpoint[*API]{
	{Route: "POST /slack/interactions", Proof: apigw.ProofSlack, Serve: (*API).slackInteractions},
}}

// Routes are the functions this package serves, for the table of every function (package
// routes).
func Routes() []apigw.Routes { return []apigw.Routes{slackInteractions.Routes()} }

// SlackInteractions serves slack-interactions: the clicks of tenants' Slack apps.
func (a *API) SlackInteractions(x *slack.Interactions) apigw.Handler {
	b := *a
	b.clicks = x
	return apigw.Serve(a.gw, &b, slackInteractions)
}

// slackInteractions serves POST /slack/interactions, which API Gateway leaves open: Slack's
// signature with the signing secret of the app the click names authenticates it (package
// clicks). Every verified request answers 200 (Slack shows an error to the clicker otherwise);
// a refusal is told to the clicker through the click's response_url. Each is counted by its
// outcome, or by the code it was refused with.
func (a *API) slackInteractions(ctx context.Context, c *call) (reply, error) {
	body, err := apigw.RawBody(c)
	var ans slack.Answer
	if err == nil {
		ans, err = a.clicks.Handle(ctx, apigw.Lowered(c.Req.Headers), body)
	}
	a.gw.CountOutcome(metrics.SlackClicks, ans.Outcome, err)
	if err != nil {
		return reply{}, err
	}
	if len(ans.Body) == 0 {
		return reply{Status: http.StatusOK}, nil
	}
	return reply{Status: http.StatusOK, Body: ans.Body}, nil
}
