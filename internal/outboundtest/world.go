// Package outboundtest is the outbound side of a host for tests: a deliverer, subscriptions and
// verifying receivers over a store. pkg/outbound's tests and the stores' tests in pkg/inmem and
// pkg/dynamo (ConcurrentDeliverers, beside pkg/outbound/storetest's suite) drive deliveries
// through it, and helpers in a _test.go file cannot be imported by another package: so it is
// written once, here.
package outboundtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/keyring"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// fixedKeyring is a keyring secret's value that never changes.
type fixedKeyring string

func (f fixedKeyring) Fetch(context.Context) ([]byte, error) { return []byte(f), nil }

// World is a host's outbound side over a store of subscriptions, cursors and attempts, with an
// in-memory run log and secret store, and receivers on 127.0.0.1.
type World struct {
	t       *testing.T
	Clock   *testclock.Clock
	Log     *inmem.Store
	Store   outbound.Store
	secrets *inmem.Secrets
	Keys    token.Keys
	Subs    *outbound.Subscriptions
	D       *outbound.Deliverer
	// Metrics holds the deliverer's EMF lines.
	Metrics *bytes.Buffer
}

// NewWorld is a world over store, its clock at the present: the subscriptions and the deliverer
// write to store, and receivers may be on private addresses.
func NewWorld(t *testing.T, store outbound.Store) *World {
	t.Helper()
	c := testclock.New(time.Now().UTC().Truncate(time.Millisecond))
	keys, err := keyring.New(context.Background(), fixedKeyring(`{"active":"k1","keys":{"k1":"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}}`), keyring.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	w := &World{t: t, Clock: c, Log: inmem.New(), Store: store, secrets: inmem.NewSecrets(), Keys: keys, Metrics: &bytes.Buffer{}}
	w.Subs = &outbound.Subscriptions{Store: w.Store, Secrets: w.secrets, Targets: outbound.Targets{AllowPrivate: true}, Channels: []string{slack.Format}, Now: c.Now}
	w.D = &outbound.Deliverer{
		Store: w.Store, Log: w.Log, Secrets: w.secrets, Client: outbound.NewHTTPClient(true),
		Links: outbound.Links{Keys: keys, BaseURL: "https://host.example"}, Now: c.Now,
		Metrics: metrics.New(w.Metrics, "test"), Contacts: w.Log,
		Channels: []outbound.Channel{&slack.Channel{Contacts: w.Log, Apps: w.Log, Keys: keys}},
	}
	return w
}

// Counted is the total of the deliverer's metric name with dims.
func (w *World) Counted(name metrics.Name, dims ...metrics.Dim) float64 {
	w.t.Helper()
	ps, err := metrics.Read(bytes.NewReader(w.Metrics.Bytes()))
	if err != nil {
		w.t.Fatal(err)
	}
	return metrics.Total(ps, name, dims...)
}

// Receiver is a subscriber's endpoint: it verifies every delivery with the Standard Webhooks
// reference library and keeps the verified ones; Fail decides, per delivery, to answer 500.
type Receiver struct {
	t      *testing.T
	URL    string
	Secret string
	mu     sync.Mutex
	Got    []Delivery
	tries  map[string]int
	Fail   func(id string, try int) bool
	Ignore bool // skip the timestamp check (the test's clock ran ahead of the real one)
}

// Delivery is one delivery a receiver verified: its webhook-id, the message and its bytes.
type Delivery struct {
	ID  string
	Msg outbound.Message
	Raw []byte
}

// Receiver is a new subscriber's endpoint, closed when the test ends.
func (w *World) Receiver() *Receiver {
	r := &Receiver{t: w.t, tries: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	w.t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) serve(rw http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	wh, err := standardwebhooks.NewWebhook(r.Secret)
	if err != nil {
		r.t.Errorf("secret %q: %v", r.Secret, err)
		return
	}
	if r.Ignore {
		err = wh.VerifyIgnoringTimestamp(body, req.Header)
	} else {
		err = wh.Verify(body, req.Header)
	}
	if err != nil {
		r.t.Errorf("delivery %s does not verify: %v", req.Header.Get("webhook-id"), err)
		rw.WriteHeader(http.StatusUnauthorized)
		return
	}
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	r.tries[id]++
	try := r.tries[id]
	r.mu.Unlock()
	if r.Fail != nil && r.Fail(id, try) {
		rw.WriteHeader(http.StatusInternalServerError)
		return
	}
	var m outbound.Message
	if err := json.Unmarshal(body, &m); err != nil {
		r.t.Errorf("delivery %s: %v", id, err)
	}
	r.mu.Lock()
	r.Got = append(r.Got, Delivery{ID: id, Msg: m, Raw: body})
	r.mu.Unlock()
	rw.WriteHeader(http.StatusNoContent)
}

// IDs are the delivered webhook-ids in arrival order, each once (a receiver dedupes on them).
func (r *Receiver) IDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, d := range r.Got {
		if !seen[d.ID] {
			seen[d.ID] = true
			out = append(out, d.ID)
		}
	}
	return out
}

// Deliveries are the deliveries the receiver verified so far, in arrival order, copied under the
// lock its handler appends them under, for a test whose deliverers posted from several goroutines
// at once.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.Got)
}

