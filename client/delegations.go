package client

import (
	"context"
	"net/http"
	"time"
)

// DelegationRequest names a delegate to decide in a principal's place until Until (docs/
// approvers.md, "Away: delegation").
type DelegationRequest struct {
	Delegate string `json:"delegate"`
	// From is when it begins; nil: now.
	From  *time.Time `json:"from,omitempty"`
	Until time.Time  `json:"until"`
	// Kinds limit it to interrupts of these kinds; none: every kind people are asked.
	Kinds []string `json:"kinds,omitempty"`
	Note  string   `json:"note,omitempty"`
}

// DelegationChange is one change of a principal's delegation: "set" or "ended", by whom, when.
type DelegationChange struct {
	At       time.Time `json:"at"`
	By       string    `json:"by"`
	What     string    `json:"what"`
	Delegate string    `json:"delegate"`
	Until    time.Time `json:"until"`
}

// Delegation is a principal's delegation, with who set it, who ended it and its changes.
type Delegation struct {
	Principal string             `json:"principal"`
	Delegate  string             `json:"delegate"`
	From      time.Time          `json:"from"`
	Until     time.Time          `json:"until"`
	Kinds     []string           `json:"kinds,omitempty"`
	Note      string             `json:"note,omitempty"`
	Groups    []string           `json:"groups,omitempty"`
	Roles     []string           `json:"roles,omitempty"`
	SetBy     string             `json:"setBy"`
	SetAt     time.Time          `json:"setAt"`
	EndedBy   string             `json:"endedBy,omitempty"`
	EndedAt   time.Time          `json:"endedAt,omitzero"`
	Version   int64              `json:"version"`
	Changes   []DelegationChange `json:"changes,omitempty"`
}

// PutDelegation sets principal's delegation, replacing any: one's own (scope approvals:respond)
// or anyone's (scope contacts:manage).
func (c *Client) PutDelegation(ctx context.Context, principal string, r DelegationRequest) (Delegation, error) {
	var out Delegation
	err := c.do(ctx, http.MethodPut, "/delegations/"+esc(principal), r, &out)
	return out, err
}

// Delegation reads principal's delegation, in force, to come or ended.
func (c *Client) Delegation(ctx context.Context, principal string) (Delegation, error) {
	var out Delegation
	err := c.do(ctx, http.MethodGet, "/delegations/"+esc(principal), nil, &out)
	return out, err
}

// EndDelegation ends principal's delegation at once, and answers it ended.
func (c *Client) EndDelegation(ctx context.Context, principal string) (Delegation, error) {
	var out Delegation
	err := c.do(ctx, http.MethodDelete, "/delegations/"+esc(principal), nil, &out)
	return out, err
}

// Delegations reads the tenant's delegations (scope contacts:manage).
func (c *Client) Delegations(ctx context.Context) ([]Delegation, error) {
	var out struct {
		Delegations []Delegation `json:"delegations"`
	}
	err := c.do(ctx, http.MethodGet, "/delegations", nil, &out)
	return out.Delegations, err
}
