package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/mcptest"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/mcp"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// agent is the caller the test server authenticates every request as, by its X-Test-Sub and
// X-Test-Scopes headers (the API's gateway and pkg/apigw do so from the JWT).
type agent struct {
	sub    string
	scopes []string
}

var (
	engine = agent{"agent-7", []string{"interrupts:write", "runs:read"}}
	reader = agent{"dashboard", []string{"runs:read"}}
	// person signed in through the agents' client: it asks as itself.
	person = agent{"mallory", []string{"agents:ask"}}
)

const base = "https://approvals.example.com"

// serve starts the endpoint over an in-memory host on 127.0.0.1.
func serve(t *testing.T, configure ...func(*hosttest.Setup)) (*host.Host, func() int, string) {
	t.Helper()
	h, l := hosttest.MemHost(t, configure...)
	s := mcp.New(hosttest.Tokens(h), mcp.Options{Version: "test", Poll: 5 * time.Millisecond})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := interrupt.Principal{Subject: r.Header.Get("X-Test-Sub"), Tenant: "acme", Scopes: strings.Fields(r.Header.Get("X-Test-Scopes")), Via: interrupt.ViaJWT}
		s.ServeMCP(w, r, p, base)
	}))
	t.Cleanup(srv.Close)
	return h, l.Writes, srv.URL
}

// as is a transport that says who calls.
type as struct{ agent }

func (a as) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Sub", a.sub)
	r.Header.Set("X-Test-Scopes", strings.Join(a.scopes, " "))
	return http.DefaultTransport.RoundTrip(r)
}

// connect is the official SDK's client, connected as who.
func connect(t *testing.T, url string, who agent) *sdk.ClientSession {
	t.Helper()
	return mcptest.Connect(t, url, as{who}, "")
}

var call = mcptest.Call

func TestTheToolsAreListed(t *testing.T) {
	t.Parallel()
	_, _, url := serve(t)
	cs := connect(t, url, engine)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s lacks a schema or a description", tool.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"ask_question", "end_run", "get_outcome", "list_pending", "request_approval"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	var inTable []string
	for _, a := range mcp.Access {
		inTable = append(inTable, a.Tool)
	}
	if slices.Sort(inTable); !slices.Equal(names, inTable) {
		t.Errorf("tools %v, the table of who may call them %v", names, inTable)
	}
}

// TestTheCapabilitiesAreWhatIsServed: the server declares what it answers, none with
// listChanged (a stateless endpoint has no stream to send it on): tools, logging, and prompts
// and resources (there are none: empty lists); completion, undeclared, is method not found.
func TestTheCapabilitiesAreWhatIsServed(t *testing.T) {
	t.Parallel()
	_, _, url := serve(t)
	cs := connect(t, url, engine)
	caps := cs.InitializeResult().Capabilities
	//lint:ignore SA1019 logging is served for the protocol versions before 2026-07-28
	logging := caps.Logging
	if caps.Tools == nil || caps.Tools.ListChanged || caps.Prompts == nil || caps.Prompts.ListChanged || caps.Resources == nil || caps.Resources.ListChanged ||
		caps.Resources.Subscribe || caps.Completions != nil || logging == nil {
		t.Errorf("capabilities %+v (tools %+v, prompts %+v, resources %+v)", caps, caps.Tools, caps.Prompts, caps.Resources)
	}
	ctx := context.Background()
	if p, err := cs.ListPrompts(ctx, nil); err != nil || len(p.Prompts) != 0 {
		t.Errorf("prompts/list: %+v %v", p, err)
	}
	if r, err := cs.ListResources(ctx, nil); err != nil || len(r.Resources) != 0 {
		t.Errorf("resources/list: %+v %v", r, err)
	}
	if _, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "x"}, Argument: sdk.CompleteParamsArgument{Name: "a"}}); err == nil || !strings.Contains(err.Error(), "method not found") {
		t.Errorf("completion/complete: %v", err)
	}
}

