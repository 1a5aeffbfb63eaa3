package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/infra/local/faults"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
)

// setFaults sets the faults the stack injects between its functions and its stores
// (infra/local/faults, served at /local-faults), and clears them when the test ends.
func setFaults(t testing.TB, c faults.Config) {
	t.Helper()
	body, _ := json.Marshal(c)
	if a := (call{method: "PUT", path: "/local-faults", body: string(body)}).must(t); a.Status != 200 {
		t.Fatalf("set faults: %d %s", a.Status, a.Body)
	}
	t.Cleanup(func() { call{method: "DELETE", path: "/local-faults"}.must(t) })
}

// faultCounts are the faults the stack injected so far.
func faultCounts(t testing.TB) faults.Counts {
	t.Helper()
	var state struct{ Counts faults.Counts }
	call{method: "GET", path: "/local-faults"}.must(t).json(t, &state)
	return state.Counts
}

// attempt is one answer a request of the workload got.
type attempt struct {
	status int
	code   string
	body   []byte
	// marker is what the attempt's body carried that the log would show if it was written.
	marker string
}

// op is one request of the workload with every answer it got, retried on 5xx and network
// errors as a client would.
type op struct {
	kind, run, who, idemKey string
	attempts                []attempt
}

func (o *op) final() attempt { return o.attempts[len(o.attempts)-1] }

// chaos is one randomised workload through the gateway and its recorded history.
type chaos struct {
	t                 *testing.T
	tenant            string
	eng, mailer, boss string
	endpoint, secret  string
	retried           atomic.Int64

	mu   sync.Mutex
	ops  []*op
	runs []string
}

func newChaos(t *testing.T) *chaos {
	t.Helper()
	c := &chaos{t: t, tenant: newRun("chaos")}
	tok := func(sub string, scopes ...string) string {
		return jwt(t, devjwt.Token{Subject: sub, Tenant: c.tenant, Scopes: scopes})
	}
	c.eng = tok("engine", "interrupts:write", "runs:read")
	c.mailer = tok("mailer", "tokens:delegate")
	c.boss = tok("ops", "webhooks:manage", "subscriptions:manage", "runs:read")
	c.secret = "whsec_chaos_" + strings.ToLower(rand.Text())
	a := do(t, "POST", "/webhook-endpoints", c.boss, `{"provider":"stripe","secrets":["`+c.secret+`"]}`)
	var e struct{ ID string }
	a.json(t, &e)
	if a.Status != 201 {
		t.Fatalf("endpoint: %d %s", a.Status, a.Body)
	}
	c.endpoint = e.ID
	return c
}

// send sends the request mk builds for each attempt until it gets an answer that is not a 5xx
// or a network error (at most 60 attempts, backing off up to 400 ms), recording every answer.
func (c *chaos) send(o *op, mk func(n int) (call, string)) *op {
	for n := 0; n < 60; n++ {
		r, marker := mk(n)
		if o.idemKey != "" {
			r.idempotencyKeys = []string{o.idemKey}
		}
		a, err := r.send()
		at := attempt{status: a.Status, body: a.Body, marker: marker}
		if err != nil {
			at.status, at.code = 0, err.Error()
		} else {
			var p struct{ Code string }
			_ = json.Unmarshal(a.Body, &p)
			at.code = p.Code
		}
		o.attempts = append(o.attempts, at)
		if at.status != 0 && at.status < 500 {
			break
		}
		c.retried.Add(1)
		<-time.After(min(time.Duration(25<<min(n, 4))*time.Millisecond, 400*time.Millisecond))
	}
	c.mu.Lock()
	c.ops = append(c.ops, o)
	c.mu.Unlock()
	return o
}

func (c *chaos) newRun(prefix string) string {
	run := newRun(prefix)
	c.mu.Lock()
	c.runs = append(c.runs, run)
	c.mu.Unlock()
	return run
}

func marker() string { return "m-" + strings.ToLower(rand.Text()[:16]) }

// request asks for an interrupt with a re-entry key, as an engine recovering would: the same
// request, sent three times at once.
func (c *chaos) request(run, node, payload string) {
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			c.send(&op{kind: "request", run: run}, func(int) (call, string) {
				return call{method: "POST", path: "/runs/" + run + "/interrupts", bearer: c.eng, body: `{"nodeId":"` + node + `","payload":` + payload + `}`}, ""
			})
		})
	}
	wg.Wait()
}

