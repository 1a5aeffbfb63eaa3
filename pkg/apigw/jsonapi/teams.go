package jsonapi

import (
	"context"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
)

// TeamsBotView is a tenant's Teams bot as its API shows it: never its password, and the
// messaging endpoint the Azure Bot names (the client reads it as client.TeamsBot).
type TeamsBotView struct {
	teams.Bot
	MessagesURL string `json:"messagesUrl"`
}

func (a *controller) teamsView(c *call, b teams.Bot) (TeamsBotView, error) {
	base, err := a.gw.BaseURL(c.Req)
	if err != nil {
		return TeamsBotView{}, err
	}
	return TeamsBotView{Bot: b, MessagesURL: teams.MessagesURL(base)}, nil
}

// putTeamsBot serves PUT /integrations/teams: 201 with the bot made, 200 with it replaced.
func (a *controller) putTeamsBot(ctx context.Context, c *call) (reply, error) {
	var body teams.Request
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	b, created, err := a.teams.Put(ctx, c.Principal, body)
	if err != nil {
		return reply{}, err
	}
	v, err := a.teamsView(c, b)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return reply{Status: status, Body: v}, err
}

// getTeamsBot serves GET /integrations/teams.
func (a *controller) getTeamsBot(ctx context.Context, c *call) (reply, error) {
	b, err := a.teams.Get(ctx, c.Principal)
	if err != nil {
		return reply{}, err
	}
	v, err := a.teamsView(c, b)
	return reply{Status: http.StatusOK, Body: v}, err
}

// deleteTeamsBot serves DELETE /integrations/teams: 204.
func (a *controller) deleteTeamsBot(ctx context.Context, c *call) (reply, error) {
	if err := a.teams.Delete(ctx, c.Principal); err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusNoContent}, nil
}
