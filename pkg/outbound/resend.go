package outbound

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// ParseEventID splits a delivery's webhook-id (EventID: <runId>:<seq>:<index>) into the event's
// place in its run's log. A run id may hold colons itself, so the seq and index are the last two
// fields.
func ParseEventID(id string) (runID string, seq int64, index int, ok bool) {
	rest, idx, found := cutLast(id)
	if !found {
		return "", 0, 0, false
	}
	runID, sq, found := cutLast(rest)
	if !found || !runlog.ValidRun(runID) {
		return "", 0, 0, false
	}
	seq, err := strconv.ParseInt(sq, 10, 64)
	if err != nil || seq < 1 {
		return "", 0, 0, false
	}
	index, err = strconv.Atoi(idx)
	if err != nil || index < 0 {
		return "", 0, 0, false
	}
	return runID, seq, index, true
}

func cutLast(s string) (before, after string, found bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// Resend sends the event eventID of s's tenant to s's receiver again, now and once, if s was
// sent it (an attempt of s for it is kept, AttemptRetention), as a delivery would now: the
// same webhook-id and event, its approval links made as on every attempt
// (a signed link only while it would still be valid, its request less than LinkTTL ago and its
// deadline ahead; the plain link otherwise), signed at this attempt's time. It is the operator's
// repair for a receiver that lost a delivery or missed it for good (an approver's notification,
// an abandoned event): the attempt is recorded (Resent) and answered, and nothing else moves,
// neither the run's cursor nor its retries, so a failed resend is not retried and is not counted
// as a delivery failure. A receiver that dedupes by webhook-id drops what it has already
// processed, as Standard Webhooks asks of it. An error after the send (the attempt's record
// failed) means the receiver may have it: sending again is safe, for the same reason.
//
// An event s was not sent is not found, whatever the log holds: the subscriptions scope reads
// no run, so a resend must not show a receiver an event from before s existed, or of a type s
// does not take (another approver's vote, its feedback).
func (d *Deliverer) Resend(ctx context.Context, s Subscription, eventID, base string) (Attempt, error) {
	runID, seq, index, ok := ParseEventID(eventID)
	if !ok {
		return Attempt{}, interrupt.Invalid("eventId is not a delivery's id",
			interrupt.FieldError{Path: "/eventId", Message: "must be <runId>:<seq>:<index>, as a delivery's webhook-id and its attempts name it"})
	}
	sent, err := d.Store.Attempted(ctx, s.Tenant, s.ID, eventID)
	if err != nil {
		return Attempt{}, err
	}
	if !sent {
		return Attempt{}, interrupt.Errorf(interrupt.CodeNotFound,
			"subscription %s was not sent event %s: a resend repeats a delivery of the subscription's (GET /subscriptions/{id}/deliveries lists them, kept %d days)", s.ID, eventID, int(AttemptRetention.Hours()/24))
	}
	commits, err := d.Log.Read(ctx, runlog.Key{Tenant: s.Tenant, RunID: runID}, seq-1, 1)
	if err != nil {
		return Attempt{}, err
	}
	if len(commits) == 0 || commits[0].Seq != seq {
		return Attempt{}, interrupt.Errorf(interrupt.CodeNotFound, "no event %s", eventID)
	}
	envs := commits[0].Envelopes(runID)
	if index >= len(envs) {
		return Attempt{}, interrupt.Errorf(interrupt.CodeNotFound, "no event %s", eventID)
	}
	e := envs[index]
	if !s.Wants(e.Type) { // a run id reused since the attempt: another event is there now
		return Attempt{}, interrupt.Errorf(interrupt.CodeConflict, "subscription %s does not take %s events", s.ID, e.Type)
	}
	now := d.now()
	a := Attempt{EventID: eventID, EventType: e.Type, RunID: runID, Attempts: 1, At: now.UTC(), Resent: true, Status: StatusDelivered}
	links := d.Links
	links.BaseURL = base
	out, sendErr := d.send(ctx, s, commits[0], e, now, sendMode{links: links, resend: true})
	if errors.Is(sendErr, ErrStore) {
		return Attempt{}, sendErr // nothing was sent: the operator's resend answers unavailable
	}
	a.StatusCode, a.Unreached, a.Refused = out.status, out.unreached, out.refused
	if sendErr != nil {
		a.Status, a.LastError = StatusFailed, sendErr.Error()
	}
	if err := d.Store.RecordAttempt(ctx, s.Tenant, s.ID, a, now.Add(AttemptRetention)); err != nil {
		return Attempt{}, err
	}
	return a, nil
}