// vote decides node as who: on the run surface with who's JWT, or with a token the mailer mints
// for who (viaToken); with an Idempotency-Key every attempt is the same request, without one
// each attempt carries a marker of its own.
func (c *chaos) vote(run, node, who, action string, withKey, viaToken bool) {
	o := &op{kind: "vote", run: run, who: who}
	if withKey {
		o.idemKey = "k-" + strings.ToLower(rand.Text()[:12])
	}
	fixed := marker()
	bearer := jwt(c.t, devjwt.Token{Subject: who, Tenant: c.tenant, Scopes: []string{"approvals:respond"}})
	path := "/runs/" + run + "/interrupts/" + node
	if viaToken {
		m := c.send(&op{kind: "mint", run: run, who: who}, func(int) (call, string) {
			return call{method: "POST", path: path + "/tokens", bearer: c.mailer, body: `{"intent":"resolve","principal":"` + who + `"}`}, ""
		})
		if m.final().status != 201 {
			return // the interrupt was decided or ended meanwhile
		}
		var tv struct{ Token string }
		_ = json.Unmarshal(m.final().body, &tv)
		path, bearer = "/interrupts/"+tv.Token, ""
	}
	c.send(o, func(int) (call, string) {
		mk := fixed
		if !withKey {
			mk = marker()
		}
		return call{method: "POST", path: path, bearer: bearer, body: `{"resumeValue":{"action":"` + action + `","feedback":"` + mk + `","decidedAt":"2026-12-01T09:00:00Z"}}`}, mk
	})
}

// webhook posts Stripe's payment_intent.succeeded for correlation, signed with stripe-go.
func (c *chaos) webhook(run, correlation string) {
	event := `{"id":"evt_` + strings.ToLower(rand.Text()[:16]) + `","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","metadata":{"correlation":"` + correlation + `"}}}}`
	c.send(&op{kind: "webhook", run: run}, func(int) (call, string) {
		signed := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: []byte(event), Secret: c.secret})
		return call{method: "POST", path: "/webhooks/" + c.endpoint, body: event, headers: map[string]string{"Stripe-Signature": signed.Header}}, ""
	})
}

// scenario runs one randomly chosen story of a run.
func (c *chaos) scenario(r *mrand.Rand) {
	approval := func(extra string) string {
		return `{"kind":"approval","key":"gate","timeoutMs":120000,"data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept","reject"]` + extra + `}}`
	}
	var wg sync.WaitGroup
	switch r.IntN(4) {
	case 0: // a quorum of two, four voters at once on both surfaces
		run := c.newRun("chaos-quorum")
		c.request(run, "gate", approval(`,"requiredApprovals":2`))
		for i, who := range []string{"v1", "v2", "v3", "v4"} {
			withKey, viaToken := r.IntN(2) == 0, i >= 2
			wg.Go(func() { c.vote(run, "gate", who, "accept", withKey, viaToken) })
		}
	case 1: // a cancel racing two votes
		run := c.newRun("chaos-cancel")
		c.request(run, "gate", approval(``))
		wg.Go(func() { c.vote(run, "gate", "v1", "accept", true, false) })
		wg.Go(func() { c.vote(run, "gate", "v2", "reject", false, true) })
		wg.Go(func() {
			c.send(&op{kind: "cancel", run: run}, func(int) (call, string) {
				return call{method: "POST", path: "/runs/" + run + "/cancel", bearer: c.eng, body: `{"reason":"chaos"}`}, ""
			})
		})
	case 2: // a payment's webhook before, at or after its waiter
		run := c.newRun("chaos-pay")
		corr := "order-" + run
		payload := `{"kind":"external-event","key":"pay","data":{"eventType":"payment_intent.succeeded","correlation":"` + corr + `"}}`
		if r.IntN(2) == 0 {
			c.webhook(run, corr)
		}
		wg.Go(func() { c.request(run, "pay", payload) })
		wg.Go(func() { c.webhook(run, corr) })
	case 3: // a deadline nobody meets, for the sweep
		run := c.newRun("chaos-deadline")
		c.request(run, "gate", `{"kind":"approval","key":"late","timeoutMs":1500,"data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"]}}`)
	}
	wg.Wait()
}

// workload runs n scenarios, four at a time.
func (c *chaos) workload(n int, seed uint64) {
	var wg sync.WaitGroup
	work := make(chan uint64)
	for range 4 {
		wg.Go(func() {
			for s := range work {
				c.scenario(mrand.New(mrand.NewPCG(seed, s)))
			}
		})
	}
	for i := range n {
		work <- uint64(i)
	}
	close(work)
	wg.Wait()
}

