package client

import (
	"context"
	"net/http"
	"time"
)

// PolicyRule is who approves an agent's calls of a tool, and how: the members an approval
// payload's data has for it, and the receipt's life (docs/agents.md, "Tool policies").
type PolicyRule struct {
	ApproversList     []string `json:"approversList,omitempty"`
	ApproverGroupRefs []string `json:"approverGroupRefs,omitempty"`
	ApproverRoleRefs  []string `json:"approverRoleRefs,omitempty"`
	RequiredApprovals int      `json:"requiredApprovals,omitempty"`
	RejectionPolicy   string   `json:"rejectionPolicy,omitempty"`
	Actions           []string `json:"actions,omitempty"`
	TimeoutMs         int64    `json:"timeoutMs,omitempty"`
	ReceiptTTLMs      int64    `json:"receiptTtlMs,omitempty"`
}

// Policy is one version of a tool's policy: its rule, who set it and when.
type Policy struct {
	// Tool is the tool's name, or DefaultPolicy.
	Tool    string `json:"tool"`
	Version int    `json:"version"`
	PolicyRule
	SetBy   string    `json:"setBy"`
	SetAt   time.Time `json:"setAt"`
	Deleted bool      `json:"deleted,omitempty"`
}

// DefaultPolicy is the Tool of the tenant's default policy, which applies to calls of tools no
// policy names.
const DefaultPolicy = "*"

// policyPath is the path of tool's policy: the default's, or a tool's.
func policyPath(tool string) string {
	if tool == DefaultPolicy {
		return "/policies/default"
	}
	return "/policies/tools/" + esc(tool)
}

// PutPolicy sets tool's policy (or the default's, DefaultPolicy) to rule as its next version
// (scope policies:manage).
func (c *Client) PutPolicy(ctx context.Context, tool string, rule PolicyRule) (Policy, error) {
	var out Policy
	err := c.do(ctx, http.MethodPut, policyPath(tool), rule, &out)
	return out, err
}

// Policy reads the version in force of tool's policy (or the default's).
func (c *Client) Policy(ctx context.Context, tool string) (Policy, error) {
	var out Policy
	err := c.do(ctx, http.MethodGet, policyPath(tool), nil, &out)
	return out, err
}

// DeletePolicy ends tool's policy (or the default's): a version records who ended it.
func (c *Client) DeletePolicy(ctx context.Context, tool string) error {
	return c.do(ctx, http.MethodDelete, policyPath(tool), nil, nil)
}

// Policies reads the tenant's policies in force, the default first.
func (c *Client) Policies(ctx context.Context) ([]Policy, error) {
	var out struct {
		Policies []Policy `json:"policies"`
	}
	err := c.do(ctx, http.MethodGet, "/policies/tools", nil, &out)
	return out.Policies, err
}
