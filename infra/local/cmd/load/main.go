// Command load drives the wait-and-resolve cycle against a running local stack (`make run`) and
// reports throughput, latency per step, races and the CPU each process group of the stack spent
// per cycle, read from /proc:
//
//	go run ./infra/local/cmd/load -clients 8 -duration 30s            (make load)
//	go run ./infra/local/cmd/load -surface token -race
//	go run ./infra/local/cmd/load -surface webhook
//	go run ./infra/local/cmd/load -surface mcp
//
// One cycle: request an approval (request-interrupt), resolve it (resolve-by-run, or with
// -surface token resolve-by-token with the link alice mints for herself, mint-token; with -race
// two resolvers at once, of which exactly one must win), and read the run's snapshot (get-run). With -surface
// webhook the request is an external event (a payment) and the resolver a Stripe webhook, signed
// with stripe-go, to an endpoint the tool creates (webhook-ingest). With -surface mcp an agent
// requests the approval and reads its outcome over the MCP endpoint (one stateless JSON-RPC
// tools/call each: request_approval, then get_outcome with no wait), alice resolving by run
// between them (mcp, resolve-by-run).
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/metrics"
)

func main() {
	url := flag.String("url", envOr("GATEWAY_URL", "http://127.0.0.1:3000"), "the stack's API (-baseline starts its stacks on 127.0.0.1:3000)")
	var cfg config
	flag.IntVar(&cfg.clients, "clients", 8, "concurrent clients, each running cycles one after another")
	flag.DurationVar(&cfg.duration, "duration", 30*time.Second, "how long to run after the warm-up")
	flag.DurationVar(&cfg.warmup, "warmup", 3*time.Second, "cycles run first and not counted (instances start)")
	flag.StringVar(&cfg.surface, "surface", "run", "resolve by run (resolve-by-run), by token (resolve-by-token), a payment by a provider's webhook (webhook-ingest), or an agent's approval over MCP (mcp)")
	flag.BoolVar(&cfg.race, "race", false, "two concurrent resolvers per cycle; exactly one may win")
	baseline := flag.String("baseline", "", "a git revision: start its stack and this tree's, one after the other, and print both side by side")
	rounds := flag.Int("rounds", 1, "with -baseline, how often to run the pair")
	long := flag.String("long-run", "", "commit counts (20,4000,20000): grow one run to each and time fresh steps there, instead of the cycle")
	samples := flag.Int("samples", 50, "with -long-run, the steps timed at each mark")
	flag.Parse()
	// One P, as the stack's own process: the clients mostly wait, and whatever this tool spends
	// is taken from the stack it measures (it reports its own share).
	runtime.GOMAXPROCS(1)
	if !slices.Contains([]string{"run", "token", "webhook", "mcp"}, cfg.surface) || cfg.race && (cfg.surface == "webhook" || cfg.surface == "mcp") {
		fmt.Fprintln(os.Stderr, "load: -surface is run, token, webhook or mcp (-race: run or token)")
		os.Exit(2)
	}
	if *long != "" {
		marks, err := parseMarks(*long)
		if err == nil {
			var l *load
			if l, err = newLoad(".", *url, "run", false); err == nil {
				err = longRun(l, marks, *samples, os.Stdout)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		return
	}
	if *baseline != "" {
		if err := compare(cfg, *baseline, *rounds); err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		return
	}
	res, err := measure(".", *url, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	res.report(os.Stdout)
	if !res.ok() {
		os.Exit(1)
	}
}

// config is what one measurement runs.
type config struct {
	clients          int
	warmup, duration time.Duration
	surface          string
	race             bool
}

// result is one measurement: the cycles' figures and the CPU each process group spent.
type result struct {
	cfg   config
	stats *stats
	took  time.Duration
	cpu   groups
	// self is this tool's own CPU over the run: the machine's share the stack did not get.
	self time.Duration
	// lag is how long after its commit each run's read models caught up, as read-models
	// published it (metrics.ReadModelLag) over the run; none from a stack without it.
	lag []time.Duration
}

func (r result) ok() bool { return r.stats.errors == 0 && r.stats.badRaces == 0 }

func (r result) cyclesPerSecond() float64 { return float64(r.stats.cycles) / r.took.Seconds() }

// measure runs the cycle against the stack at url, signing as the stack of the work tree at
// root does: a warm-up, then the measured run between two readings of /proc.
func measure(root, url string, cfg config) (result, error) {
	l, err := newLoad(root, url, cfg.surface, cfg.race)
	if err != nil {
		return result{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.warmup)
	l.run(ctx, cfg.clients, nil)
	cancel()
	before, err := sample()
	if err != nil {
		return result{}, fmt.Errorf("read /proc: %w", err)
	}
	self := ownCPU()
	functionLog := filepath.Join(root, ".local", "logs", "functions.log")
	logFrom := fileSize(functionLog)
	res := result{cfg: cfg, stats: &stats{steps: map[string][]time.Duration{}}}
	ctx, cancel = context.WithTimeout(context.Background(), cfg.duration)
	began := time.Now()
	l.run(ctx, cfg.clients, res.stats)
	res.took = time.Since(began)
	res.self = ownCPU() - self
	cancel()
	after, err := sample()
	if err != nil {
		return result{}, fmt.Errorf("read /proc: %w", err)
	}
	res.cpu = after.minus(before)
	// read-models follows the stream: the commits of the run's last moments reach the log
	// after it, so their lags are read once the log has stopped growing.
	settle(functionLog)
	if res.lag, err = lagsSince(functionLog, logFrom); err != nil {
		return result{}, fmt.Errorf("read the functions' log: %w", err)
	}
	return res, nil
}

// settle waits until the file at path has not grown for half a second, 10 s at most.
func settle(path string) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	size, still := fileSize(path), 0
	for deadline := time.Now().Add(10 * time.Second); still < 2 && time.Now().Before(deadline); <-tick.C {
		now := fileSize(path)
		if now == size {
			still++
		} else {
			size, still = now, 0
		}
	}
}

// fileSize is the size of the file at path, 0 if there is none.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// lagsSince reads the read-model lags the functions' log at path holds past offset.
func lagsSince(path string, offset int64) ([]time.Duration, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	points, err := metrics.Read(f)
	if err != nil {
		return nil, err
	}
	var lags []time.Duration
	for _, p := range points {
		if p.Name == metrics.ReadModelLag {
			lags = append(lags, time.Duration(p.Value*float64(time.Second)))
		}
	}
	return lags, nil
}

func envOr(k, v string) string {
	if s := os.Getenv(k); s != "" {
		return s
	}
	return v
}

// load is the cycle's fixed parts: who calls, and how.
type load struct {
	base, surface      string
	race               bool
	engine, alice, bob string
	client             *http.Client
	payload            json.RawMessage
	tenant             string
	// endpoint and secret are the Stripe endpoint of -surface webhook.
	endpoint, secret string
}

func newLoad(root, base, surface string, race bool) (*load, error) {
	tmpl, err := samtemplate.Find(root)
	if err != nil {
		return nil, err
	}
	key, err := devjwt.LoadKey(filepath.Dir(tmpl))
	if err != nil {
		return nil, err
	}
	tenant := "load-" + strings.ToLower(rand.Text()[:8])
	sign := func(sub string, scopes ...string) (string, error) {
		return devjwt.Sign(key, devjwt.Token{Issuer: devjwt.IssuerAt(base), Subject: sub, Tenant: tenant, Scopes: scopes, TTL: 24 * time.Hour}.Claims(time.Now()))
	}
	l := &load{base: base, surface: surface, race: race, tenant: tenant,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	if l.engine, err = sign("engine", "interrupts:write", "runs:read"); err != nil {
		return nil, err
	}
	if l.alice, err = sign("alice", "approvals:respond"); err != nil {
		return nil, err
	}
	if l.bob, err = sign("bob", "approvals:respond"); err != nil {
		return nil, err
	}
	l.payload = json.RawMessage(`{"kind":"approval","key":"pay","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay invoice inv-1","actions":["accept","reject"],"requiredApprovals":1,"rejectionPolicy":"single-veto"}}`)
	if surface == "webhook" {
		admin, err := sign("ops", "webhooks:manage")
		if err != nil {
			return nil, err
		}
		l.secret = "whsec_" + rand.Text()
		status, body := l.call(context.Background(), nil, "setup", "POST", "/webhook-endpoints", admin, `{"provider":"stripe","secrets":["`+l.secret+`"]}`)
		var created struct{ ID string }
		if status != 201 || json.Unmarshal(body, &created) != nil {
			return nil, fmt.Errorf("create the webhook endpoint: %d %.200s", status, body)
		}
		l.endpoint = created.ID
	}
	return l, nil
}

// stats gathers one run's figures; nil during the warm-up.
type stats struct {
	mu       sync.Mutex
	cycles   int
	errors   int
	firstErr string
	races    int
	badRaces int
	steps    map[string][]time.Duration
}

func (s *stats) step(name string, d time.Duration) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps[name] = append(s.steps[name], d)
}

func (s *stats) fail(format string, args ...any) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors++
	if s.firstErr == "" {
		s.firstErr = fmt.Sprintf(format, args...)
	}
}

func (l *load) run(ctx context.Context, clients int, st *stats) {
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				if l.cycle(ctx, fmt.Sprintf("c%d-%d-%s", c, n, strings.ToLower(rand.Text()[:6])), st) && st != nil {
					st.mu.Lock()
					st.cycles++
					st.mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
}

// call sends one request and times it.
func (l *load) call(ctx context.Context, st *stats, step, method, path, bearer, body string, headers ...string) (int, []byte) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), method, l.base+path, rd)
	if err != nil {
		st.fail("%s: %v", step, err)
		return 0, nil
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	begin := time.Now()
	resp, err := l.client.Do(req)
	if err != nil {
		st.fail("%s: %v", step, err)
		return 0, nil
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	st.step(step, time.Since(begin))
	return resp.StatusCode, b
}

// cycle runs one wait-and-resolve cycle; it reports whether every step answered as it must.
func (l *load) cycle(ctx context.Context, run string, st *stats) bool {
	switch l.surface {
	case "webhook":
		return l.payment(ctx, run, st)
	case "mcp":
		return l.agent(ctx, run, st)
	}
	status, body := l.call(ctx, st, "request", "POST", "/runs/"+run+"/interrupts", l.engine, `{"nodeId":"approve","payload":`+string(l.payload)+`}`)
	if status != 201 {
		st.fail("request: %d %.200s", status, body)
		return false
	}
	var link struct{ Token string }
	if l.surface == "token" {
		// The requester holds no token that decides its approval: alice mints her own link.
		status, body := l.call(ctx, st, "mint", "POST", "/runs/"+run+"/interrupts/approve/tokens", l.alice, `{"intent":"resolve"}`)
		if status != 201 || json.Unmarshal(body, &link) != nil {
			st.fail("mint: %d %.200s", status, body)
			return false
		}
	}
	value := `{"resumeValue":{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}}`
	resolve := func(bearer string) int {
		if l.surface == "token" {
			s, _ := l.call(ctx, st, "resolve", "POST", "/interrupts/"+link.Token, "", value)
			return s
		}
		s, _ := l.call(ctx, st, "resolve", "POST", "/runs/"+run+"/interrupts/approve", bearer, value)
		return s
	}
	if l.race {
		var a, b int
		var wg sync.WaitGroup
		wg.Go(func() { a = resolve(l.alice) })
		wg.Go(func() { b = resolve(l.bob) })
		wg.Wait()
		codes := []int{a, b}
		slices.Sort(codes)
		if st != nil {
			st.mu.Lock()
			st.races++
			if codes[0] != 200 || codes[1] != 409 {
				st.badRaces++
			}
			st.mu.Unlock()
		}
	} else if s := resolve(l.alice); s != 200 {
		st.fail("resolve: %d", s)
		return false
	}
	return l.snapshot(ctx, run, st)
}

// payment is the cycle of -surface webhook: the run waits for a payment, Stripe's signed
// payment_intent.succeeded event resolves it, the engine reads the snapshot.
func (l *load) payment(ctx context.Context, run string, st *stats) bool {
	status, body := l.call(ctx, st, "request", "POST", "/runs/"+run+"/interrupts", l.engine,
		`{"nodeId":"pay","endpoint":"`+l.endpoint+`","payload":{"kind":"external-event","key":"pay","data":{"eventType":"payment_intent.succeeded","correlation":"`+run+`"}}}`)
	if status != 201 {
		st.fail("request: %d %.200s", status, body)
		return false
	}
	event := []byte(`{"id":"evt_` + run + `","type":"payment_intent.succeeded","data":{"object":{"id":"pi_` + run + `","metadata":{"correlation":"` + run + `"}}}}`)
	signed := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: event, Secret: l.secret, Timestamp: time.Now()})
	status, body = l.call(ctx, st, "resolve", "POST", "/webhooks/"+l.endpoint, "", string(event), "Stripe-Signature", signed.Header)
	if status != 200 || !bytes.Contains(body, []byte(`"outcome":"resolved"`)) {
		st.fail("webhook: %d %.200s", status, body)
		return false
	}
	return l.snapshot(ctx, run, st)
}