// TestAnApprovalAskedOnceAndDecided: request_approval asks once per run and key (a retry writes
// nothing and answers the same interrupt), get_outcome waits its bounded time on a pending one,
// wakes when the approvers decide during its wait, and answers the decision and every vote.
func TestAnApprovalAskedOnceAndDecided(t *testing.T) {
	t.Parallel()
	h, writes, url := serve(t)
	cs := connect(t, url, engine)
	args := map[string]any{"title": "Refund order 1182 (420 EUR)", "approvers": []string{"alice", "bob"}, "requiredApprovals": 2, "runId": "agent-run-1", "key": "refund-1182"}
	var first, again mcp.Requested
	if msg := call(t, cs, "request_approval", args, &first); msg != "" {
		t.Fatal(msg)
	}
	if !first.Created || first.Status != "pending" || first.NodeID != "refund-1182" || first.URL != base+"/approve/agent-run-1/"+first.InterruptID {
		t.Errorf("requested %+v", first)
	}
	before := writes()
	if msg := call(t, cs, "request_approval", args, &again); msg != "" || again.Created || again.InterruptID != first.InterruptID || writes() != before {
		t.Errorf("asked again: %+v %q, %d writes", again, msg, writes()-before)
	}

	var out mcp.Outcome
	outcome := map[string]any{"runId": "agent-run-1", "interruptId": first.InterruptID, "waitMs": 30}
	if msg := call(t, cs, "get_outcome", outcome, &out); msg != "" || out.Status != "pending" || out.Kind != "approval" {
		t.Errorf("pending: %+v %q", out, msg)
	}

	ctx := context.Background()
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), "agent-run-1", "refund-1182", json.RawMessage(`{"action":"accept","decidedAt":"2026-12-02T09:00:00Z","feedback":"within policy"}`), nil); err != nil {
		t.Fatal(err)
	}
	decided := make(chan error, 1)
	go func() {
		_, err := h.Resolve(ctx, hosttest.Who("bob"), "agent-run-1", "refund-1182", json.RawMessage(`{"action":"accept","decidedAt":"2026-12-02T09:01:00Z","feedback":"ok"}`), nil)
		decided <- err
	}()
	outcome["waitMs"] = 25_000
	if msg := call(t, cs, "get_outcome", outcome, &out); msg != "" {
		t.Fatal(msg)
	}
	if err := <-decided; err != nil {
		t.Fatal(err)
	}
	want := []host.Vote{{Principal: "alice", Action: "accept", Feedback: "within policy"}, {Principal: "bob", Action: "accept", Feedback: "ok"}}
	if out.Status != "resolved" || out.Action != "accept" || out.DecidedBy != "bob" || !slices.Equal(out.Votes, want) || out.ResumeValue == nil {
		t.Errorf("decided: %+v", out)
	}
}