// killFunctions SIGKILLs a random function process of the stack every period until stop is
// closed, and answers how many it killed. It kills only processes it has seen for settle: a
// process dies idle or in the middle of an event, as a sandbox can, but one starting is given
// its init. Killing processes in their init too kept a function down for as long as the suite
// ran on a loaded machine (each new instance killed before it could answer), which tests the
// kill rate, not the host.
func killFunctions(t *testing.T, period time.Duration, stop <-chan struct{}) <-chan int {
	const settle = 500 * time.Millisecond
	done := make(chan int, 1)
	go func() {
		killed := 0
		seen := map[int]time.Time{}
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- killed
				return
			case now := <-tick.C:
				var settled []int
				alive := map[int]time.Time{}
				for _, pid := range functionProcesses(t, "", 0) {
					first, ok := seen[pid]
					if !ok {
						first = now
					}
					alive[pid] = first
					if now.Sub(first) >= settle {
						settled = append(settled, pid)
					}
				}
				seen = alive
				if len(settled) > 0 && syscall.Kill(settled[mrand.IntN(len(settled))], syscall.SIGKILL) == nil {
					killed++
				}
			}
		}
	}()
	return done
}

// scenarios is how many stories each phase of TestChaos runs, four at a time.
const scenarios = 16

// TestChaos runs a randomised concurrent workload (re-entry keys sent three times at once, votes
// with and without Idempotency-Key on both surfaces, cancels racing votes, Stripe webhooks before
// and after their waiters, deadlines for the sweep, deliveries to a receiver that fails first
// attempts) twice: with the stack's DynamoDB answering 25% of requests throttled, 25% applied
// with the answer lost and 10% applied and reset; then with a function process past its init
// killed every 40 ms. It then checks the history against the logs (docs/design.md, "Faults").
func TestChaos(t *testing.T) {
	localaws.NeedsStack(t)
	c := newChaos(t)
	cl := newClient(t, devjwt.Token{Subject: "ops", Tenant: c.tenant, Scopes: []string{"subscriptions:manage", "runs:read"}})
	rcv := subscribe(t, cl, "*")
	rcv.fail = func(id string, attempt int) bool {
		return attempt == 1 && strings.HasSuffix(id, ":0") && len(id)%3 == 0
	}
	seed := chaosSeed(t)

	before, start := faultCounts(t), time.Now()
	setFaults(t, faults.Config{"dynamodb": {{Throttle: 0.25, Lost: 0.25, Reset: 0.10}}})
	c.workload(scenarios, seed)
	t.Logf("store faults: %d scenarios in %s", scenarios, time.Since(start).Round(time.Millisecond))
	call{method: "DELETE", path: "/local-faults"}.must(t)
	after := faultCounts(t)
	injected := map[string]int{}
	for _, k := range []string{"throttle", "lost", "reset"} {
		injected[k] = after["dynamodb "+k] - before["dynamodb "+k]
	}

	start = time.Now()
	stop := make(chan struct{})
	kills := killFunctions(t, 40*time.Millisecond, stop)
	for round := uint64(1); round == 1 || time.Since(start) < 10*time.Second; round++ {
		c.workload(scenarios, seed+round)
	}
	close(stop)
	killed := <-kills
	calm := time.Now()
	t.Logf("killed processes: scenarios for %s", calm.Sub(start).Round(time.Millisecond))

	start = time.Now()
	c.check(rcv, cl, calm)
	t.Logf("checked in %s", time.Since(start).Round(time.Millisecond))
	t.Logf("faults injected: %v; function processes killed: %d; answers retried: %d; runs %d, requests %d",
		injected, killed, c.retried.Load(), len(c.runs), len(c.ops))
	if injected["throttle"] == 0 || injected["lost"] == 0 || injected["reset"] == 0 || killed == 0 {
		t.Errorf("the faults did not happen: %v, %d kills", injected, killed)
	}
}

// chaosEvent is an event as list-events returns it.
type chaosEvent struct {
	Seq         int64
	Index       int
	Type        string
	InterruptID string
	Payload     json.RawMessage
}