// agent is the cycle of -surface mcp: request_approval and get_outcome over the MCP endpoint,
// alice's resolve by run between them.
func (l *load) agent(ctx context.Context, run string, st *stats) bool {
	type answer struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				InterruptID string `json:"interruptId"`
				Created     bool   `json:"created"`
				Status      string `json:"status"`
				DecidedBy   string `json:"decidedBy"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	var requested, outcome answer
	status, body := l.tool(ctx, st, "request", "request_approval", `{"title":"Pay invoice inv-1","approvers":["alice"],"runId":"`+run+`","key":"approve"}`)
	if status != 200 || json.Unmarshal(body, &requested) != nil || requested.Result.IsError || !requested.Result.StructuredContent.Created {
		st.fail("request_approval: %d %.200s", status, body)
		return false
	}
	if s, body := l.call(ctx, st, "resolve", "POST", "/runs/"+run+"/interrupts/approve", l.alice, `{"resumeValue":{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}}`); s != 200 {
		st.fail("resolve: %d %.200s", s, body)
		return false
	}
	status, body = l.tool(ctx, st, "outcome", "get_outcome", `{"runId":"`+run+`","interruptId":"`+requested.Result.StructuredContent.InterruptID+`"}`)
	if status != 200 || json.Unmarshal(body, &outcome) != nil || outcome.Result.StructuredContent.Status != "resolved" || outcome.Result.StructuredContent.DecidedBy != "alice" {
		st.fail("get_outcome: %d %.200s", status, body)
		return false
	}
	return true
}

// tool calls an MCP tool as the engine: one JSON-RPC message, stateless, at protocol 2025-11-25.
func (l *load) tool(ctx context.Context, st *stats, step, name, args string) (int, []byte) {
	return l.call(ctx, st, step, "POST", "/mcp", l.engine, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`,
		"MCP-Protocol-Version", "2025-11-25", "Accept", "application/json, text/event-stream")
}

