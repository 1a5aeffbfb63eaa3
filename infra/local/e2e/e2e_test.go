// Package e2e tests the stack that `make run` starts, over HTTP: the local gateway, the
// functions' real mains under the Lambda Runtime Interface Emulator, DynamoDB and Secrets
// Manager APIs. `make test` runs it inside `stack exec`, which sets GATEWAY_URL.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"crypto/rand"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
	"github.com/interrupthost/interrupthost/schemas"
)

func gatewayURL() string {
	if u := os.Getenv("GATEWAY_URL"); u != "" {
		return u
	}
	return "http://127.0.0.1:3000"
}

func root(t testing.TB) string {
	t.Helper()
	p, err := samtemplate.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(p)
}

// functionsDir is where the stack under test built the functions' binaries.
func functionsDir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("STACK_FUNCTIONS"); dir != "" {
		return dir
	}
	return filepath.Join(root(t), ".local", "functions")
}

// jwt mints a JWT the local issuer of the gateway under test would issue.
func jwt(t testing.TB, tok devjwt.Token) string {
	t.Helper()
	if tok.Issuer == "" {
		tok.Issuer = devjwt.IssuerAt(gatewayURL())
	}
	key, err := devjwt.LoadKey(root(t))
	if err != nil {
		t.Fatal(err)
	}
	if tok.TTL == 0 {
		tok.TTL = time.Hour
	}
	s, err := devjwt.Sign(key, tok.Claims(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	engine   = devjwt.Token{Subject: "engine", Tenant: "acme", Scopes: []string{"interrupts:write", "runs:read"}}
	approver = devjwt.Token{Subject: "alice", Tenant: "acme", Scopes: []string{"approvals:respond", "runs:read"}}
	everyone = devjwt.Token{Subject: "root", Tenant: "acme", Scopes: []string{"interrupts:write", "approvals:respond", "runs:read", "runs:configure", "webhooks:manage", "subscriptions:manage", "contacts:manage", "tokens:delegate", "receipts:redeem", "integrations:manage", "policies:manage"}}
	// delegate is trusted tooling, a team's mailer: it mints tokens that decide as a named person.
	delegate = devjwt.Token{Subject: "mailer", Tenant: "acme", Scopes: []string{"tokens:delegate"}}
)

type answer struct {
	Status int
	Header http.Header
	Body   []byte
}

func (a answer) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(a.Body, v); err != nil {
		t.Fatalf("%d %s: %v", a.Status, a.Body, err)
	}
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// noRedirects answers a redirect as it is, to see where it leads.
var noRedirects = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// call is one HTTP request of the suite. base "" is the stack's gateway; bearer is sent as
// "Bearer <bearer>", authorization verbatim when bearer is empty; each idempotencyKeys entry is
// one Idempotency-Key header; headers are set as they are; asIs answers a redirect as it is,
// rather than following it.
type call struct {
	base, method, path, body string
	bearer, authorization    string
	idempotencyKeys          []string
	headers                  map[string]string
	asIs                     bool
}

// send is the suite's one HTTP client.
func (r call) send() (answer, error) {
	if r.base == "" {
		r.base = gatewayURL()
	}
	var rd io.Reader
	if r.body != "" {
		rd = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, r.base+r.path, rd)
	if err != nil {
		return answer{}, err
	}
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.bearer != "" {
		r.authorization = "Bearer " + r.bearer
	}
	if r.authorization != "" {
		req.Header.Set("Authorization", r.authorization)
	}
	for _, k := range r.idempotencyKeys {
		req.Header.Add("Idempotency-Key", k)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	cl := httpClient
	if r.asIs {
		cl = noRedirects
	}
	resp, err := cl.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s (is the stack running? `make run`): %w", r.method, r.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}, err
}

// must sends r, failing t if it cannot; the suite talks to the stack, so -short skips it.
func (r call) must(t testing.TB) answer {
	t.Helper()
	localaws.NeedsStack(t)
	a, err := r.send()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// do sends the common request: a method and path of the stack's gateway, with a bearer token.
func do(t testing.TB, method, path, bearer, body string) answer {
	t.Helper()
	return call{method: method, path: path, bearer: bearer, body: body}.must(t)
}

func example(t testing.TB, kind string) string {
	t.Helper()
	raw, err := fs.ReadFile(schemas.Examples, "examples/"+kind+".json")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func newRun(prefix string) string { return prefix + "-" + strings.ToLower(rand.Text()[:12]) }

// TestApprovalJourney: request an approval, read the run, resolve it, read the events, replay the
// key; all over HTTP through the gateway, with the engine's client package.
func TestApprovalJourney(t *testing.T) {
	ctx := context.Background()
	run := newRun("journey")
	eng, alice := newClient(t, engine), newClient(t, approver)
	payload := example(t, "approval")

	created, err := eng.Request(ctx, run, "approve", json.RawMessage(payload), nil)
	if err != nil || created.Status != "pending" || created.Seq != 1 {
		t.Fatalf("request: %+v %v", created, err)
	}
	snap, err := eng.Snapshot(ctx, run)
	if err != nil || snap.Status != "waiting-approval" || snap.CurrentNodeID != "approve" {
		t.Errorf("snapshot: %+v %v", snap, err)
	}
	resolved, err := alice.Resolve(ctx, run, "approve", map[string]any{"action": "accept", "decidedAt": "2026-11-30T09:00:00Z"})
	if err != nil || resolved.Status != "resolved" || !strings.Contains(string(resolved.ResumeValue), `"decidedBy":"alice"`) || resolved.Seq != 2 {
		t.Fatalf("resolve: %+v %v", resolved, err)
	}
	page, err := eng.Events(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range page.Events {
		types = append(types, e.Type)
	}
	if strings.Join(types, " ") != "interrupt.requested approval.requested interrupt.voted interrupt.resolved approval.resolved" || page.Next != 2 {
		t.Errorf("events: %+v", page)
	}
	if string(page.Events[0].Payload) != payload {
		t.Errorf("interrupt.requested payload %s, want %s", page.Events[0].Payload, payload)
	}

	replay, err := eng.Request(ctx, run, "approve", json.RawMessage(payload), nil)
	if err != nil || replay.Status != "resolved" || replay.InterruptID != created.InterruptID || !strings.Contains(string(replay.ResumeValue), `"action":"accept"`) {
		t.Errorf("replay: %+v %v", replay, err)
	}
	if page, err := eng.Events(ctx, run, 2); err != nil || len(page.Events) != 0 {
		t.Errorf("the replay appended events: %+v %v", page, err)
	}
}

// TestConcurrentResolveThroughThePool: 64 HTTP resolves at once, through the gateway's pool of
// emulator instances: one 200, the rest 409 interrupt_already_resolved. Each caller sends an
// Idempotency-Key and sends again on the gateway's own 5xx (an integration that failed: an
// emulator instance lost, as a Lambda sandbox can be), as a client should; the host's own
// answers are never retried, so a 500 of the host's (`"code":"internal"`) fails the test.
func TestConcurrentResolveThroughThePool(t *testing.T) {
	eng := jwt(t, engine)
	const callers, rounds = 64, 5
	tokens := make([]string, callers)
	for i := range tokens {
		tokens[i] = jwt(t, devjwt.Token{Subject: fmt.Sprintf("approver-%d", i), Tenant: "acme", Scopes: []string{"approvals:respond"}})
	}
	for round := range rounds {
		run := newRun("race")
		if a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"gate","payload":`+example(t, "approval")+`}`); a.Status != 201 {
			t.Fatalf("request: %d %s", a.Status, a.Body)
		}
		statuses := make([]int, callers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				<-start
				resolve := call{method: "POST", path: "/runs/" + run + "/interrupts/gate", bearer: tokens[i], idempotencyKeys: []string{rand.Text()},
					body: `{"resumeValue":{"action":"reject","decidedAt":"2026-11-30T09:00:00Z"}}`}
				for attempt := 1; ; attempt++ {
					a, err := resolve.send()
					if err != nil {
						t.Error(err)
						return
					}
					if a.Status >= 500 && bytes.HasPrefix(a.Body, []byte(`{"message":`)) && attempt < 3 {
						t.Logf("round %d, caller %d: the gateway answered %d %s (request %s); sent again", round, i, a.Status, a.Body, a.Header.Get("Apigw-Requestid"))
						continue
					}
					statuses[i] = a.Status
					if a.Status != 200 && !bytes.Contains(a.Body, []byte(`"code":"interrupt_already_resolved"`)) {
						t.Errorf("round %d, caller %d: %d %s (request %s)", round, i, a.Status, a.Body, a.Header.Get("Apigw-Requestid"))
					}
					return
				}
			})
		}
		close(start)
		wg.Wait()
		count := map[int]int{}
		for _, s := range statuses {
			count[s]++
		}
		if count[200] != 1 || count[409] != callers-1 {
			t.Fatalf("round %d: statuses %v, want one 200 and %d 409", round, count, callers-1)
		}
		a := do(t, "GET", "/runs/"+run+"/events", eng, "")
		if n := bytes.Count(a.Body, []byte(`"type":"interrupt.resolved"`)); n != 1 {
			t.Fatalf("round %d: %d interrupt.resolved events", round, n)
		}
	}
}