// eventsOf reads a run's whole log, page by page, retrying 5xx.
func (c *chaos) eventsOf(run string) []chaosEvent {
	var all []chaosEvent
	after := int64(0)
	for {
		o := c.send(&op{kind: "read", run: run}, func(int) (call, string) {
			return call{method: "GET", path: fmt.Sprintf("/runs/%s/events?after=%d", run, after), bearer: c.eng}, ""
		})
		var page struct {
			Events []chaosEvent
			Next   int64
		}
		if o.final().status != 200 || json.Unmarshal(o.final().body, &page) != nil {
			c.t.Fatalf("events of %s: %d %s", run, o.final().status, o.final().body)
		}
		all = append(all, page.Events...)
		if page.Next == after {
			return all
		}
		after = page.Next
	}
}

// chaosSeed is the seed of TestChaos's workload: CHAOS_SEED's (`make test CHAOS_SEED=...`
// replays a failed run's scenarios), else the time's. It is logged, so a failure names it.
func chaosSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("CHAOS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEED=%q is not a seed: %v", v, err)
		}
		seed = n
	}
	t.Logf("seed %d (replay: make test CHAOS_SEED=%d)", seed, seed)
	return seed
}

// schedulePeriod is the period of the stack's scheduled functions (STACK_SCHEDULE_PERIOD; a
// second, as make test sets it, when unset).
func schedulePeriod(t *testing.T) time.Duration {
	v := os.Getenv("STACK_SCHEDULE_PERIOD")
	if v == "" {
		return time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("STACK_SCHEDULE_PERIOD=%q: %v", v, err)
	}
	return d
}

// sweepRetries is how many periods of the sweep's schedule a passed deadline may take to be
// recorded once faults and kills stop: a sweep killed or failed is retried by the next one,
// whose process may start cold.
const sweepRetries = 15

// check holds the history to the logs: one interrupt.requested per key; every passed deadline
// expired within sweepRetries periods of the sweep after calm (when faults and kills stopped);
// at most one interrupt.resolved per interrupt, and exactly one releasing vote; every
// acknowledged vote in the log once, no refused vote in it, and no vote answered 503 unavailable
// ("nothing written") in it either; replays of one Idempotency-Key byte-equal; every answer's
// seq a commit that holds its marker; every event delivered at least once, first in seq order
// per run.
func (c *chaos) check(rcv *subscriber, cl *client.Client, calm time.Time) {
	t := c.t
	logs := map[string][]chaosEvent{}
	expires := calm.Add(sweepRetries * schedulePeriod(t))
	var latest time.Duration
	for _, run := range c.runs {
		logs[run] = c.eventsOf(run)
		if !strings.HasPrefix(run, "chaos-deadline") {
			continue
		}
		// A passed deadline is recorded by the sweep, which runs on its schedule: wait for it.
		for !slices.ContainsFunc(logs[run], func(e chaosEvent) bool { return e.Type == "interrupt.expired" }) && time.Now().Before(expires) {
			<-time.After(100 * time.Millisecond)
			logs[run] = c.eventsOf(run)
		}
		latest = max(latest, time.Since(calm))
	}
	t.Logf("every passed deadline was recorded by %s after faults and kills stopped (bound %s)", latest.Round(time.Millisecond), expires.Sub(calm))
	inLog := func(run, marker string) []int64 {
		var seqs []int64
		for _, e := range logs[run] {
			if (e.Type == "interrupt.voted" || e.Type == "interrupt.asked") && strings.Contains(string(e.Payload), `"`+marker+`"`) {
				seqs = append(seqs, e.Seq)
			}
		}
		return seqs
	}
	for run, events := range logs {
		requested, resolved, expired := map[string]int{}, map[string]int{}, map[string]int{}
		for _, e := range events {
			switch e.Type {
			case "interrupt.requested":
				var p struct{ Key string }
				_ = json.Unmarshal(e.Payload, &p)
				requested[p.Key]++
			case "interrupt.resolved":
				resolved[e.InterruptID]++
			case "interrupt.expired":
				expired[e.InterruptID]++
			}
		}
		for key, n := range requested {
			if n != 1 {
				t.Errorf("%s: key %s requested %d times", run, key, n)
			}
		}
		for id, n := range resolved {
			if n != 1 || expired[id] > 0 {
				t.Errorf("%s: interrupt %s resolved %d times, expired %d times", run, id, n, expired[id])
			}
		}
		if strings.HasPrefix(run, "chaos-deadline") && len(expired) != 1 {
			t.Errorf("%s: the deadline passed, expired %v %s after faults and kills stopped", run, expired, expires.Sub(calm))
		}
		if strings.HasPrefix(run, "chaos-pay") && len(resolved) != 1 {
			t.Errorf("%s: the payment's waiter was resolved %d times", run, len(resolved))
		}
	}
	replays := map[string][]byte{}
	for _, o := range c.ops {
		switch o.kind {
		case "vote":
			for i, a := range o.attempts {
				seqs := inLog(o.run, a.marker)
				switch {
				case a.status == 200 || a.status == 202:
					var res struct{ Seq int64 }
					_ = json.Unmarshal(a.body, &res)
					if len(seqs) != 1 || seqs[0] != res.Seq {
						t.Errorf("%s: %s's vote answered %d at seq %d is in the log at %v", o.run, o.who, a.status, res.Seq, seqs)
					}
				case a.status >= 400 && a.status < 500 && len(seqs) > 0:
					t.Errorf("%s: %s's vote refused %d (%s) is in the log at %v", o.run, o.who, a.status, a.code, seqs)
				case a.code == "unavailable" && len(seqs) > 0 && (o.idemKey == "" || !laterAcknowledged(o, i)):
					t.Errorf("%s: %s's vote answered 503 unavailable (nothing written) is in the log at %v", o.run, o.who, seqs)
				}
			}
			if o.idemKey != "" {
				for _, a := range o.attempts {
					if a.status != 200 && a.status != 202 {
						continue
					}
					if first, ok := replays[o.idemKey]; ok && string(first) != string(a.body) {
						t.Errorf("%s: replays of %s differ: %s, then %s", o.run, o.idemKey, first, a.body)
					}
					replays[o.idemKey] = a.body
				}
			}
		case "request":
			if f := o.final(); f.status != 200 && f.status != 201 {
				t.Errorf("%s: a request ended %d %s", o.run, f.status, f.body)
			}
		}
	}
	c.checkRequests(logs)
	for _, o := range c.ops {
		for _, a := range o.attempts {
			if a.code == "internal" {
				t.Errorf("%s %s answered 500 internal from the function: %s", o.kind, o.run, a.body)
			}
		}
	}
	c.checkDeliveries(rcv, cl, logs)
}

