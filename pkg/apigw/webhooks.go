package apigw

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// ScopeWebhooksManage is the scope of the webhook-endpoints routes.
const ScopeWebhooksManage = "webhooks:manage"

// endpointView is an endpoint as its API shows it: never its secrets.
type endpointView struct {
	webhook.Endpoint
	Path string `json:"path"`
}

func viewOf(e webhook.Endpoint) endpointView {
	return endpointView{Endpoint: e, Path: "/webhooks/" + e.ID}
}

// WebhookEndpoints serves the webhook-endpoints routes, all under webhooks:manage:
// POST /webhook-endpoints (201), GET and DELETE /webhook-endpoints/{id} (200, 204), and
// PUT /webhook-endpoints/{id}/secrets (200).
func (a *API) WebhookEndpoints() Handler {
	return a.route(ScopeWebhooksManage, func(ctx context.Context, c *call) (reply, error) {
		if c.req.RouteKey == "POST /webhook-endpoints" {
			var body host.EndpointRequest
			if _, err := decodeBody(c.req, &body); err != nil {
				return reply{}, err
			}
			e, err := a.host.CreateEndpoint(ctx, c.principal, body)
			if err != nil {
				return reply{}, err
			}
			return reply{status: http.StatusCreated, body: viewOf(e)}, nil
		}
		id := c.req.PathParameters["id"]
		if !runlog.ValidID(id) {
			return reply{}, interrupt.Errorf(interrupt.CodeNotFound, "no webhook endpoint %q", id)
		}
		switch c.req.RouteKey {
		case "GET /webhook-endpoints/{id}":
			e, err := a.host.Endpoint(ctx, c.principal, id)
			if err != nil {
				return reply{}, err
			}
			return reply{status: http.StatusOK, body: viewOf(e)}, nil
		case "DELETE /webhook-endpoints/{id}":
			if err := a.host.DeleteEndpoint(ctx, c.principal, id); err != nil {
				return reply{}, err
			}
			return reply{status: http.StatusNoContent}, nil
		case "PUT /webhook-endpoints/{id}/secrets":
			var body struct {
				Secrets []string `json:"secrets"`
			}
			if _, err := decodeBody(c.req, &body); err != nil {
				return reply{}, err
			}
			e, err := a.host.ReplaceSecrets(ctx, c.principal, id, body.Secrets)
			if err != nil {
				return reply{}, err
			}
			return reply{status: http.StatusOK, body: viewOf(e)}, nil
		}
		return reply{}, interrupt.Errorf(interrupt.CodeNotFound, "no such operation")
	})
}

// WebhookIngest serves POST /webhooks/{endpointId}, which API Gateway leaves open: the
// provider's signature, verified on the raw bytes, authenticates the delivery. Every verified
// event answers 200, so the provider stops retrying it.
func (a *API) WebhookIngest() Handler {
	return a.route(noJWT, func(ctx context.Context, c *call) (reply, error) {
		id := c.req.PathParameters["endpointId"]
		if !runlog.ValidID(id) {
			return reply{}, interrupt.Errorf(interrupt.CodeNotFound, "no webhook endpoint %q", id)
		}
		body := []byte(c.req.Body)
		if c.req.IsBase64Encoded {
			var err error
			if body, err = base64.StdEncoding.DecodeString(c.req.Body); err != nil {
				return reply{}, interrupt.Invalid("the body is not valid base64")
			}
		}
		if len(body) > MaxBody {
			return reply{}, interrupt.Errorf(interrupt.CodePayloadTooLarge, "the body exceeds %d bytes", MaxBody)
		}
		headers := make(map[string]string, len(c.req.Headers))
		for k, v := range c.req.Headers {
			headers[strings.ToLower(k)] = v
		}
		res, err := a.host.Ingest(ctx, id, headers, body)
		if err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusOK, body: res}, nil
	})
}
