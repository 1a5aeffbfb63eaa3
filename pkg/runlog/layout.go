package runlog

import (
	"bytes"
	"encoding/json"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// A commit is stored with every value once (docs/deploying.md, "The run log's stored form"): the legacy
// kind-specific aliases of interrupt.requested and interrupt.resolved are derived when the log is
// read, and a vote that releases its approval leaves the resume value to the interrupt.resolved
// beside it. Envelopes puts back what the stored form leaves out, so readers see every event of
// the protocol; it also reads commits written before this form, which stored the aliases.

// Marshal encodes v as JSON without json.Marshal's HTML escaping, which would grow every "<",
// ">" and "&" of a caller's value six-fold and store it other than it was sent.
func Marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Envelopes lists the commit's events as clients see them: each stored event, a releasing vote
// with its value, and after each interrupt.requested and interrupt.resolved of a kind with a
// legacy family, its alias with the same payload.
func (c Commit) Envelopes(runID string) []Envelope {
	out := make([]Envelope, 0, len(c.Events)+2)
	at := c.At.UTC().Format(TimeFormat)
	add := func(typ string, e Event, payload json.RawMessage) {
		out = append(out, Envelope{
			Seq: c.Seq, Index: len(out), Type: typ, RunID: runID, NodeID: e.NodeID,
			InterruptID: e.InterruptID, At: at, Payload: payload,
		})
	}
	for _, e := range c.Events {
		if interrupt.IsLegacyType(e.Type) {
			continue // an older commit stored its alias; it is derived below, as for newer ones
		}
		payload := e.Payload
		if e.Type == interrupt.EventVoted {
			payload = c.voteWithValue(e)
		}
		add(e.Type, e, payload)
		if alias := aliasOf(e); alias != "" {
			add(alias, e, payload)
		}
	}
	return out
}

// aliasOf is the legacy type repeating e, if its kind has one.
func aliasOf(e Event) string {
	var suffix string
	switch e.Type {
	case interrupt.EventRequested:
		suffix = ".requested"
	case interrupt.EventResolved:
		suffix = ".resolved"
	default:
		return ""
	}
	var k struct {
		Kind interrupt.Kind `json:"kind"`
	}
	if json.Unmarshal(e.Payload, &k) != nil {
		return ""
	}
	if prefix := k.Kind.LegacyPrefix(); prefix != "" {
		return prefix + suffix
	}
	return ""
}

// voteWithValue is the payload of vote event e as clients read it: a releasing vote is stored
// without its value, which its commit's interrupt.resolved carries.
func (c Commit) voteWithValue(e Event) json.RawMessage {
	var v interrupt.Vote
	if json.Unmarshal(e.Payload, &v) != nil || len(v.ResumeValue) > 0 {
		return e.Payload
	}
	for _, r := range c.Events {
		if r.Type != interrupt.EventResolved || r.InterruptID != e.InterruptID {
			continue
		}
		var res interrupt.Resolved
		if json.Unmarshal(r.Payload, &res) != nil {
			return e.Payload
		}
		v.ResumeValue = res.ResumeValue
		if full, err := Marshal(v); err == nil {
			return full
		}
	}
	return e.Payload
}

// Value is the resume value the commit recorded (of its resolve, vote or ask), if any: an
// idempotent answer is stored without it and takes it from here on replay.
func (c Commit) Value() json.RawMessage {
	for _, e := range c.Events {
		switch e.Type {
		case interrupt.EventResolved, interrupt.EventVoted, interrupt.EventAsked:
			var v struct {
				ResumeValue json.RawMessage `json:"resumeValue"`
			}
			if json.Unmarshal(e.Payload, &v) == nil && len(v.ResumeValue) > 0 {
				return v.ResumeValue
			}
		}
	}
	return nil
}
