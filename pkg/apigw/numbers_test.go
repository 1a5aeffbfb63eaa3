package apigw_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Number literals a probe sent, each cheap to send and costly to parse exactly.
const (
	tinyNumber = "1e-999999"
	hugeNumber = "1E+99999999999"
)

// manyOf is a JSON array of n copies of lit.
func manyOf(lit string, n int) string {
	return "[" + strings.Repeat(lit+",", n-1) + lit + "]"
}

// everything holds every scope, for routes of every function.
var everything = caller{"root", "acme", []string{apigw.ScopeInterruptsWrite, apigw.ScopeApprovalsRespond, apigw.ScopeRunsRead, apigw.ScopeRunsConfigure, apigw.ScopeTokensDelegate}}

// TestNumbersBeyondBounds: a number beyond the bounds (interrupt.CheckNumbers) in any body is
// a 400 validation_error naming its member, refused before any schema or integer reads it, and
// writes nothing; ordinary numbers pass.
func TestNumbersBeyondBounds(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "n1", example(t, "approval"))
	tok := s.mintOK(t, "r1", "n1", `{"intent":"resolve"}`).Token
	refine := func(ids string) string {
		return `{"resumeValue":{"action":"refine","decidedAt":"2026-11-30T09:00:00Z","refineFeedback":{"scope":"items","itemIds":` + ids + `}}}`
	}
	approval := func(member string) string {
		return `{"nodeId":"n2","payload":{"kind":"approval","key":"k2","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"],` + member + `}}}`
	}
	node := map[string]string{"runId": "r1", "nodeId": "n1"}
	refused := []struct {
		name, function, body, path string
		params                     map[string]string
	}{
		{"300 in refineFeedback.itemIds", "resolve-by-run", refine(manyOf(tinyNumber, 300)), "/resumeValue/refineFeedback/itemIds/0", node},
		{"the fourth of itemIds", "resolve-by-run", refine(`["a","b","c",` + hugeNumber + `]`), "/resumeValue/refineFeedback/itemIds/3", node},
		{"300 in itemIds, by token", "resolve-by-token", refine(manyOf(tinyNumber, 300)), "/resumeValue/refineFeedback/itemIds/0", map[string]string{"token": tok}},
		{"300 in approversList", "request-interrupt", approval(`"approversList":` + manyOf(tinyNumber, 300)), "/payload/data/approversList/0", node},
		{"timeoutMs", "request-interrupt", `{"nodeId":"n2","payload":{"kind":"custom","key":"k","data":{"customKind":"x"},"timeoutMs":` + hugeNumber + `}}`, "/payload/timeoutMs", node},
		{"a token's ttlMs on request", "request-interrupt", `{"nodeId":"n2","payload":` + example(t, "custom") + `,"token":{"intent":"inspect","ttlMs":` + tinyNumber + `}}`, "/token/ttlMs", node},
		{"ttlMs", "mint-token", `{"intent":"resolve","ttlMs":` + tinyNumber + `}`, "/ttlMs", node},
		{"ttlMs of 41 digits", "mint-token", `{"intent":"resolve","ttlMs":1` + strings.Repeat("0", 40) + `}`, "/ttlMs", node},
		{"confidence", "agent-decisions", `{"nodeId":"n9","key":"d1","agentId":"a","confidence":-0.` + strings.Repeat("0", 50) + strings.Repeat("7", 41) + `,"decision":null}`, "/confidence", node},
		{"escalationThreshold", "configure-run", `{"escalationThreshold":` + tinyNumber + `}`, "/escalationThreshold", node},
		{"an inline schema's minimum", "request-interrupt", `{"nodeId":"n2","payload":{"kind":"custom","key":"k","data":{"customKind":"x"},"resumeSchema":{"type":"number","minimum":` + tinyNumber + `}}}`, "/payload/resumeSchema/minimum", node},
	}
	before := s.items(t)
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := invoke(t, s.fn(tt.function), call{who: &everything, params: tt.params, body: tt.body})
			p := r.problem(t)
			if r.Status != 400 || p.Code != interrupt.CodeValidation || !hasPath(p, tt.path) {
				t.Fatalf("%d %.400s, want 400 validation_error at %s", r.Status, r.Body, tt.path)
			}
			if msg := p.Errors[0].Message; !strings.Contains(msg, "significant digits") && !strings.Contains(msg, "exponent") {
				t.Errorf("refused for %q, not for its number", msg)
			}
		})
	}
	if after := s.items(t); after != before {
		t.Errorf("refused bodies wrote: %s, then %s", before, after)
	}

	for _, lit := range []string{"0", "-1", "3.14", "1e300", "12345678901234567890", "-0." + strings.Repeat("0", 50) + "1"} {
		t.Run("passes "+lit, func(t *testing.T) {
			run := "ok-" + strings.NewReplacer(".", "p", "-", "m").Replace(lit)
			if r := s.request(t, engine, run, "n1", `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["edit-accept"],"artifactData":{"n":[`+lit+`]}}}`); r.Status != 201 {
				t.Fatalf("request: %d %s", r.Status, r.Body)
			}
			if r := s.resolve(t, approver, run, "n1", `{"action":"edit-accept","decidedAt":"2026-11-30T09:00:00Z","editedArtifactData":{"n":`+lit+`}}`); r.Status != 200 {
				t.Errorf("resolve: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestPageNumbersBeyondBounds: an answer or an edit typed as JSON on the approval page, holding
// a number beyond the bounds, renders the form again naming it (400), and records nothing.
func TestPageNumbersBeyondBounds(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "ask", `{"kind":"clarification","key":"c1","data":{"questions":[{"id":"lines","question":"Which lines?","schema":{"type":"array","items":{"type":"number"}}}]}}`)
	s.mustRequest(t, "r1", "approve", example(t, "approval"))
	ask := s.mintOK(t, "r1", "ask", `{"intent":"resolve","principal":"alice"}`).Token
	approve := s.mintOK(t, "r1", "approve", `{"intent":"resolve","principal":"alice"}`).Token
	tests := []struct {
		name, tok string
		form      url.Values
	}{
		{"a clarification's answer", ask, url.Values{"formKey": {"k1"}, "q.lines": {manyOf(tinyNumber, 300)}}},
		{"an edit", approve, url.Values{"formKey": {"k2"}, "action": {"edit-accept"}, "editedArtifactData": {`{"amount":` + hugeNumber + `}`}}},
	}
	before := s.items(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.page(t, "POST", tt.tok, tt.form)
			if r.Status != 400 || !strings.Contains(string(r.Body), "decimal exponent from -400 to 400") {
				t.Errorf("%d %.600s", r.Status, r.Body)
			}
		})
	}
	if after := s.items(t); after != before {
		t.Errorf("refused forms wrote: %s, then %s", before, after)
	}
	if r := s.page(t, "POST", ask, url.Values{"formKey": {"k3"}, "q.lines": {"[1e300, -0.5, 12345678901234567890]"}}); r.Status != 303 {
		t.Errorf("ordinary numbers: %d %s", r.Status, r.Body)
	}
}

// TestWebhookNumbersBeyondBounds: a signed provider event holding a number beyond the bounds is
// refused as any other body that is not an event (400 validation_error), and kept nowhere.
func TestWebhookNumbersBeyondBounds(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const secret = "whsec_test_numbers_0123456789"
	r := s.endpoint(t, manager, `{"provider":"stripe","secrets":["`+secret+`"]}`)
	var e struct{ ID string }
	r.decode(t, &e)
	s.mustRequest(t, "r1", "pay", `{"kind":"external-event","key":"k","data":{"eventType":"payment_intent.succeeded","correlation":"order-7"}}`)
	event := []byte(`{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"amounts":` + manyOf(tinyNumber, 300) + `,"metadata":{"correlation":"order-7"}}}}`)
	before := s.items(t)
	r = s.deliver(t, e.ID, stripeSign(event, secret, s.clock.Now()), event)
	if p := r.problem(t); r.Status != 400 || p.Code != interrupt.CodeValidation || !hasPath(p, "/data/object/amounts/0") {
		t.Errorf("%d %.400s", r.Status, r.Body)
	}
	if after := s.items(t); after != before {
		t.Errorf("a refused event wrote: %s, then %s", before, after)
	}
}

// BenchmarkRefusedNumbers: a resolve whose 128 KB body is 1e-999999s in refineFeedback.itemIds,
// through the handler the function runs: refused (400) in what reading 128 KB of JSON costs.
func BenchmarkRefusedNumbers(b *testing.B) {
	s := memStack(b, withCapabilities(nil))
	s.mustRequest(b, "r1", "n1", example(b, "approval"))
	head := `{"resumeValue":{"action":"refine","decidedAt":"2026-11-30T09:00:00Z","refineFeedback":{"scope":"items","itemIds":`
	body := head + manyOf(tinyNumber, (apigw.MaxBody-len(head)-4)/(len(tinyNumber)+1)) + `}}}`
	c := call{who: &approver, params: map[string]string{"runId": "r1", "nodeId": "n1"}, body: body}
	h := s.fn("resolve-by-run")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if r := invoke(b, h, c); r.Status != 400 {
			b.Fatalf("%d %.300s", r.Status, r.Body)
		}
	}
}
