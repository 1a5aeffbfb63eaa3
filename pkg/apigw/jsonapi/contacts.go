package jsonapi

import (
	"context"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// contactKey reads the path's kind and ref.
func contactKey(c *call) (kind, ref string) {
	return c.Req.PathParameters["kind"], c.Req.PathParameters["ref"]
}

// putContact serves PUT /contacts/{kind}/{ref}: 201 when it made the contact, 200 when it
// replaced one.
func (a *API) putContact(ctx context.Context, c *call) (reply, error) {
	var body contacts.Request
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	kind, ref := contactKey(c)
	made, created, err := a.contacts.Put(ctx, c.Principal, kind, ref, body)
	if err != nil {
		return reply{}, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return reply{Status: status, Body: made}, nil
}

// getContact serves GET /contacts/{kind}/{ref}.
func (a *API) getContact(ctx context.Context, c *call) (reply, error) {
	kind, ref := contactKey(c)
	got, err := a.contacts.Get(ctx, c.Principal, kind, ref)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: got}, nil
}

// deleteContact serves DELETE /contacts/{kind}/{ref}: 204.
func (a *API) deleteContact(ctx context.Context, c *call) (reply, error) {
	kind, ref := contactKey(c)
	if err := a.contacts.Delete(ctx, c.Principal, kind, ref); err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusNoContent}, nil
}

// listContacts serves GET /contacts?after=CURSOR&limit=N: the tenant's contacts by kind, then
// ref.
func (a *API) listContacts(ctx context.Context, c *call) (reply, error) {
	q := c.Req.QueryStringParameters
	limit, fields := limitParam(q, contacts.DefaultPage, contacts.MaxPage, nil)
	if len(fields) > 0 {
		return reply{}, interrupt.Invalid("the query is not acceptable", fields...)
	}
	page, err := a.contacts.List(ctx, c.Principal, q["after"], limit)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: page}, nil
}
