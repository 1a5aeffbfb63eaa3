package apigw

import (
	"context"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/metrics"
)

// TeamsBotView is a tenant's Teams bot as its API shows it: never its password, and the
// messaging endpoint the Azure Bot names.
type TeamsBotView struct {
	teams.Bot
	MessagesURL string `json:"messagesUrl"`
}

func (a *API) teamsView(c *call, b teams.Bot) (TeamsBotView, error) {
	base, err := a.baseURL(c.req)
	if err != nil {
		return TeamsBotView{}, err
	}
	return TeamsBotView{Bot: b, MessagesURL: teams.MessagesURL(base)}, nil
}

// putTeamsBot serves PUT /integrations/teams: 201 with the bot made, 200 with it replaced.
func (a *API) putTeamsBot(ctx context.Context, c *call) (reply, error) {
	var body teams.Request
	if _, err := decodeBody(c.req, &body); err != nil {
		return reply{}, err
	}
	b, created, err := a.teams.Put(ctx, c.principal, body)
	if err != nil {
		return reply{}, err
	}
	v, err := a.teamsView(c, b)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return reply{status: status, body: v}, err
}

// getTeamsBot serves GET /integrations/teams.
func (a *API) getTeamsBot(ctx context.Context, c *call) (reply, error) {
	b, err := a.teams.Get(ctx, c.principal)
	if err != nil {
		return reply{}, err
	}
	v, err := a.teamsView(c, b)
	return reply{status: http.StatusOK, body: v}, err
}

// deleteTeamsBot serves DELETE /integrations/teams: 204.
func (a *API) deleteTeamsBot(ctx context.Context, c *call) (reply, error) {
	if err := a.teams.Delete(ctx, c.principal); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

// teamsMessages serves POST /teams/messages, which API Gateway leaves open: the Bot
// Framework's token, verified by its published keys, authenticates an activity (package
// teams). Every verified activity answers 200 (a card's click with the invoke's answer); each is
// counted by its outcome, or by the code it was refused with.
func (a *API) teamsMessages(ctx context.Context, c *call) (reply, error) {
	body, err := rawBody(c)
	var ans teams.Answer
	if err == nil {
		m := a.teamsInvokes
		if m.BaseURL == "" {
			// A card's Review opens the page at the base this request came in on, as a Slack
			// app's view names its URL, where the deployment names no public base.
			var base string
			if base, err = a.baseURL(c.req); err == nil {
				in := *m
				in.BaseURL, m = base, &in
			}
		}
		if err == nil {
			ans, err = m.Handle(ctx, lowered(c.req.Headers), body)
		}
	}
	a.countOutcome(metrics.TeamsActivities, ans.Outcome, err)
	if err != nil {
		return reply{}, err
	}
	if len(ans.Body) == 0 {
		return reply{status: http.StatusOK}, nil
	}
	return reply{status: http.StatusOK, body: ans.Body}, nil
}