// snapshot reads the run after its interrupt was resolved: running again.
func (l *load) snapshot(ctx context.Context, run string, st *stats) bool {
	status, body := l.call(ctx, st, "snapshot", "GET", "/runs/"+run, l.engine, "")
	if status != 200 || !bytes.Contains(body, []byte(`"status":"running"`)) {
		st.fail("snapshot: %d %.200s", status, body)
		return false
	}
	return true
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// invocations is how many times the cycle invoked each function the load drives.
func (r result) invocations() map[string]int {
	n := map[string]int{"request-interrupt": len(r.stats.steps["request"]), "get-run": len(r.stats.steps["snapshot"])}
	if r.cfg.surface == "mcp" {
		n = map[string]int{"mcp": len(r.stats.steps["request"]) + len(r.stats.steps["outcome"])}
	}
	resolver := map[string]string{"run": "resolve-by-run", "token": "resolve-by-token", "webhook": "webhook-ingest", "mcp": "resolve-by-run"}[r.cfg.surface]
	n[resolver] = len(r.stats.steps["resolve"])
	if mints := len(r.stats.steps["mint"]); mints > 0 {
		n["mint-token"] = mints
	}
	return n
}

// perInvocation is a function's CPU per invocation in ms, or 0 if the cycle does not invoke it.
func (r result) perInvocation(group string) float64 {
	n := r.invocations()[strings.TrimPrefix(group, "function ")]
	if n == 0 {
		return 0
	}
	return float64(r.cpu[group].Microseconds()) / 1000 / float64(n)
}

func (r result) report(w io.Writer) {
	s := r.stats
	fmt.Fprintf(w, "clients %d, %s, surface %s, race %v\n", r.cfg.clients, r.took.Round(time.Millisecond), r.cfg.surface, r.cfg.race)
	fmt.Fprintf(w, "cycles %d, %.1f cycles/s, errors %d", s.cycles, r.cyclesPerSecond(), s.errors)
	if s.firstErr != "" {
		fmt.Fprintf(w, " (first: %s)", s.firstErr)
	}
	fmt.Fprintln(w)
	if r.cfg.race {
		fmt.Fprintf(w, "races %d, exactly one winner in %d\n", s.races, s.races-s.badRaces)
	}
	for _, step := range []string{"request", "mint", "resolve", "snapshot", "outcome"} {
		d := s.steps[step]
		if len(d) == 0 && (step == "mint" || step == "snapshot" || step == "outcome") {
			continue
		}
		fmt.Fprintf(w, "  %-9s n=%-6d p50 %-9s p99 %s\n", step, len(d), ms(percentile(d, .5)), ms(percentile(d, .99)))
	}
	if len(r.lag) > 0 {
		fmt.Fprintf(w, "read-model lag, commit to index (runs per stream batch): n=%d p50 %s p99 %s\n", len(r.lag), ms(percentile(r.lag, .5)), ms(percentile(r.lag, .99)))
	}
	fmt.Fprintln(w, "CPU (user+system) per cycle, by process group:")
	var total time.Duration
	for _, name := range slices.Sorted(maps.Keys(r.cpu)) {
		total += r.cpu[name]
		line := fmt.Sprintf("  %-28s %8.3f ms/cycle", name, perCycle(r.cpu[name], s.cycles))
		if per := r.perInvocation(name); per > 0 {
			line += fmt.Sprintf("   %.3f ms per invocation", per)
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "  %-28s %8.3f ms/cycle\n", "all", perCycle(total, s.cycles))
	fmt.Fprintf(w, "  %-28s %8.3f ms/cycle\n", "(this load tool, not in all)", perCycle(r.self, s.cycles))
}

func perCycle(d time.Duration, cycles int) float64 {
	if cycles == 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1000 / float64(cycles)
}
