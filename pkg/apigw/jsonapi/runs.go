package jsonapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// The runs routes: a run's snapshot and events, its end, and its configuration; the pending
// interrupts of the tenant's runs.

// getRun serves GET /runs/{runId}: the RunSnapshot.
func (a *API) getRun(ctx context.Context, c *call) (reply, error) {
	if err := c.ReadRun(); err != nil {
		return reply{}, err
	}
	snap, err := a.host.Snapshot(ctx, c.Principal, c.RunID)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: snap}, nil
}

// listPending serves GET /interrupts?after=RUN&limit=N: the caller's tenant's pending
// interrupts, a page at a time, in run id order; GET /interrupts?runId=RUN: one run's.
func (a *API) listPending(ctx context.Context, c *call) (reply, error) {
	q := c.Req.QueryStringParameters
	if run, ok := q["runId"]; ok {
		switch {
		case !runlog.ValidID(run):
			return reply{}, interrupt.Invalid("the query is not acceptable", interrupt.FieldError{Path: "runId", Message: "must match ^[A-Za-z0-9._:-]{1,128}$"})
		case len(q) > 1:
			return reply{}, interrupt.Invalid("runId lists one run's interrupts, on one page",
				interrupt.FieldError{Path: "runId", Message: "must come without after and limit"})
		}
		page, err := a.host.PendingInRun(ctx, c.Principal, run)
		if err != nil {
			return reply{}, err
		}
		return reply{Status: http.StatusOK, Body: page}, nil
	}
	var fields []interrupt.FieldError
	after, limit := q["after"], host.DefaultPendingLimit
	if _, ok := q["after"]; ok && !runlog.ValidID(after) {
		fields = append(fields, interrupt.FieldError{Path: "after", Message: "must be a run id, the next of an earlier page"})
	}
	limit, fields = limitParam(q, limit, host.MaxPendingLimit, fields)
	if len(fields) > 0 {
		return reply{}, interrupt.Invalid("the query is not acceptable", fields...)
	}
	page, err := a.host.PendingInterrupts(ctx, c.Principal, after, limit)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: page}, nil
}

// limitParam reads the query's limit, from 1 to most, def when it is absent; a limit out of
// range adds its field error to fields.
func limitParam(q map[string]string, def, most int, fields []interrupt.FieldError) (int, []interrupt.FieldError) {
	v, ok := q["limit"]
	if !ok {
		return def, fields
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		fields = append(fields, interrupt.FieldError{Path: "limit", Message: "must be an integer from 1 to " + strconv.Itoa(most)})
	}
	return n, fields
}

// listEvents serves GET /runs/{runId}/events?after=SEQ&limit=N&mode=updates|debug: debug (and
// no mode) every event, updates the state updates only (interrupt.Mode).
func (a *API) listEvents(ctx context.Context, c *call) (reply, error) {
	if err := c.ReadRun(); err != nil {
		return reply{}, err
	}
	q := c.Req.QueryStringParameters
	var fields []interrupt.FieldError
	after, limit := int64(0), host.MaxPageCommits
	if v, ok := q["after"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			fields = append(fields, interrupt.FieldError{Path: "after", Message: "must be a commit seq (an integer >= 0)"})
		}
		after = n
	}
	limit, fields = limitParam(q, limit, host.MaxPageCommits, fields)
	mode := interrupt.Mode(q["mode"])
	if _, ok := q["mode"]; ok && mode != interrupt.ModeUpdates && mode != interrupt.ModeDebug {
		fields = append(fields, interrupt.FieldError{Path: "mode", Message: "must be updates or debug"})
	}
	if len(fields) > 0 {
		return reply{}, interrupt.Invalid("the query is not acceptable", fields...)
	}
	page, err := a.host.Events(ctx, c.Principal, c.RunID, after, limit, mode)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: page}, nil
}

// cancelRun serves POST /runs/{runId}/cancel, with an optional body { reason }.
func (a *API) cancelRun(ctx context.Context, c *call) (reply, error) {
	return a.endRun(ctx, c, interrupt.RunCancelled)
}

// completeRun serves POST /runs/{runId}/complete, with an optional body { reason }.
func (a *API) completeRun(ctx context.Context, c *call) (reply, error) {
	return a.endRun(ctx, c, interrupt.RunCompleted)
}

