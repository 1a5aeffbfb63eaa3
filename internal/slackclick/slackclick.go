// Package slackclick makes the requests Slack posts to an app's interactivity URL, signed as
// Slack signs them: a click of a message's button (block_actions) and a modal's submission
// (view_submission), form-encoded as payload=<JSON>, with X-Slack-Request-Timestamp and
// X-Slack-Signature: v0=hex(HMAC-SHA256(signing secret, "v0:<timestamp>:<body>")). Slack has
// no local stand-in; the end-to-end tests and `slackclick` (infra/local/cmd/slackclick) click
// through this.
package slackclick

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strconv"
	"time"
)

// Click is one click of a button of a message the app's incoming webhook posted.
type Click struct {
	AppID, TeamID, UserID string
	// ActionID and Value are the button's, as the message carries them.
	ActionID, Value string
	// ResponseURL is where the app may answer the click (Slack's hooks.slack.com URL; a local
	// receiver's in tests).
	ResponseURL string
	TriggerID   string
	// Blocks are the message's blocks as posted, which Slack sends back with the click.
	Blocks json.RawMessage
}

// Payload is the block_actions payload Slack sends for c.
func (c Click) Payload() ([]byte, error) {
	blocks := c.Blocks
	if blocks == nil {
		blocks = json.RawMessage("[]")
	}
	return json.Marshal(map[string]any{
		"type": "block_actions", "api_app_id": c.AppID, "token": "deprecated-verification-token",
		"team":         map[string]string{"id": c.TeamID, "domain": "acme"},
		"user":         map[string]string{"id": c.UserID, "username": c.UserID, "team_id": c.TeamID},
		"container":    map[string]any{"type": "message", "message_ts": "1733200000.000100", "channel_id": "C0123", "is_ephemeral": false},
		"channel":      map[string]string{"id": "C0123", "name": "approvals"},
		"message":      map[string]any{"type": "message", "text": "approval requested", "ts": "1733200000.000100", "blocks": blocks},
		"response_url": c.ResponseURL, "trigger_id": c.TriggerID,
		"actions": []map[string]any{{
			"type": "button", "action_id": c.ActionID, "block_id": "actions", "value": c.Value,
			"text": map[string]any{"type": "plain_text", "text": c.ActionID}, "action_ts": "1733200001.000200",
		}},
	})
}

// Submission is a modal's submission: the view the app opened, with the values typed into its
// inputs (by block id, then action id).
type Submission struct {
	AppID, TeamID, UserID string
	CallbackID            string
	PrivateMetadata       string
	Values                map[string]map[string]string
}

// Payload is the view_submission payload Slack sends for s.
func (s Submission) Payload() ([]byte, error) {
	values := map[string]map[string]any{}
	for block, inputs := range s.Values {
		values[block] = map[string]any{}
		for action, v := range inputs {
			values[block][action] = map[string]string{"type": "plain_text_input", "value": v}
		}
	}
	return json.Marshal(map[string]any{
		"type": "view_submission", "api_app_id": s.AppID, "team": map[string]string{"id": s.TeamID},
		"user": map[string]string{"id": s.UserID, "username": s.UserID, "team_id": s.TeamID},
		"view": map[string]any{
			"id": "V0123", "type": "modal", "callback_id": s.CallbackID, "private_metadata": s.PrivateMetadata,
			"state": map[string]any{"values": values},
		},
	})
}

// Body is the form Slack posts: payload=<the payload>.
func Body(payload []byte) []byte {
	return []byte(url.Values{"payload": {string(payload)}}.Encode())
}

// Sign is the headers Slack sends with body, signed with secret at at.
func Sign(secret string, at time.Time, body []byte) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + ts + ":"))
	m.Write(body)
	return map[string]string{
		"Content-Type":              "application/x-www-form-urlencoded",
		"X-Slack-Request-Timestamp": ts,
		"X-Slack-Signature":         "v0=" + hex.EncodeToString(m.Sum(nil)),
	}
}
