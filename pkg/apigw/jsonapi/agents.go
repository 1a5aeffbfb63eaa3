package jsonapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/host"
)

// agentDecisions serves POST /runs/{runId}/agent-decisions { nodeId, key, agentId, confidence,
// decision }: 201 with { runId, nodeId, seq, escalated, interruptId? }, or 200 with the first
// answer when the key was decided before.
func (a *API) agentDecisions(ctx context.Context, c *call) (reply, error) {
	if err := c.ReadRun(); err != nil {
		return reply{}, err
	}
	var body struct {
		NodeID     *string         `json:"nodeId"`
		Key        *string         `json:"key"`
		AgentID    *string         `json:"agentId"`
		Confidence *float64        `json:"confidence"`
		Decision   json.RawMessage `json:"decision"`
	}
	if _, err := apigw.DecodeBody(c.Req, &body); err != nil {
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
		return reply{}, apigw.Missing(absent...)
	}
	c.NodeID = *body.NodeID
	d, created, err := a.host.Decide(ctx, c.Principal, c.RunID, host.AgentDecision{
		NodeID: *body.NodeID, Key: *body.Key, AgentID: *body.AgentID, Confidence: *body.Confidence, Decision: body.Decision,
	})
	if err != nil {
		return reply{}, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return reply{Status: status, Body: d}, nil
}