// checkRequests: of the requests of a run's one re-entry key (three at once, each retried), at
// most one answered 201; when none did, the attempt that wrote the interrupt got an answer that
// does not say "nothing written" (a lost connection, a crash, outcome_unknown).
func (c *chaos) checkRequests(logs map[string][]chaosEvent) {
	created, unknown := map[string]int{}, map[string]bool{}
	for _, o := range c.ops {
		if o.kind != "request" {
			continue
		}
		for _, a := range o.attempts {
			switch {
			case a.status == 201:
				created[o.run]++
			case a.status == 0, a.status == 500, a.status == 502, a.status == 504, a.code == "outcome_unknown":
				unknown[o.run] = true
			}
		}
	}
	for run, events := range logs {
		written := slices.ContainsFunc(events, func(e chaosEvent) bool { return e.Type == "interrupt.requested" })
		switch {
		case created[run] > 1:
			c.t.Errorf("%s: %d requests of one key answered 201", run, created[run])
		case written && created[run] == 0 && !unknown[run]:
			var answers []string
			for _, o := range c.ops {
				if o.kind == "request" && o.run == run {
					for _, a := range o.attempts {
						answers = append(answers, fmt.Sprintf("%d %s", a.status, a.code))
					}
				}
			}
			c.t.Errorf("%s: the interrupt was written, and no request of it says so (answers %v): a 503 unavailable had a write behind it", run, answers)
		}
	}
}

// laterAcknowledged reports whether an attempt after attempt i of o was acknowledged: with an
// Idempotency-Key, all attempts carry one marker, and the write may be a later one's.
func laterAcknowledged(o *op, i int) bool {
	return slices.ContainsFunc(o.attempts[i+1:], func(a attempt) bool { return a.status == 200 || a.status == 202 })
}

