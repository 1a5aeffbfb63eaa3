package jsonapi

import (
	"context"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// createSubscription serves POST /subscriptions: 201, the secret shown this once.
func (a *API) createSubscription(ctx context.Context, c *call) (reply, error) {
	var body outbound.Request
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	created, err := a.subs.Create(ctx, c.Principal, body)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusCreated, Body: created}, nil
}

// getSubscription serves GET /subscriptions/{id}.
func (a *API) getSubscription(ctx context.Context, c *call) (reply, error) {
	id, err := subscriptionID(c)
	if err != nil {
		return reply{}, err
	}
	s, err := a.subs.Get(ctx, c.Principal, id)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: s}, nil
}

// SubscriptionList is the answer of GET /subscriptions.
type SubscriptionList struct {
	Subscriptions []outbound.Subscription `json:"subscriptions"`
}

// listSubscriptions serves GET /subscriptions: the tenant's subscriptions, oldest first,
// without their secrets.
func (a *API) listSubscriptions(ctx context.Context, c *call) (reply, error) {
	subs, err := a.subs.List(ctx, c.Principal)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: SubscriptionList{Subscriptions: subs}}, nil
}

// deleteSubscription serves DELETE /subscriptions/{id}: 204.
func (a *API) deleteSubscription(ctx context.Context, c *call) (reply, error) {
	id, err := subscriptionID(c)
	if err != nil {
		return reply{}, err
	}
	if err := a.subs.Delete(ctx, c.Principal, id); err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusNoContent}, nil
}

// listDeliveries serves GET /subscriptions/{id}/deliveries: the recent attempts.
func (a *API) listDeliveries(ctx context.Context, c *call) (reply, error) {
	id, err := subscriptionID(c)
	if err != nil {
		return reply{}, err
	}
	attempts, err := a.subs.Deliveries(ctx, c.Principal, id)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: struct {
		Deliveries []outbound.Attempt `json:"deliveries"`
	}{attempts}}, nil
}

// Resend is the body of POST /subscriptions/{id}/deliveries.
type Resend struct {
	// EventID names the event as its deliveries did: <runId>:<seq>:<index>.
	EventID string `json:"eventId"`
}

// resendDelivery serves POST /subscriptions/{id}/deliveries: the event sent to the receiver
// again, now, once; 200 with the attempt, delivered or failed (the receiver's answer is the
// attempt's, not the request's).
func (a *API) resendDelivery(ctx context.Context, c *call) (reply, error) {
	id, err := subscriptionID(c)
	if err != nil {
		return reply{}, err
	}
	var body Resend
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	s, err := a.subs.Get(ctx, c.Principal, id)
	if err != nil {
		return reply{}, err
	}
	base, err := a.gw.BaseURL(c.Req)
	if err != nil {
		return reply{}, err
	}
	attempt, err := a.resend.Resend(ctx, s, body.EventID, base)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: attempt}, nil
}

// subscriptionID is the {id} of a subscriptions route; anything but an id names none.
func subscriptionID(c *call) (string, error) {
	id := c.Req.PathParameters["id"]
	if !runlog.ValidID(id) {
		return "", interrupt.Errorf(interrupt.CodeNotFound, "no subscription %q", id)
	}
	return id, nil
}
