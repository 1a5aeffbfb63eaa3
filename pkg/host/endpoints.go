package host

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// EndpointSecrets keeps each endpoint's signing secrets in a secret store: never in the table,
// never in an answer, never in a log line (webhook.Cache over secretsmanager.Secrets).
type EndpointSecrets interface {
	// Put creates or replaces the endpoint's secrets.
	Put(ctx context.Context, endpointID string, secrets []string) error
	// Get answers the endpoint's secrets. An endpoint with none answers an error wrapping
	// interrupt.ErrUnavailable, as an outage does (webhook.SecretStore): secrets are put before
	// their endpoint and deleted after it, so only a reader racing a deletion misses them, and
	// a retry finds no endpoint.
	Get(ctx context.Context, endpointID string) ([]string, error)
	// Reload reads the secrets again, unless they were read very recently (fresh is false, and
	// secrets nil): a signature none of the secrets read verifies may be signed with a secret
	// just replaced. Its errors are Get's.
	Reload(ctx context.Context, endpointID string) (secrets []string, fresh bool, err error)
	// Delete removes the endpoint's secrets; an endpoint with none is no error.
	Delete(ctx context.Context, endpointID string) error
}

// Webhooks are the operations of providers' webhooks over a host: their endpoints, and the
// events they post. They need the endpoints' secrets, which NewWebhooks requires: a function
// that serves webhooks without them does not compile.
type Webhooks struct {
	h       *Host
	secrets EndpointSecrets
}

// NewWebhooks returns h's webhook operations, keeping endpoints' secrets in secrets. It panics on
// nil secrets, at a function's init.
func NewWebhooks(h *Host, secrets EndpointSecrets) *Webhooks {
	if secrets == nil {
		panic("host: NewWebhooks without a secret store")
	}
	return &Webhooks{h: h, secrets: secrets}
}

// Host is the host the webhooks resolve interrupts of.
func (w *Webhooks) Host() *Host { return w.h }

// EndpointRequest sets up an endpoint: the provider, its signing secrets (several while a
// provider rolls them) and, optionally, where its events carry the correlation value.
type EndpointRequest struct {
	Provider    string   `json:"provider"`
	Secrets     []string `json:"secrets"`
	Correlation []string `json:"correlation,omitempty"`
}

// Limits of an endpoint's setup.
const (
	MaxEndpointSecrets  = 3
	MaxCorrelationPaths = 8
	// MaxEndpoints bounds a tenant's endpoints: each holds a Secrets Manager secret, billed by
	// the month.
	MaxEndpoints = 20
)

// checkSecrets refuses secrets the provider would never issue, naming them by place only.
func checkSecrets(v webhook.Verifier, secrets []string, at string) []interrupt.FieldError {
	if len(secrets) < 1 || len(secrets) > MaxEndpointSecrets {
		return []interrupt.FieldError{{Path: at, Message: fmt.Sprintf("must list 1 to %d secrets", MaxEndpointSecrets)}}
	}
	var fields []interrupt.FieldError
	for i, s := range secrets {
		if err := v.CheckSecret(s); err != nil {
			fields = append(fields, interrupt.FieldError{Path: fmt.Sprintf("%s/%d", at, i), Message: err.Error()})
		}
	}
	return fields
}

