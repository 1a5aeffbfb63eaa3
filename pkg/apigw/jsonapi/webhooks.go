package jsonapi

import (
	"context"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// EndpointView is an endpoint as its API shows it: never its secrets (the client reads it as
// client.Endpoint).
type EndpointView struct {
	webhook.Endpoint
	Path string `json:"path"`
}

func viewOf(e webhook.Endpoint) EndpointView {
	return EndpointView{Endpoint: e, Path: "/webhooks/" + e.ID}
}

// EndpointList is the answer of GET /webhook-endpoints.
type EndpointList struct {
	Endpoints []EndpointView `json:"endpoints"`
}

// listEndpoints serves GET /webhook-endpoints: the tenant's endpoints, oldest first.
func (a *API) listEndpoints(ctx context.Context, c *call) (reply, error) {
	es, err := a.webhooks.Endpoints(ctx, c.Principal)
	if err != nil {
		return reply{}, err
	}
	list := EndpointList{Endpoints: make([]EndpointView, len(es))}
	for i, e := range es {
		list.Endpoints[i] = viewOf(e)
	}
	return reply{Status: http.StatusOK, Body: list}, nil
}

// createEndpoint serves POST /webhook-endpoints: 201 with the endpoint.
func (a *API) createEndpoint(ctx context.Context, c *call) (reply, error) {
	var body host.EndpointRequest
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	e, err := a.webhooks.CreateEndpoint(ctx, c.Principal, body)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusCreated, Body: viewOf(e)}, nil
}

// getEndpoint serves GET /webhook-endpoints/{id}.
func (a *API) getEndpoint(ctx context.Context, c *call) (reply, error) {
	id, err := endpointID(c)
	if err != nil {
		return reply{}, err
	}
	e, err := a.webhooks.Endpoint(ctx, c.Principal, id)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: viewOf(e)}, nil
}

// deleteEndpoint serves DELETE /webhook-endpoints/{id}: 204.
func (a *API) deleteEndpoint(ctx context.Context, c *call) (reply, error) {
	id, err := endpointID(c)
	if err != nil {
		return reply{}, err
	}
	if err := a.webhooks.DeleteEndpoint(ctx, c.Principal, id); err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusNoContent}, nil
}

// replaceSecrets serves PUT /webhook-endpoints/{id}/secrets { secrets }.
func (a *API) replaceSecrets(ctx context.Context, c *call) (reply, error) {
	id, err := endpointID(c)
	if err != nil {
		return reply{}, err
	}
	var body struct {
		Secrets []string `json:"secrets"`
	}
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	e, err := a.webhooks.ReplaceSecrets(ctx, c.Principal, id, body.Secrets)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: viewOf(e)}, nil
}

// endpointID is the {id} of a webhook-endpoints route; anything but an id names no endpoint.
func endpointID(c *call) (string, error) {
	id := c.Req.PathParameters["id"]
	if !runlog.ValidID(id) {
		return "", interrupt.Errorf(interrupt.CodeNotFound, "no webhook endpoint %q", id)
	}
	return id, nil
}

// ingestWebhook serves POST /webhooks/{endpointId}, which API Gateway leaves open: the
// provider's signature, verified on the raw bytes, authenticates the delivery. Every verified
// event answers 200, so the provider stops retrying it.
//
// Every event received is counted by its outcome, or by the code it was refused with.
func (a *API) ingestWebhook(ctx context.Context, c *call) (reply, error) {
	res, err := a.ingest(ctx, c)
	a.gw.CountOutcome(metrics.Webhooks, res.Outcome, err)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: res}, nil
}

func (a *API) ingest(ctx context.Context, c *call) (host.Ingested, error) {
	id := c.Req.PathParameters["endpointId"]
	if !runlog.ValidID(id) {
		return host.Ingested{}, interrupt.Errorf(interrupt.CodeNotFound, "no webhook endpoint %q", id)
	}
	body, err := apigw.RawBody(c)
	if err != nil {
		return host.Ingested{}, err
	}
	return a.webhooks.Ingest(ctx, id, apigw.Lowered(c.Req.Headers), body)
}
