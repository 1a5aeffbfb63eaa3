package apigw_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// scan is every item of the stack's table, each rendered in full, sorted: two renderings are
// equal only when nothing was written in between, not even an item rewritten as it was.
func (s *stack) scan(t testing.TB) []string {
	t.Helper()
	var out []string
	in := &dynamodb.ScanInput{TableName: &s.table, ConsistentRead: new(true)}
	for {
		page, err := s.db.Scan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			b, err := json.Marshal(item)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		if page.LastEvaluatedKey == nil {
			sort.Strings(out)
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// TestRefusedRequestsWriteNothing: every refusal of every function (and every replay, which
// answers from the log) leaves the table exactly as it was, claims included.
func TestRefusedRequestsWriteNothing(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	quorum := strings.Replace(example(t, "approval"), `"requiredApprovals": 1`, `"requiredApprovals":2,"approversList":["alice","bob"]`, 1)
	s.mustRequest(t, "r1", "vote", quorum)
	done := s.mustRequest(t, "r1", "done", example(t, "custom"))
	voted := `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`
	keyed := call{who: &approver, params: map[string]string{"runId": "r1", "nodeId": "vote"}, body: `{"resumeValue":` + voted + `}`,
		headers: map[string]string{"idempotency-key": "k1"}}
	if r := invoke(t, s.fn("resolve-by-run"), keyed); r.Status != 202 {
		t.Fatalf("vote: %d %s", r.Status, r.Body)
	}
	if r := s.resolve(t, approver, "r1", "done", `{}`); r.Status != 200 {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	s.mustRequest(t, "conv", "talk", example(t, "conversation.start"))
	s.mustRequest(t, "ended", "n1", example(t, "custom"))
	if r := invoke(t, s.fn("end-run"), call{who: &engine, route: "POST /runs/{runId}/complete", params: map[string]string{"runId": "ended"}}); r.Status != 200 {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	inspectOnly := s.mintOK(t, "r1", "vote", `{"intent":"inspect"}`).Token
	resolveVote := s.mintOK(t, "r1", "vote", `{"intent":"resolve","principal":"alice"}`).Token
	doneToken := s.forge(t, s.signer(t, "kA"), token.Claims{Tenant: "acme", RunID: "r1", NodeID: "done", InterruptID: done.InterruptID})

	bob := approver.named("bob")
	node := func(run, node string) map[string]string { return map[string]string{"runId": run, "nodeId": node} }
	runOf := func(run string) map[string]string { return map[string]string{"runId": run} }
	tests := []struct {
		name   string
		h      apigw.Handler
		c      call
		status int
	}{
		{"request: invalid payload", s.fn("request-interrupt"), requestCall(engine, "r1", "n9", `{"kind":"custom"}`), 400},
		{"request: node busy", s.fn("request-interrupt"), requestCall(engine, "r1", "vote", strings.Replace(example(t, "custom"), `"key": "`, `"key": "other-`, 1)), 409},
		{"request: run ended", s.fn("request-interrupt"), requestCall(engine, "ended", "n2", strings.Replace(example(t, "custom"), `"key": "`, `"key": "other-`, 1)), 409},
		{"request: another run's conversation", s.fn("request-interrupt"), requestCall(engine, "r2", "talk", example(t, "conversation.start")), 409},
		{"request: a new conversation at a busy node", s.fn("request-interrupt"), requestCall(engine, "r1", "vote", strings.ReplaceAll(example(t, "conversation.start"), "conv-7", "conv-new")), 409},
		{"request: a new conversation in an ended run", s.fn("request-interrupt"), requestCall(engine, "ended", "talk", strings.ReplaceAll(example(t, "conversation.start"), "conv-7", "conv-new")), 409},
		{"request: replay of the owner's conversation", s.fn("request-interrupt"), requestCall(engine, "conv", "talk", example(t, "conversation.start")), 200},
		{"request: no scope", s.fn("request-interrupt"), requestCall(approver, "r3", "n1", example(t, "custom")), 403},
		{"resolve: invalid value", s.fn("resolve-by-run"), call{who: &bob, params: node("r1", "vote"), body: `{"resumeValue":{"action":"nope"}}`}, 400},
		{"resolve: not eligible", s.fn("resolve-by-run"), call{who: &everyone, params: node("r1", "vote"), body: `{"resumeValue":` + voted + `}`}, 403},
		{"resolve: already voted", s.fn("resolve-by-run"), call{who: &approver, params: node("r1", "vote"), body: `{"resumeValue":` + voted + `}`}, 409},
		{"resolve: key replayed", s.fn("resolve-by-run"), keyed, 202},
		{"resolve: key reused", s.fn("resolve-by-run"), call{who: keyed.who, params: keyed.params, headers: keyed.headers, body: `{"resumeValue":{"action":"reject","decidedAt":"2026-11-30T09:00:00Z"}}`}, 422},
		{"resolve: already resolved", s.fn("resolve-by-run"), call{who: &approver, params: node("r1", "done"), body: `{"resumeValue":{}}`}, 409},
		{"resolve: no such node", s.fn("resolve-by-run"), call{who: &approver, params: node("r1", "nowhere"), body: `{"resumeValue":{}}`}, 404},
		{"token: inspect-only", s.fn("resolve-by-token"), call{params: map[string]string{"token": inspectOnly}, body: `{"resumeValue":` + voted + `}`}, 403},
		{"token: already voted", s.fn("resolve-by-token"), call{params: map[string]string{"token": resolveVote}, body: `{"resumeValue":` + voted + `}`}, 409},
		{"token: already resolved", s.fn("resolve-by-token"), call{params: map[string]string{"token": doneToken}, body: `{"resumeValue":{}}`}, 409},
		{"token: forged", s.fn("resolve-by-token"), call{params: map[string]string{"token": resolveVote[:len(resolveVote)-2] + "AA"}, body: `{"resumeValue":{}}`}, 401},
		{"inspect", s.fn("inspect-by-token"), call{params: map[string]string{"token": inspectOnly}}, 200},
		{"mint: resolved", s.fn("mint-token"), call{who: &engine, params: node("r1", "done"), body: `{"intent":"resolve"}`}, 409},
		{"mint: bad intent", s.fn("mint-token"), call{who: &engine, params: node("r1", "vote"), body: `{"intent":"own"}`}, 400},
		{"end: the other way", s.fn("end-run"), call{who: &engine, route: "POST /runs/{runId}/cancel", params: runOf("ended")}, 409},
		{"end: again", s.fn("end-run"), call{who: &engine, route: "POST /runs/{runId}/complete", params: runOf("ended")}, 200},
		{"end: no such run", s.fn("end-run"), call{who: &engine, route: "POST /runs/{runId}/cancel", params: runOf("nowhere")}, 404},
		{"snapshot: no such run", s.fn("get-run"), call{who: &engine, params: runOf("nowhere")}, 404},
		{"events: no such run", s.fn("list-events"), call{who: &engine, params: runOf("nowhere")}, 404},
	}
	s.clock.Advance(time.Minute) // a claim rewritten now would differ from the one written before
	before := s.dump(t)
	s.metrics.Reset()
	conflicts := map[string]float64{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := invoke(t, tt.h, tt.c)
			if r.Status != tt.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tt.status)
			}
			if r.Status == 409 {
				conflicts[string(r.problem(t).Code)]++
			}
			if after := s.dump(t); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Errorf("the table changed: %d items before, %d after", len(before), len(after))
			}
		})
	}
	// Every 409 is counted under its code, and nothing else is.
	ps := s.points(t)
	var all float64
	for code, n := range conflicts {
		all += n
		if got := metrics.Total(ps, metrics.Conflicts, metrics.Dim{Name: metrics.DimCode, Value: code}); got != n {
			t.Errorf("Conflicts{Code=%s} = %v, want %v", code, got, n)
		}
	}
	if got := metrics.Total(ps, metrics.Conflicts); got != all || all == 0 {
		t.Errorf("Conflicts = %v, want the %v 409 answers", got, all)
	}
}