// checkDeliveries waits (up to 90 s) until every event of the runs was delivered, then checks
// that each run's events arrived first in seq order.
func (c *chaos) checkDeliveries(rcv *subscriber, cl *client.Client, logs map[string][]chaosEvent) {
	t := c.t
	deadline := time.Now().Add(90 * time.Second)
	var got []client.Delivery
	for {
		rcv.mu.Lock()
		got = append(got[:0], rcv.got...)
		rcv.mu.Unlock()
		if covers(got, logs) || time.Now().After(deadline) {
			break
		}
		select {
		case <-rcv.arrived:
		case <-time.After(time.Second):
		}
	}
	seen := map[string]bool{}
	last := map[string][2]int64{}
	for _, d := range got {
		if _, ok := logs[d.Data.RunID]; !ok || seen[d.ID] {
			continue
		}
		seen[d.ID] = true
		pos := [2]int64{d.Data.Seq, int64(d.Data.Index)}
		if prev, ok := last[d.Data.RunID]; ok && (pos[0] < prev[0] || pos[0] == prev[0] && pos[1] < prev[1]) {
			t.Errorf("%s: %s delivered after %v", d.Data.RunID, d.ID, prev)
		}
		last[d.Data.RunID] = pos
	}
	var attempts []client.Attempt
	for run, events := range logs {
		for _, e := range events {
			if id := fmt.Sprintf("%s:%d:%d", run, e.Seq, e.Index); !seen[id] {
				if attempts == nil {
					attempts, _ = cl.Deliveries(context.Background(), rcv.sub.ID)
				}
				var tried []client.Attempt
				for _, a := range attempts {
					if a.EventID == id {
						tried = append(tried, a)
					}
				}
				t.Errorf("event %s (%s) was never delivered; attempts %+v", id, e.Type, tried)
			}
		}
	}
}

// covers reports whether got holds a delivery of every event of logs.
func covers(got []client.Delivery, logs map[string][]chaosEvent) bool {
	seen := map[string]bool{}
	for _, d := range got {
		seen[d.ID] = true
	}
	for run, events := range logs {
		for _, e := range events {
			if !seen[fmt.Sprintf("%s:%d:%d", run, e.Seq, e.Index)] {
				return false
			}
		}
	}
	return true
}

// TestSecretsManagerDown: with the stack's Secrets Manager unavailable, a provider's event whose
// endpoint's secrets are not cached, and a function started then (mint-token, cold), answer 503
// for what needs the secrets, never 401 or 500; once Secrets Manager answers again the same
// process mints, without a new start, and the provider's redelivery is taken.
func TestSecretsManagerDown(t *testing.T) {
	localaws.NeedsStack(t)
	run := newRun("secrets")
	tenant, eng := hookTenant(t, "secrets")
	const secret = "whsec_down_0123456789abcdefgh"
	endpoint := createEndpoint(t, tenant, `{"provider":"stripe","secrets":["`+secret+`"]}`)
	if a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"pay","payload":`+example(t, "external-event")+`}`); a.Status != 201 {
		t.Fatalf("request: %d %s", a.Status, a.Body)
	}
	event := `{"id":"evt_` + run + `","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","metadata":{"correlation":"order-` + run + `"}}}}`
	deliver := func() answer {
		signed := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: []byte(event), Secret: secret})
		return call{method: "POST", path: "/webhooks/" + endpoint, body: event, headers: map[string]string{"Stripe-Signature": signed.Header}}.must(t)
	}
	setFaults(t, faults.Config{"secretsmanager": {{Unavailable: 1}}})
	if a := deliver(); a.Status != http.StatusServiceUnavailable || !strings.Contains(string(a.Body), `"code":"unavailable"`) {
		t.Errorf("a provider's event whose secrets cannot be read: %d %s", a.Status, a.Body)
	}
	for _, pid := range functionProcesses(t, "mint-token", 0) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		gone(t, pid)
	}
	mint := call{method: "POST", path: "/runs/" + run + "/interrupts/pay/tokens", bearer: eng, body: `{"intent":"resolve"}`}
	a := mint.must(t)
	if a.Status != http.StatusServiceUnavailable || !strings.Contains(string(a.Body), `"code":"unavailable"`) || a.Header.Get("Retry-After") == "" {
		t.Fatalf("mint while Secrets Manager is down: %d %s", a.Status, a.Body)
	}
	pids := functionProcesses(t, "mint-token", 0)
	call{method: "DELETE", path: "/local-faults"}.must(t)
	deadline := time.Now().Add(10 * time.Second)
	for a = mint.must(t); a.Status != 201 && time.Now().Before(deadline); a = mint.must(t) {
		<-time.After(100 * time.Millisecond)
	}
	if a.Status != 201 {
		t.Fatalf("mint once Secrets Manager is back: %d %s", a.Status, a.Body)
	}
	if now := functionProcesses(t, "mint-token", 0); !slices.Equal(now, pids) {
		t.Errorf("mint-token recovered by a new start: processes %v, then %v", pids, now)
	}
	if a := deliver(); a.Status != 200 {
		t.Errorf("the provider's redelivery once Secrets Manager is back: %d %s", a.Status, a.Body)
	}
}
