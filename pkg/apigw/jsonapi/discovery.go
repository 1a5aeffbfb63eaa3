package jsonapi

import (
	"context"
	"net/http"
)

// discovery serves GET /.well-known/interrupt-host, open to anyone: the capabilities and the
// interrupt facet the host enforces.
func (a *API) discovery(ctx context.Context, c *call) (reply, error) {
	return reply{Status: http.StatusOK, Body: a.opts.Discovery}, nil
}
