package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Link is an approval-page link a delivery of an interrupt.requested carries: a plain link
// names the interrupt (whoever opens it signs in and decides as themselves); a signed one, only
// for a subscription WithSignedLinks, holds a token that decides as Principal.
type Link struct {
	Principal string `json:"principal,omitempty"`
	URL       string `json:"url"`
	// ExpiresAt is a signed link's expiry, or the interrupt's deadline; "" for neither.
	ExpiresAt string `json:"expiresAt,omitempty"`
	// For are the recipients the link is meant for: a signed link's principal, or those who
	// sign in through the plain link.
	For []Recipient `json:"for,omitempty"`
}

// Recipient is one ref a delivery notifies: Kind is "principal", "group" or "role", as the field
// naming it types it; an audience entry no eligibility field names is a "principal".
type Recipient struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
}

// Delivery is a verified delivery of a subscription: one event of a run.
type Delivery struct {
	// ID is the webhook-id, <runId>:<seq>:<index>: the same on every attempt.
	ID        string `json:"-"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      Event  `json:"data"`
	// Audience is whom an interrupt.requested notifies: an approval's audience, else the union of
	// its eligibility refs; a clarification's display.audience; a reminder's or an
	// escalation's recipients.
	Audience []Recipient `json:"audience,omitempty"`
	Links    []Link      `json:"links,omitempty"`
}

// Tolerance is how far a delivery's signed timestamp may be from now: a captured delivery
// cannot be replayed later than this.
const Tolerance = 5 * time.Minute

// ErrSignature refuses a delivery not signed with the subscription's secret, or signed too long
// ago.
var ErrSignature = errors.New("client: the delivery's signature is not valid")

// VerifyDelivery checks a delivery's Standard Webhooks signature (webhook-id, webhook-timestamp,
// webhook-signature; any of its v1 signatures, compared in constant time) with the
// subscription's whsec_ secret, then reads it.
func VerifyDelivery(secret string, header http.Header, body []byte, now time.Time) (Delivery, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return Delivery{}, errors.New("client: the secret is not whsec_<base64>")
	}
	id, ts := header.Get("webhook-id"), header.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil {
		return Delivery{}, ErrSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return Delivery{}, ErrSignature
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	ok := false
	for _, sig := range strings.Fields(header.Get("webhook-signature")) {
		version, value, _ := strings.Cut(sig, ",")
		got, err := base64.StdEncoding.DecodeString(value)
		if version == "v1" && err == nil && hmac.Equal(got, want) {
			ok = true
		}
	}
	if !ok {
		return Delivery{}, ErrSignature
	}
	var d Delivery
	if err := json.Unmarshal(body, &d); err != nil {
		return Delivery{}, errors.New("client: the delivery is not a JSON event")
	}
	d.ID = id
	return d, nil
}

// Receiver serves a subscription's deliveries (mount it at the subscription's URL): it verifies
// each, answers 204 (401 to a bad signature, so the host retries it), passes each delivery once
// to OnDelivery however often it was sent, and wakes the Awaits of its run.
type Receiver struct {
	secret string
	// OnDelivery, if set, receives each verified delivery once (concurrently, as deliveries
	// arrive: a run's deliveries come one after another, in seq order).
	OnDelivery func(Delivery)
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	seen     map[string]bool
	order    []string
	watchers map[string]map[chan struct{}]bool
}

// rememberDeliveries bounds how many delivery ids a Receiver keeps to dedupe.
const rememberDeliveries = 100_000

// NewReceiver receives deliveries signed with secret (the subscription's, shown when created).
func NewReceiver(secret string) *Receiver {
	return &Receiver{secret: secret, seen: map[string]bool{}, watchers: map[string]map[chan struct{}]bool{}}
}

// ServeHTTP implements http.Handler.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 8<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	d, err := VerifyDelivery(r.secret, req.Header, body, now())
	if err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	r.mu.Lock()
	fresh := !r.seen[d.ID]
	if fresh {
		r.seen[d.ID] = true
		r.order = append(r.order, d.ID)
		if len(r.order) > rememberDeliveries {
			delete(r.seen, r.order[0])
			r.order = r.order[1:]
		}
	}
	for ch := range r.watchers[d.Data.RunID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	r.mu.Unlock()
	if fresh && r.OnDelivery != nil {
		r.OnDelivery(d)
	}
	w.WriteHeader(http.StatusNoContent)
}

// watch returns a channel that receives when a delivery of runID arrives.
func (r *Receiver) watch(runID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watchers[runID] == nil {
		r.watchers[runID] = map[chan struct{}]bool{}
	}
	r.watchers[runID][ch] = true
	return ch, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.watchers[runID], ch)
		if len(r.watchers[runID]) == 0 {
			delete(r.watchers, runID)
		}
	}
}