// Subscribe makes a subscription of tenant to events, delivered to r, and gives r its secret.
func (w *World) Subscribe(tenant string, r *Receiver, events ...string) outbound.Subscription {
	w.t.Helper()
	created, err := w.Subs.Create(context.Background(), interrupt.Principal{Subject: "ops", Tenant: tenant}, outbound.Request{URL: r.URL, Events: events})
	if err != nil {
		w.t.Fatal(err)
	}
	r.Secret = created.Secret
	return created.Subscription
}

// Approval is an approval's payload whose title a re-encoding would change (<, > and &).
const Approval = `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay <inv-1> & more","actions":["accept","reject"],"approversList":["alice","bob"]}}`

// Commit appends a commit of events to the run's log and returns it as the stream carries it.
func (w *World) Commit(tenant, run string, events ...runlog.Event) runlog.StreamRecord {
	w.t.Helper()
	return w.CommitAs("", tenant, run, events...)
}

// CommitAs is Commit made by principal by (runlog.Commit.By).
func (w *World) CommitAs(by, tenant, run string, events ...runlog.Event) runlog.StreamRecord {
	w.t.Helper()
	k := runlog.Key{Tenant: tenant, RunID: run}
	prev, err := w.Log.Read(context.Background(), k, 0, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	c := runlog.Commit{Seq: int64(len(prev) + 1), ID: fmt.Sprint("c", len(prev)+1), At: w.Clock.Now(), Events: events, By: by}
	if err := w.Log.Append(context.Background(), k, c); err != nil {
		w.t.Fatal(err)
	}
	return runlog.StreamRecord{Key: k, Commit: c}
}

// Requested is the interrupt.requested event of interrupt id at node, of payload.
func Requested(node, id, payload string) runlog.Event {
	return runlog.Event{Type: interrupt.EventRequested, NodeID: node, InterruptID: id, Payload: json.RawMessage(payload)}
}

// Resolved is the interrupt.resolved event of interrupt id at node, accepted.
func Resolved(node, id string) runlog.Event {
	return runlog.Event{Type: interrupt.EventResolved, NodeID: node, InterruptID: id,
		Payload: json.RawMessage(`{"nodeId":"` + node + `","interruptId":"` + id + `","kind":"approval","resumeValue":{"action":"accept"}}`)}
}

// Deliver delivers a batch of commits as the stream brings them; an error fails the test.
func (w *World) Deliver(batch ...runlog.StreamRecord) outbound.Report {
	w.t.Helper()
	r, errs := w.D.Commits(context.Background(), batch)
	for i, err := range errs {
		if err != nil {
			w.t.Fatalf("commit %d: %v", i, err)
		}
	}
	return r
}

// Retries runs the retrier once, as its schedule does; an error fails the test.
func (w *World) Retries() outbound.Report {
	w.t.Helper()
	r, err := w.D.Retries(context.Background(), 100)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}