// CreateEndpoint sets up a provider endpoint for the caller's tenant. Its secrets are stored
// first, so an endpoint never exists without them.
func (w *Webhooks) CreateEndpoint(ctx context.Context, p interrupt.Principal, req EndpointRequest) (webhook.Endpoint, error) {
	h := w.h
	v, ok := webhook.Providers[req.Provider]
	if !ok {
		return webhook.Endpoint{}, interrupt.Invalid("the endpoint is not acceptable",
			interrupt.FieldError{Path: "/provider", Message: "must be stripe or standard-webhooks"})
	}
	fields := checkSecrets(v, req.Secrets, "/secrets")
	if req.Correlation == nil {
		req.Correlation = v.Correlation()
	}
	if len(req.Correlation) < 1 || len(req.Correlation) > MaxCorrelationPaths {
		fields = append(fields, interrupt.FieldError{Path: "/correlation", Message: fmt.Sprintf("must list 1 to %d JSON Pointers", MaxCorrelationPaths)})
	}
	for i, ptr := range req.Correlation {
		if !webhook.ValidPointer(ptr) {
			fields = append(fields, interrupt.FieldError{Path: fmt.Sprintf("/correlation/%d", i), Message: "must be a JSON Pointer into the event (\"/data/id\")"})
		}
	}
	if len(fields) > 0 {
		return webhook.Endpoint{}, interrupt.Invalid("the endpoint is not acceptable", fields...)
	}
	e := webhook.Endpoint{
		ID: "we_" + strings.ToLower(rand.Text()), Tenant: p.Tenant, Provider: req.Provider,
		Correlation: req.Correlation, CreatedAt: h.now().UTC(),
	}
	if err := w.secrets.Put(ctx, e.ID, req.Secrets); err != nil {
		return webhook.Endpoint{}, err
	}
	if err := h.endpointStore.CreateEndpoint(ctx, e, MaxEndpoints); err != nil {
		if derr := w.secrets.Delete(context.WithoutCancel(ctx), e.ID); derr != nil {
			return webhook.Endpoint{}, errors.Join(err, derr)
		}
		if errors.Is(err, webhook.ErrLimit) {
			return webhook.Endpoint{}, interrupt.Errorf(interrupt.CodeConflict, "a tenant has at most %d webhook endpoints; delete one first", MaxEndpoints)
		}
		return webhook.Endpoint{}, err
	}
	return e, nil
}

// Endpoint reads one of the caller's tenant's endpoints; another tenant's does not exist.
func (w *Webhooks) Endpoint(ctx context.Context, p interrupt.Principal, id string) (webhook.Endpoint, error) {
	e, err := w.h.endpointStore.Endpoint(ctx, id)
	if errors.Is(err, webhook.ErrNoEndpoint) || (err == nil && e.Tenant != p.Tenant) {
		return webhook.Endpoint{}, interrupt.Errorf(interrupt.CodeNotFound, "no webhook endpoint %s", id)
	}
	return e, err
}

// Endpoints lists the caller's tenant's endpoints, oldest first (at most MaxEndpoints). One
// listed by the store while its creation was under way, and so not readable, is left out.
func (w *Webhooks) Endpoints(ctx context.Context, p interrupt.Principal) ([]webhook.Endpoint, error) {
	ids, err := w.h.endpointStore.Endpoints(ctx, p.Tenant)
	if err != nil {
		return nil, err
	}
	out := make([]webhook.Endpoint, 0, len(ids))
	for _, id := range ids {
		e, err := w.Endpoint(ctx, p, id)
		switch {
		case interrupt.ErrorCode(err) == interrupt.CodeNotFound:
		case err != nil:
			return nil, err
		default:
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b webhook.Endpoint) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// DeleteEndpoint removes an endpoint, then its secrets: from then on its deliveries answer 404.
func (w *Webhooks) DeleteEndpoint(ctx context.Context, p interrupt.Principal, id string) error {
	h := w.h
	if _, err := w.Endpoint(ctx, p, id); err != nil {
		return err
	}
	if err := h.endpointStore.DeleteEndpoint(ctx, id); err != nil {
		return err
	}
	h.endpoints.forget(id)
	return w.secrets.Delete(ctx, id)
}

// ReplaceSecrets replaces an endpoint's secrets (to roll them, list the old beside the new).
func (w *Webhooks) ReplaceSecrets(ctx context.Context, p interrupt.Principal, id string, secrets []string) (webhook.Endpoint, error) {
	e, err := w.Endpoint(ctx, p, id)
	if err != nil {
		return e, err
	}
	if fields := checkSecrets(webhook.Providers[e.Provider], secrets, "/secrets"); len(fields) > 0 {
		return e, interrupt.Invalid("the secrets are not acceptable", fields...)
	}
	return e, w.secrets.Put(ctx, id, secrets)
}
