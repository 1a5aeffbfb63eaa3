package apigw

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// ScopeSubscriptionsManage is the scope of the subscriptions routes.
const ScopeSubscriptionsManage = "subscriptions:manage"

// Subscriptions serves the subscriptions routes over m, all under subscriptions:manage:
// POST /subscriptions (201, the secret shown this once), GET and DELETE /subscriptions/{id}
// (200, 204) and GET /subscriptions/{id}/deliveries (200, the recent attempts). It needs no
// host: the function builds no run log, schemas or keyring it would not use.
func Subscriptions(m *outbound.Subscriptions, log *slog.Logger, opts Options) Handler {
	a := &API{log: log, opts: opts.withDefaults()}
	return a.route(ScopeSubscriptionsManage, func(ctx context.Context, c *call) (reply, error) {
		if c.req.RouteKey == "POST /subscriptions" {
			var body outbound.Request
			if _, err := decodeBody(c.req, &body); err != nil {
				return reply{}, err
			}
			created, err := m.Create(ctx, c.principal, body)
			if err != nil {
				return reply{}, err
			}
			return reply{status: http.StatusCreated, body: created}, nil
		}
		id := c.req.PathParameters["id"]
		if !runlog.ValidID(id) {
			return reply{}, interrupt.Errorf(interrupt.CodeNotFound, "no subscription %q", id)
		}
		switch c.req.RouteKey {
		case "GET /subscriptions/{id}":
			s, err := m.Get(ctx, c.principal, id)
			if err != nil {
				return reply{}, err
			}
			return reply{status: http.StatusOK, body: s}, nil
		case "DELETE /subscriptions/{id}":
			if err := m.Delete(ctx, c.principal, id); err != nil {
				return reply{}, err
			}
			return reply{status: http.StatusNoContent}, nil
		case "GET /subscriptions/{id}/deliveries":
			attempts, err := m.Deliveries(ctx, c.principal, id)
			if err != nil {
				return reply{}, err
			}
			return reply{status: http.StatusOK, body: struct {
				Deliveries []outbound.Attempt `json:"deliveries"`
			}{attempts}}, nil
		}
		return reply{}, interrupt.Errorf(interrupt.CodeNotFound, "no such operation")
	})
}
