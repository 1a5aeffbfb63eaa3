// Package teamshttp serves the Bot Framework's messaging endpoint, POST /teams/messages: the
// activities tenants' Teams bots receive, handed to the Teams channel (pkg/channel/teams) as the
// bytes the Bot Framework's token covers.
package teamshttp

import (
	"context"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/metrics"
)

type (
	call  = apigw.Call
	reply = apigw.Reply
)

// API serves Teams' activities through a gateway.
type API struct {
	gw       *apigw.Gateway
	messages *teams.Messages
}

// New returns the Teams controller over g, with no service: TeamsMessages takes it.
func New(g *apigw.Gateway) *API { return &API{gw: g} }

var teamsMessages = apigw.Function[*API]{Function: "teams-messages", Operations: []apigw.Endpoint[*API]{
	{Route: "POST /teams/messages", Proof: apigw.ProofTeams, Serve: (*API).teamsMessages},
}}

// Routes are the functions this package serves, for the table of every function (package
// routes).
func Routes() []apigw.Routes { return []apigw.Routes{teamsMessages.Routes()} }

// TeamsMessages serves teams-messages: the activities the Bot Framework sends tenants' Teams
// bots.
func (a *API) TeamsMessages(m *teams.Messages) apigw.Handler {
	b := *a
	b.messages = m
	return apigw.Serve(a.gw, &b, teamsMessages)
}

// teamsMessages serves POST /teams/messages, which API Gateway leaves open: the Bot
// Framework's token, verified by its published keys, authenticates an activity (package
// teams). Every verified activity answers 200 (a card's click with the invoke's answer); each is
// counted by its outcome, or by the code it was refused with.
func (a *API) teamsMessages(ctx context.Context, c *call) (reply, error) {
	body, err := apigw.RawBody(c)
	var ans teams.Answer
	if err == nil {
		m := a.messages
		if m.BaseURL == "" {
			// A card's Review opens the page at the base this request came in on, as a Slack
			// app's view names its URL, where the deployment names no public base.
			var base string
			if base, err = a.gw.BaseURL(c.Req); err == nil {
				in := *m
				in.BaseURL, m = base, &in
			}
		}
		if err == nil {
			ans, err = m.Handle(ctx, apigw.Lowered(c.Req.Headers), body)
		}
	}
	a.gw.CountOutcome(metrics.TeamsActivities, ans.Outcome, err)
	if err != nil {
		return reply{}, err
	}
	if len(ans.Body) == 0 {
		return reply{Status: http.StatusOK}, nil
	}
	return reply{Status: http.StatusOK, Body: ans.Body}, nil
}