func (a *API) endRun(ctx context.Context, c *call, end interrupt.RunStatus) (reply, error) {
	if err := c.ReadRun(); err != nil {
		return reply{}, err
	}
	var body struct {
		Reason string `json:"reason"`
	}
	if c.Req.Body != "" {
		if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
			return reply{}, err
		}
		if len(body.Reason) > 4096 {
			return reply{}, interrupt.Invalid("reason is too long", interrupt.FieldError{Path: "/reason", Message: "must be at most 4096 characters"})
		}
	}
	res, err := a.host.EndRun(ctx, c.Principal, c.RunID, end, body.Reason)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: res}, nil
}

// configureRun serves PUT /runs/{runId}/configurable: 200 with the run's configuration as it
// stands. The body is the spec's { configurable: { run: { escalationThreshold } } }, or its
// short form { escalationThreshold }; one of the two.
func (a *API) configureRun(ctx context.Context, c *call) (reply, error) {
	if err := c.ReadRun(); err != nil {
		return reply{}, err
	}
	var body struct {
		EscalationThreshold *float64 `json:"escalationThreshold"`
		Configurable        *struct {
			Run *struct {
				EscalationThreshold *float64 `json:"escalationThreshold"`
			} `json:"run"`
		} `json:"configurable"`
	}
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
		return reply{}, err
	}
	threshold, at := body.EscalationThreshold, "/escalationThreshold"
	switch conf := body.Configurable; {
	case conf != nil && threshold != nil:
		return reply{}, interrupt.Invalid("the body is not acceptable",
			interrupt.FieldError{Path: at, Message: "send configurable.run.escalationThreshold or escalationThreshold, not both"})
	case conf != nil && (conf.Run == nil || conf.Run.EscalationThreshold == nil):
		return reply{}, apigw.Missing("configurable/run/escalationThreshold")
	case conf != nil:
		threshold, at = conf.Run.EscalationThreshold, "/configurable/run/escalationThreshold"
	case threshold == nil:
		return reply{}, apigw.Missing("configurable/run/escalationThreshold")
	}
	if *threshold < 0 || *threshold > 1 {
		return reply{}, interrupt.Invalid("the configuration is not acceptable", interrupt.FieldError{Path: at, Message: "must be a number from 0 to 1"})
	}
	cfg, err := a.host.Configure(ctx, c.Principal, c.RunID, *threshold)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusOK, Body: cfg}, nil
}

// inbox serves GET /inbox: the pending interrupts the caller may decide now, nearest deadline
// first, each with its page (which signs the caller in); after is a page's next, opaque.
func (a *API) inbox(ctx context.Context, c *call) (reply, error) {
	q := c.Req.QueryStringParameters
	var fields []interrupt.FieldError
	var after string
	if v, ok := q["after"]; ok {
		b, err := base64.RawURLEncoding.DecodeString(v)
		if err != nil || len(b) == 0 || len(b) > apigw.MaxCursor {
			fields = append(fields, interrupt.FieldError{Path: "after", Message: "must be the next of an earlier page"})
		}
		after = string(b)
	}
	limit, fields := limitParam(q, host.DefaultInboxLimit, host.MaxInboxLimit, fields)
	for k := range q {
		if k != "after" && k != "limit" {
			fields = append(fields, interrupt.FieldError{Path: k, Message: "is not a parameter of the inbox"})
		}
	}
	if len(fields) > 0 {
		return reply{}, interrupt.Invalid("the query is not acceptable", fields...)
	}
	base, err := a.gw.BaseURL(c.Req)
	if err != nil {
		return reply{}, err
	}
	page, err := a.host.Inbox(ctx, c.Principal, after, limit)
	if err != nil {
		return reply{}, err
	}
	for i, it := range page.Items {
		page.Items[i].URL = base + "/approve/" + url.PathEscape(it.RunID) + "/" + url.PathEscape(it.InterruptID)
	}
	if page.Next != "" {
		page.Next = base64.RawURLEncoding.EncodeToString([]byte(page.Next))
	}
	return reply{Status: http.StatusOK, Body: page}, nil
}
