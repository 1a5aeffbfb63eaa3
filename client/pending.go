package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// PendingInterrupt is one interrupt a run of the caller's tenant waits on.
type PendingInterrupt struct {
	RunID       string `json:"runId"`
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
	Key         string `json:"key"`
	Kind        string `json:"kind"`
	// Title is the payload's data.title, if it has one.
	Title       string `json:"title,omitempty"`
	Seq         int64  `json:"seq"`
	RequestedAt string `json:"requestedAt"`
	ExpiresAt   string `json:"expiresAt,omitempty"`
	// Tally is an approval's votes so far against its quorum.
	Tally *Tally `json:"tally,omitempty"`
	// WaitingOn are whom it waits on, as the inboxes it is listed in: "principal:alice",
	// "group:finance", "role:manager" or "anyone".
	WaitingOn []string `json:"waitingOn,omitempty"`
	// RequestedBy is the principal that requested it.
	RequestedBy string `json:"requestedBy,omitempty"`
}

// Tally is an approval's counted votes against its quorum.
type Tally struct {
	Approvals  int `json:"approvals"`
	Rejections int `json:"rejections"`
	Required   int `json:"required"`
}

// PendingPage is one page of the tenant's pending interrupts; Next, when set, is the after of
// the page that follows.
type PendingPage struct {
	Interrupts []PendingInterrupt `json:"interrupts"`
	Next       string             `json:"next,omitempty"`
}

// Pending reads a page of the interrupts the caller's tenant's runs wait on, in run id order,
// from the runs after the run id after ("" for the first page); limit 0 takes the server's
// default. A page may hold none and still have a Next: read on until Next is "".
func (c *Client) Pending(ctx context.Context, after string, limit int) (PendingPage, error) {
	var out PendingPage
	err := c.do(ctx, http.MethodGet, paged("/interrupts", after, limit), nil, &out)
	return out, err
}

// paged is path with a page's query: after and limit, each when set.
func paged(path, after string, limit int) string {
	q := url.Values{}
	if after != "" {
		q.Set("after", after)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

// PendingIn reads the interrupts pending in one run of the caller's tenant (none for a run that
// does not exist), in request order.
func (c *Client) PendingIn(ctx context.Context, runID string) ([]PendingInterrupt, error) {
	var out PendingPage
	err := c.do(ctx, http.MethodGet, "/interrupts?"+url.Values{"runId": {runID}}.Encode(), nil, &out)
	return out.Interrupts, err
}

// InboxItem is one interrupt the caller may decide now.
type InboxItem struct {
	RunID       string `json:"runId"`
	NodeID      string `json:"nodeId"`
	InterruptID string `json:"interruptId"`
	Kind        string `json:"kind"`
	Title       string `json:"title,omitempty"`
	RequestedAt string `json:"requestedAt"`
	ExpiresAt   string `json:"expiresAt,omitempty"`
	Tally       *Tally `json:"tally,omitempty"`
	// Voted is true once the caller's vote is counted; the item stays until the interrupt
	// closes.
	Voted bool `json:"voted"`
	// URL is the interrupt's approval page, which signs the caller in.
	URL string `json:"url"`
}

// InboxPage is one page of the caller's inbox; Next, when set, is the after of the page that
// follows.
type InboxPage struct {
	Items []InboxItem `json:"items"`
	Next  string      `json:"next,omitempty"`
}

// Inbox reads a page of what the caller may decide now (scope approvals:respond), nearest
// deadline first, after the cursor after ("" for the first page); limit 0 takes the server's
// default.
func (c *Client) Inbox(ctx context.Context, after string, limit int) (InboxPage, error) {
	var out InboxPage
	err := c.do(ctx, http.MethodGet, paged("/inbox", after, limit), nil, &out)
	return out, err
}
