package client

import (
	"context"
	"net/http"
)

// Endpoint is a webhook endpoint a provider delivers its events to (POST Path, signed with one
// of the endpoint's secrets, which the host never shows).
type Endpoint struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	// Correlation lists the JSON Pointers tried, in order, for an event's correlation value.
	Correlation []string `json:"correlation"`
	CreatedAt   string   `json:"createdAt"`
	Path        string   `json:"path"`
}

// CreateEndpoint sets up an endpoint for provider ("stripe" or "standard-webhooks", the
// signatures the host verifies)
// with the signing secrets the provider holds (at most 3, for a rollover); correlation may be
// nil for the provider's defaults.
func (c *Client) CreateEndpoint(ctx context.Context, provider string, secrets, correlation []string) (Endpoint, error) {
	req := map[string]any{"provider": provider, "secrets": secrets}
	if len(correlation) > 0 {
		req["correlation"] = correlation
	}
	var out Endpoint
	err := c.do(ctx, http.MethodPost, "/webhook-endpoints", req, &out)
	return out, err
}

// Endpoints lists the tenant's endpoints, oldest first.
func (c *Client) Endpoints(ctx context.Context) ([]Endpoint, error) {
	var out struct {
		Endpoints []Endpoint `json:"endpoints"`
	}
	err := c.do(ctx, http.MethodGet, "/webhook-endpoints", nil, &out)
	return out.Endpoints, err
}

// Endpoint reads one of the tenant's endpoints.
func (c *Client) Endpoint(ctx context.Context, id string) (Endpoint, error) {
	var out Endpoint
	err := c.do(ctx, http.MethodGet, "/webhook-endpoints/"+esc(id), nil, &out)
	return out, err
}

// ReplaceEndpointSecrets replaces the endpoint's signing secrets (a rotation: pass the new
// secret beside the old until the provider signs with the new one only).
func (c *Client) ReplaceEndpointSecrets(ctx context.Context, id string, secrets []string) (Endpoint, error) {
	var out Endpoint
	err := c.do(ctx, http.MethodPut, "/webhook-endpoints/"+esc(id)+"/secrets", map[string]any{"secrets": secrets}, &out)
	return out, err
}

// DeleteEndpoint deletes the endpoint and its secrets; events sent to it are refused from then.
func (c *Client) DeleteEndpoint(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/webhook-endpoints/"+esc(id), nil, nil)
}
