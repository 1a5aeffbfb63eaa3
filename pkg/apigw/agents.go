package apigw

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// agentDecisions serves POST /runs/{runId}/agent-decisions { nodeId, key, agentId, confidence,
// decision }: 201 with { runId, nodeId, seq, escalated, interruptId? }, or 200 with the first
// answer when the key was decided before.
func (a *API) agentDecisions(ctx context.Context, c *call) (reply, error) {
	if err := c.readRun(); err != nil {
		return reply{}, err
	}
	var body struct {
		NodeID     *string         `json:"nodeId"`
		Key        *string         `json:"key"`
		AgentID    *string         `json:"agentId"`
		Confidence *float64        `json:"confidence"`
		Decision   json.RawMessage `json:"decision"`
	}
	if _, err := decodeBody(c.req, &body); err != nil {
		return reply{}, err
	}
	var absent []string
	for _, m := range []struct {
		name    string
		present bool
	}{{"nodeId", body.NodeID != nil}, {"key", body.Key != nil}, {"agentId", body.AgentID != nil}, {"confidence", body.Confidence != nil}, {"decision", body.Decision != nil}} {
		if !m.present {
			absent = append(absent, m.name)
		}
	}
	if len(absent) > 0 {
		return reply{}, missing(absent...)
	}
	c.nodeID = *body.NodeID
	d, created, err := a.host.Decide(ctx, c.principal, c.runID, host.AgentDecision{
		NodeID: *body.NodeID, Key: *body.Key, AgentID: *body.AgentID, Confidence: *body.Confidence, Decision: body.Decision,
	})
	if err != nil {
		return reply{}, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return reply{status: status, body: d}, nil
}

// configureRun serves PUT /runs/{runId}/configurable: 200 with the run's configuration as it
// stands. The body is the spec's { configurable: { run: { escalationThreshold } } }, or its
// short form { escalationThreshold }; one of the two.
func (a *API) configureRun(ctx context.Context, c *call) (reply, error) {
	if err := c.readRun(); err != nil {
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
	if _, err := decodeBody(c.req, &body); err != nil {
		return reply{}, err
	}
	threshold, at := body.EscalationThreshold, "/escalationThreshold"
	switch conf := body.Configurable; {
	case conf != nil && threshold != nil:
		return reply{}, interrupt.Invalid("the body is not acceptable",
			interrupt.FieldError{Path: at, Message: "send configurable.run.escalationThreshold or escalationThreshold, not both"})
	case conf != nil && (conf.Run == nil || conf.Run.EscalationThreshold == nil):
		return reply{}, missing("configurable/run/escalationThreshold")
	case conf != nil:
		threshold, at = conf.Run.EscalationThreshold, "/configurable/run/escalationThreshold"
	case threshold == nil:
		return reply{}, missing("configurable/run/escalationThreshold")
	}
	if *threshold < 0 || *threshold > 1 {
		return reply{}, interrupt.Invalid("the configuration is not acceptable", interrupt.FieldError{Path: at, Message: "must be a number from 0 to 1"})
	}
	cfg, err := a.host.Configure(ctx, c.principal, c.runID, *threshold)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: cfg}, nil
}