// TestAnApprovedCall: request_approval binds the exact call; an accepted outcome answers the
// call as approved (with an approver's edits) and a receipt that redeems for that call alone; a
// rejected one answers neither.
func TestAnApprovedCall(t *testing.T) {
	t.Parallel()
	h, _, url := serve(t)
	cs := connect(t, url, engine)
	ctx := context.Background()
	refund := map[string]any{"name": "issue_refund", "arguments": map[string]any{"order": "4471", "amountCents": 124000, "currency": "EUR"}}
	ask := func(key string) mcp.Requested {
		var r mcp.Requested
		args := map[string]any{"title": "Refund order 4471", "approvers": []string{"alice"}, "actions": []string{"accept", "edit-accept", "reject"}, "toolCall": refund, "runId": "agent-run-2", "key": key}
		if msg := call(t, cs, "request_approval", args, &r); msg != "" {
			t.Fatal(msg)
		}
		return r
	}
	outcome := func(r mcp.Requested) mcp.Outcome {
		var out mcp.Outcome
		if msg := call(t, cs, "get_outcome", map[string]any{"runId": r.RunID, "interruptId": r.InterruptID}, &out); msg != "" {
			t.Fatal(msg)
		}
		return out
	}
	edited := ask("refund-4471")
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), edited.RunID, edited.NodeID, json.RawMessage(`{"action":"edit-accept","decidedAt":"2026-12-02T09:00:00Z","editedArtifactData":{"order":"4471","amountCents":100000,"currency":"EUR"}}`), nil); err != nil {
		t.Fatal(err)
	}
	out := outcome(edited)
	if out.ApprovedCall == nil || out.ApprovedCall.Name != "issue_refund" || fmt.Sprint(out.ApprovedCall.Arguments["amountCents"]) != "100000" || out.Receipt == "" || out.ReceiptExpiresAt == "" {
		t.Fatalf("edited, then accepted: %+v", out)
	}
	tokens := hosttest.Tokens(h)
	executor := interrupt.Principal{Subject: "executor", Tenant: "acme"}
	asked := interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{"order":"4471","amountCents":124000,"currency":"EUR"}`)}
	if _, err := tokens.RedeemReceipt(ctx, executor, out.Receipt, asked); interrupt.ErrorCode(err) != interrupt.CodeCallDiffers {
		t.Errorf("the call as asked, not as approved: %v", err)
	}
	approved, _ := json.Marshal(out.ApprovedCall.Arguments)
	if _, err := tokens.RedeemReceipt(ctx, executor, out.Receipt, interrupt.ToolCall{Name: "issue_refund", Arguments: approved}); err != nil {
		t.Errorf("the approved call: %v", err)
	}
	if again := outcome(edited); again.Redeemed == nil || again.Redeemed.By != "executor" {
		t.Errorf("redeemed: %+v", again.Redeemed)
	}

	rejected := ask("refund-4472")
	if _, err := h.Resolve(ctx, hosttest.Who("alice"), rejected.RunID, rejected.NodeID, json.RawMessage(`{"action":"reject","decidedAt":"2026-12-02T09:00:00Z"}`), nil); err != nil {
		t.Fatal(err)
	}
	if out := outcome(rejected); out.Action != "reject" || out.ApprovedCall != nil || out.Receipt != "" {
		t.Errorf("rejected: %+v", out)
	}
	var refused mcp.Requested
	bad := map[string]any{"title": "x", "approvers": []string{"alice"}, "toolCall": map[string]any{"name": "issue refund", "arguments": map[string]any{}}}
	if msg := call(t, cs, "request_approval", bad, &refused); !strings.Contains(msg, "/toolCall/name") {
		t.Errorf("a name no tool has: %q", msg)
	}
}

// TestAQuestionAnswered: ask_question asks the named audience; its outcome says what was
// answered and by whom.
func TestAQuestionAnswered(t *testing.T) {
	t.Parallel()
	h, _, url := serve(t)
	cs := connect(t, url, engine)
	var asked mcp.Requested
	args := map[string]any{"questions": []map[string]any{{"id": "po", "question": "Which purchase order?", "schema": map[string]any{"type": "string"}}}, "audience": []string{"carol"}}
	if msg := call(t, cs, "ask_question", args, &asked); msg != "" || !asked.Created || !strings.HasPrefix(asked.RunID, "mcp-") {
		t.Fatalf("%+v %q", asked, msg)
	}
	args["questions"] = append(args["questions"].([]map[string]any), map[string]any{"id": "units", "question": "How many units?"})
	if msg := call(t, cs, "ask_question", args, &asked); msg != "" {
		t.Fatal(msg)
	}
	if _, err := h.Resolve(context.Background(), hosttest.Who("carol"), asked.RunID, asked.NodeID, json.RawMessage(`{"answers":{"po":"PO-7","units":12},"decidedBy":"Procurement desk"}`), nil); err != nil {
		t.Fatal(err)
	}
	var out mcp.Outcome
	if msg := call(t, cs, "get_outcome", map[string]any{"runId": asked.RunID, "interruptId": asked.InterruptID}, &out); msg != "" {
		t.Fatal(msg)
	}
	if out.Status != "resolved" || out.Kind != "clarification" || out.Answers["po"] != "PO-7" || out.AnsweredBy != "carol" {
		t.Errorf("%+v", out)
	}
	// The text beside the structured content shows what the server wrote.
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "get_outcome", Arguments: map[string]any{"runId": asked.RunID, "interruptId": asked.InterruptID}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, `"answeredBy":"carol"`) || !strings.Contains(text, `"decidedBy":"Procurement desk"`) {
		t.Errorf("the decider's label is not kept beside who answered: %s", text)
	}
}

// TestRefusalsAreToolErrors: a bad call is a tool error in the problem's words, and writes
// nothing.
func TestRefusalsAreToolErrors(t *testing.T) {
	t.Parallel()
	_, writes, url := serve(t)
	cases := []struct {
		name, tool string
		who        agent
		args       map[string]any
		want       string
	}{
		{"a quorum no list can reach", "request_approval", engine, map[string]any{"title": "x", "approvers": []string{"alice", "bob"}, "requiredApprovals": 3}, "validation_error"},
		{"an action approvals lack", "request_approval", engine, map[string]any{"title": "x", "approvers": []string{"alice"}, "actions": []string{"shrug"}}, "/payload/data/actions/0"},
		{"no one named to decide", "request_approval", engine, map[string]any{"title": "x"}, "validation_error: name who decides"},
		{"empty lists of deciders", "request_approval", person, map[string]any{"title": "x", "approvers": []string{}, "approverGroups": []string{}}, "/approvers"},
		{"a run that ends otherwise", "end_run", engine, map[string]any{"runId": "r1", "outcome": "expired"}, "/outcome"},
		{"a reader ending a run", "end_run", reader, map[string]any{"runId": "r1"}, "forbidden: this tool needs scope interrupts:write"},
		{"ending no run", "end_run", engine, map[string]any{"runId": "nope"}, "not_found"},
		{"a run without a key", "request_approval", engine, map[string]any{"title": "x", "runId": "r1"}, "key is required with runId"},
		{"a key that is no id", "ask_question", engine, map[string]any{"questions": []map[string]any{{"id": "q", "question": "?"}}, "runId": "r1", "key": "a key"}, "/key"},
		{"no title", "request_approval", engine, map[string]any{"approvers": []string{"alice"}}, "title"},
		{"a reader asking", "request_approval", reader, map[string]any{"title": "x"}, "forbidden: this tool needs scope interrupts:write"},
		{"an unknown run", "get_outcome", engine, map[string]any{"runId": "nope", "interruptId": "int_1"}, "not_found"},
		{"a negative wait", "get_outcome", engine, map[string]any{"runId": "r1", "interruptId": "int_1", "waitMs": -1}, "/waitMs"},
		{"a page too long", "list_pending", engine, map[string]any{"limit": 1000}, "/limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs := connect(t, url, c.who)
			before := writes()
			var out map[string]any
			msg := call(t, cs, c.tool, c.args, &out)
			if !strings.Contains(msg, c.want) {
				t.Errorf("answered %q (%v), want an error naming %q", msg, out, c.want)
			}
			if writes() != before {
				t.Errorf("a refusal wrote")
			}
		})
	}
}

// TestListPending: list_pending lists what the caller requested and still waits, not another
// agent's of the same tenant.
func TestListPending(t *testing.T) {
	t.Parallel()
	h, _, url := serve(t)
	cs := connect(t, url, engine)
	var asked mcp.Requested
	if msg := call(t, cs, "request_approval", map[string]any{"title": "Deploy 4.2", "approverGroups": []string{"ops"}}, &asked); msg != "" {
		t.Fatal(msg)
	}
	hosttest.Reindex(t, h, hosttest.Who("agent-7"), asked.RunID)
	other := json.RawMessage(`{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"Another agent's","actions":["accept"]}}`)
	if _, _, err := h.RequestInterrupt(context.Background(), hosttest.Who("agent-8"), "r-other", host.Request{NodeID: "n", Payload: other}); err != nil {
		t.Fatal(err)
	}
	hosttest.Reindex(t, h, hosttest.Who("agent-8"), "r-other")
	var page mcp.PendingPage
	if msg := call(t, cs, "list_pending", map[string]any{}, &page); msg != "" {
		t.Fatal(msg)
	}
	if len(page.Interrupts) != 1 || page.Interrupts[0].InterruptID != asked.InterruptID || page.Interrupts[0].Title != "Deploy 4.2" ||
		!slices.Equal(page.Interrupts[0].WaitingOn, []string{"group:ops"}) || page.Interrupts[0].URL != asked.URL {
		t.Errorf("%+v", page)
	}
}

// TestAPersonAsksAsThemself: a person signed in through the agents' client (only its scope)
// asks in new runs and runs they began, reads what they asked and ends their own runs; another's
// run, its interrupts and their outcomes are refused, and the refusals write nothing. An
// engine's token, as an agent running as a service, ends any run of its tenant.
func TestAPersonAsksAsThemself(t *testing.T) {
	t.Parallel()
	h, writes, url := serve(t)
	ctx := context.Background()
	engines := json.RawMessage(`{"kind":"approval","key":"pay","data":{"artifactId":"a","artifactType":"t","title":"An engine's","actions":["accept","reject"],"approversList":["alice"]}}`)
	theirs, _, err := h.RequestInterrupt(ctx, hosttest.Who("agent-8"), "r-engine", host.Request{NodeID: "n", Payload: engines})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, url, person)
	var mine mcp.Requested
	if msg := call(t, cs, "request_approval", map[string]any{"title": "Refund", "approvers": []string{"alice"}}, &mine); msg != "" || !mine.Created {
		t.Fatalf("%+v %q", mine, msg)
	}
	var again mcp.Requested
	if msg := call(t, cs, "ask_question", map[string]any{"questions": []map[string]any{{"id": "q", "question": "Which?"}}, "runId": mine.RunID, "key": "q"}, &again); msg != "" || !again.Created {
		t.Errorf("asking again in the run they began: %+v %q", again, msg)
	}
	var out mcp.Outcome
	if msg := call(t, cs, "get_outcome", map[string]any{"runId": mine.RunID, "interruptId": mine.InterruptID}, &out); msg != "" || out.Status != "pending" {
		t.Errorf("their own outcome: %+v %q", out, msg)
	}
	refused := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		// Another's run, and one not there, answer alike: nothing is learnt of another's runs.
		{"asking in an engine's run", "request_approval", map[string]any{"title": "x", "approvers": []string{"bob"}, "runId": "r-engine", "key": "mine"}, "not_found: no run r-engine that you began"},
		{"replaying an engine's key", "request_approval", map[string]any{"title": "x", "approvers": []string{"bob"}, "runId": "r-engine", "key": "pay"}, "not_found: no run r-engine that you began"},
		{"beginning a run under an id an engine may use", "request_approval", map[string]any{"title": "x", "approvers": []string{"bob"}, "runId": "order-42", "key": "k"}, "not_found: no run order-42 that you began"},
		{"reading an engine's outcome", "get_outcome", map[string]any{"runId": "r-engine", "interruptId": theirs.InterruptID}, "not_found: no interrupt " + theirs.InterruptID + " you requested in run r-engine"},
		{"reading an outcome of no run", "get_outcome", map[string]any{"runId": "r-none", "interruptId": theirs.InterruptID}, "not_found: no interrupt " + theirs.InterruptID + " you requested in run r-none"},
		{"ending an engine's run", "end_run", map[string]any{"runId": "r-engine"}, "not_found: no run r-engine that you began"},
		{"ending no run", "end_run", map[string]any{"runId": "r-none"}, "not_found: no run r-none that you began"},
	}
	for _, c := range refused {
		before := writes()
		var out map[string]any
		if msg := call(t, cs, c.tool, c.args, &out); !strings.Contains(msg, c.want) {
			t.Errorf("%s: answered %q (%v), want %q", c.name, msg, out, c.want)
		}
		if writes() != before {
			t.Errorf("%s: a refusal wrote", c.name)
		}
	}
	var ended mcp.Ended
	if msg := call(t, cs, "end_run", map[string]any{"runId": mine.RunID, "reason": "done"}, &ended); msg != "" || ended.Status != "completed" {
		t.Errorf("ending their own run: %+v %q", ended, msg)
	}
	if msg := call(t, cs, "get_outcome", map[string]any{"runId": mine.RunID, "interruptId": mine.InterruptID}, &out); msg != "" || out.Status != "completed" {
		t.Errorf("their interrupt after the run ended: %+v %q", out, msg)
	}
	if msg := call(t, connect(t, url, engine), "end_run", map[string]any{"runId": "r-engine", "outcome": "cancelled"}, &ended); msg != "" || ended.Status != "cancelled" {
		t.Errorf("an engine ending a run of its tenant: %+v %q", ended, msg)
	}
}

// TestEndsWithoutADecision: an approval past its deadline, once the sweep recorded it, is
// expired; a question whose run was cancelled is cancelled.
func TestEndsWithoutADecision(t *testing.T) {
	t.Parallel()
	clock := testclock.New(hosttest.T0)
	h, _, url := serve(t, func(s *hosttest.Setup) { s.Env.Now = clock.Now })
	cs := connect(t, url, engine)
	ctx := context.Background()
	var late, asked mcp.Requested
	if msg := call(t, cs, "request_approval", map[string]any{"title": "Pay", "approvers": []string{"alice"}, "timeoutMs": 60_000}, &late); msg != "" {
		t.Fatal(msg)
	}
	if msg := call(t, cs, "ask_question", map[string]any{"questions": []map[string]any{{"id": "q", "question": "Which?"}}}, &asked); msg != "" {
		t.Fatal(msg)
	}
	clock.Advance(time.Minute + host.SweepGrace)
	if _, err := h.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.EndRun(ctx, hosttest.Who("agent-7"), asked.RunID, interrupt.RunCancelled, "no longer needed"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   mcp.Requested
		want string
	}{{late, "expired"}, {asked, "cancelled"}} {
		var out mcp.Outcome
		if msg := call(t, cs, "get_outcome", map[string]any{"runId": c.in.RunID, "interruptId": c.in.InterruptID, "waitMs": 1000}, &out); msg != "" || out.Status != c.want {
			t.Errorf("%s: %+v %q, want %s", c.in.NodeID, out, msg, c.want)
		}
	}
}

// lostOnce answers its first append with an error, after applying it: a write whose answer was
// lost.
type lostOnce struct {
	host.Store
	once sync.Once
}

func (l *lostOnce) Append(ctx context.Context, k runlog.Key, c runlog.Commit) error {
	err := l.Store.Append(ctx, k, c)
	l.once.Do(func() { err = errors.Join(err, errors.New("connection reset")) })
	return err
}

// TestARetryNeverAsksTwice: a request in a run the tool made, whose write's answer was lost, is
// an error naming that run and key; asking again with them answers the interrupt it wrote.
func TestARetryNeverAsksTwice(t *testing.T) {
	t.Parallel()
	h, _ := hosttest.MemHostOn(t, func(l host.Store) host.Store { return &lostOnce{Store: l} })
	s := mcp.New(h, mcp.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeMCP(w, r, interrupt.Principal{Subject: "agent-7", Tenant: "acme", Scopes: engine.scopes}, base)
	}))
	t.Cleanup(srv.Close)
	cs := mcptest.Connect(t, srv.URL, http.DefaultTransport, "")
	var first mcp.Requested
	msg := call(t, cs, "request_approval", map[string]any{"title": "Pay", "approvers": []string{"alice"}}, &first)
	m := regexp.MustCompile(`call again with runId "([^"]+)" and key "([^"]+)"`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("a lost answer: %q", msg)
	}
	var again mcp.Requested
	if msg := call(t, cs, "request_approval", map[string]any{"title": "Pay", "approvers": []string{"alice"}, "runId": m[1], "key": m[2]}, &again); msg != "" || again.Created || again.Status != "pending" {
		t.Errorf("asked again: %+v %q", again, msg)
	}
	page, err := h.Events(context.Background(), hosttest.Who("agent-7"), m[1], 0, 0, interrupt.ModeDebug)
	if err != nil || len(page.Events) == 0 {
		t.Fatal(page, err)
	}
	requested := 0
	for _, e := range page.Events {
		if e.Type == interrupt.EventRequested {
			requested++
		}
	}
	if requested != 1 {
		t.Errorf("the run asked %d times", requested)
	}
}

// TestAnAgentNamesWhoBinds: where the host binds principals alone (refKinds principal), an
// approval an agent asks of a group names no one who decides, and is refused, writing nothing;
// an engine's REST request may still leave it to anyone who may respond.
func TestAnAgentNamesWhoBinds(t *testing.T) {
	t.Parallel()
	h, writes, url := serve(t, func(s *hosttest.Setup) { s.Config.RefKinds = []string{"principal"} })
	cs := connect(t, url, engine)
	var out map[string]any
	if msg := call(t, cs, "request_approval", map[string]any{"title": "x", "approverGroups": []string{"finance"}}, &out); !strings.Contains(msg, "validation_error: name who decides") {
		t.Errorf("a group where only principals bind: %q %v", msg, out)
	}
	if writes() != 0 {
		t.Errorf("the refusal wrote")
	}
	if msg := call(t, cs, "request_approval", map[string]any{"title": "x", "approverGroups": []string{"finance"}, "approvers": []string{"alice"}}, &out); msg != "" {
		t.Errorf("a principal beside the group: %q", msg)
	}
	payload := json.RawMessage(`{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"Anyone's","actions":["accept"],"approverGroupRefs":["finance"]}}`)
	if _, _, err := h.RequestInterrupt(context.Background(), hosttest.Who("engine"), "r-engine", host.Request{NodeID: "n", Payload: payload}); err != nil {
		t.Errorf("an engine's request: %v", err)
	}
}
