package apigw

import (
	"context"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// ScopeContactsManage is the scope of the contacts routes: a tenant's directory of addresses is
// an operator's, not an engine's or an approver's.
const ScopeContactsManage = "contacts:manage"

// contactKey reads the path's kind and ref.
func contactKey(c *call) (kind, ref string) {
	return c.req.PathParameters["kind"], c.req.PathParameters["ref"]
}

// putContact serves PUT /contacts/{kind}/{ref}: 201 when it made the contact, 200 when it
// replaced one.
func (a *API) putContact(ctx context.Context, c *call) (reply, error) {
	var body contacts.Request
	if _, err := decodeBody(c.req, &body); err != nil {
		return reply{}, err
	}
	kind, ref := contactKey(c)
	made, created, err := a.contacts.Put(ctx, c.principal, kind, ref, body)
	if err != nil {
		return reply{}, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return reply{status: status, body: made}, nil
}

// getContact serves GET /contacts/{kind}/{ref}.
func (a *API) getContact(ctx context.Context, c *call) (reply, error) {
	kind, ref := contactKey(c)
	got, err := a.contacts.Get(ctx, c.principal, kind, ref)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: got}, nil
}

// deleteContact serves DELETE /contacts/{kind}/{ref}: 204.
func (a *API) deleteContact(ctx context.Context, c *call) (reply, error) {
	kind, ref := contactKey(c)
	if err := a.contacts.Delete(ctx, c.principal, kind, ref); err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusNoContent}, nil
}

// listContacts serves GET /contacts?after=CURSOR&limit=N: the tenant's contacts by kind, then
// ref.
func (a *API) listContacts(ctx context.Context, c *call) (reply, error) {
	q := c.req.QueryStringParameters
	limit, fields := limitParam(q, contacts.DefaultPage, contacts.MaxPage, nil)
	if len(fields) > 0 {
		return reply{}, interrupt.Invalid("the query is not acceptable", fields...)
	}
	page, err := a.contacts.List(ctx, c.principal, q["after"], limit)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: page}, nil
}
