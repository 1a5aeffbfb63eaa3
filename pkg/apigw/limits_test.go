package apigw_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// filler is a JSON string body (without its quotes) of exactly n bytes, made of the characters
// that grow under escaping: "x", "<", "é" (two bytes), and an escaped quote and backslash.
func filler(n int) string {
	const unit = `x<é\"\\`
	var b strings.Builder
	for b.Len()+len(unit) <= n {
		b.WriteString(unit)
	}
	b.WriteString(strings.Repeat("x", n-b.Len()))
	return b.String()
}

// sized fills the one %s of format so that the whole body is exactly apigw.MaxBody bytes.
func sized(t *testing.T, format string) string {
	t.Helper()
	n := apigw.MaxBody - (len(format) - len("%s"))
	body := strings.Replace(format, "%s", filler(n), 1)
	if len(body) != apigw.MaxBody {
		t.Fatalf("body of %d bytes", len(body))
	}
	return body
}

// TestLargestBodiesFit: a body of the documented maximum, filled with what escaping grows, is
// accepted and read back byte for byte (an idempotent replay too), or refused with 413; never a
// 5xx. DynamoDB's item limit is the real one here: the stack runs on the local DynamoDB API.
func TestLargestBodiesFit(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	approval := `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["edit-accept"]}}`
	clarification := `{"kind":"clarification","key":"k","data":{"questions":[{"id":"q","question":"?","schema":{"type":"string"}}]}}`
	tests := []struct {
		name, payload string
		// body is the request's format with one %s to fill; value finds the stored value in it.
		body  string
		value func(body string) string
	}{
		{"edit-accept", approval,
			`{"resumeValue":{"action":"edit-accept","decidedAt":"2026-11-30T09:00:00Z","decidedBy":"alice","editedArtifactData":{"text":"%s"}}}`,
			func(body string) string { return body[len(`{"resumeValue":`) : len(body)-1] }},
		{"clarification answer", clarification,
			`{"resumeValue":{"answers":{"q":"%s"},"decidedBy":"alice","decidedAt":"2026-11-30T09:00:00Z"}}`,
			func(body string) string { return body[len(`{"resumeValue":`) : len(body)-1] }},
		{"request payload", "",
			`{"nodeId":"n1","payload":{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"],"artifactData":"%s"}}}`,
			func(body string) string { return body[len(`{"nodeId":"n1","payload":`) : len(body)-1] }},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := "big-" + string(rune('a'+i))
			body := sized(t, tt.body)
			var r response
			if tt.payload == "" {
				r = invoke(t, s.fn("request-interrupt"), call{who: &engine, params: map[string]string{"runId": run}, body: body})
			} else {
				s.mustRequest(t, run, "n1", tt.payload)
				c := call{who: &approver, params: map[string]string{"runId": run, "nodeId": "n1"}, body: body,
					headers: map[string]string{"idempotency-key": "big"}}
				r = invoke(t, s.fn("resolve-by-run"), c)
				if r.Status == 200 {
					replay := invoke(t, s.fn("resolve-by-run"), c)
					if replay.Status != 200 || !bytes.Equal(replay.Body, r.Body) || replay.Headers["Idempotent-Replayed"] != "true" {
						t.Errorf("replay %d %v, differs from the answer: %v", replay.Status, replay.Headers, !bytes.Equal(replay.Body, r.Body))
					}
				}
			}
			switch r.Status {
			case 200, 201:
			case 413:
				t.Logf("refused at the documented limit: %s", r.Body)
				return
			default:
				t.Fatalf("%d %.300s", r.Status, r.Body)
			}
			want := tt.value(body)
			page, _ := s.events(t, engine, run, nil)
			last := page.Events[len(page.Events)-1]
			var got json.RawMessage = last.Payload
			if tt.payload != "" {
				var resolved struct{ ResumeValue json.RawMessage }
				if err := json.Unmarshal(last.Payload, &resolved); err != nil {
					t.Fatal(err)
				}
				got = resolved.ResumeValue
			}
			if string(got) != want {
				t.Errorf("read back %d bytes, want the %d sent, byte for byte", len(got), len(want))
			}
			var res host.Resolution
			if r.Status == 200 {
				r.decode(t, &res)
				if string(res.ResumeValue) != want {
					t.Errorf("the answer's resumeValue differs from the one sent")
				}
			}
		})
	}
}

// TestEarlierLayoutReadsTheSame: a run stored as the host stored it before values were kept once
// (legacy aliases, the releasing vote with its value, the idempotent answer whole) reads as the
// same events, and replays the same answer, as the same run stored today.
func TestEarlierLayoutReadsTheSame(t *testing.T) {
	today, earlier := newStack(t), newStack(t)
	today.mustRequest(t, "r1", "n1", example(t, "approval"))
	resolve := call{who: &approver, params: map[string]string{"runId": "r1", "nodeId": "n1"}, headers: map[string]string{"idempotency-key": "k1"},
		body: `{"resumeValue":{"action":"edit-accept","decidedAt":"2026-11-30T09:00:00Z","editedArtifactData":{"amount":12000}}}`}
	if r := invoke(t, today.fn("resolve-by-run"), resolve); r.Status != 200 {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	for _, c := range today.commits(t, "acme", "r1") {
		var events []runlog.Event
		for _, e := range c.Envelopes("r1") {
			events = append(events, runlog.Event{Type: e.Type, NodeID: e.NodeID, InterruptID: e.InterruptID, Payload: e.Payload})
		}
		c.Events = events
		if c.Idem != nil {
			var answer map[string]any
			if err := json.Unmarshal(c.Idem.Response, &answer); err != nil {
				t.Fatal(err)
			}
			answer["resumeValue"] = json.RawMessage(c.Value())
			whole, err := json.Marshal(answer)
			if err != nil {
				t.Fatal(err)
			}
			c.Idem.Response = whole
		}
		if err := earlier.log.Append(t.Context(), runlog.Key{Tenant: "acme", RunID: "r1"}, c); err != nil {
			t.Fatal(err)
		}
	}
	stored := earlier.commits(t, "acme", "r1")[1]
	if len(stored.Events) != 3 || stored.Events[2].Type != "approval.resolved" || !strings.Contains(string(stored.Events[0].Payload), "resumeValue") ||
		!strings.Contains(string(stored.Idem.Response), "amount") {
		t.Fatalf("the earlier layout was not written: %+v", stored)
	}

	a, _ := today.events(t, engine, "r1", nil)
	b, _ := earlier.events(t, engine, "r1", nil)
	if len(a.Events) != 5 || !reflect.DeepEqual(a, b) {
		t.Errorf("today's run reads as\n%+v\nthe earlier layout as\n%+v", a, b)
	}
	// A replay answers the recorded answer byte for byte, whichever deploy recorded it.
	replayA, replayB := invoke(t, today.fn("resolve-by-run"), resolve), invoke(t, earlier.fn("resolve-by-run"), resolve)
	var a2, b2 any
	replayA.decode(t, &a2)
	replayB.decode(t, &b2)
	if replayB.Headers["Idempotent-Replayed"] != "true" || !reflect.DeepEqual(a2, b2) || string(replayB.Body) != string(stored.Idem.Response) {
		t.Errorf("replays differ: today %s, earlier %d %s (recorded %s)", replayA.Body, replayB.Status, replayB.Body, stored.Idem.Response)
	}
}

// TestRunGrowthIsBounded: one run holds a bounded number of interrupts pending at once (what
// every read of it folds), and one principal asks a bounded number of times on one approval;
// past a bound the request is refused with a problem naming it and writes nothing, and the run
// can still be ended. Its length is not bounded (TestALongRunAnswersAsAShortOne).
func TestRunGrowthIsBounded(t *testing.T) {
	t.Parallel()
	s := newStackWith(t, func(cfg *host.Config) { cfg.MaxPending = 4 })
	custom := func(key string) string {
		return strings.Replace(example(t, "custom"), `"robot-arm-calibrated"`, `"`+key+`"`, 1)
	}
	s.mustRequest(t, "r1", "n1", custom("k1"))
	s.mustRequest(t, "r1", "n2", custom("k2"))
	s.mustRequest(t, "r1", "n3", custom("k3"))
	s.mustRequest(t, "r1", "n4", custom("k4"))
	r := s.request(t, engine, "r1", "n5", custom("k5"))
	if r.Status != 409 || !strings.Contains(r.problem(t).Detail, "as many as one run may") {
		t.Errorf("a fifth pending interrupt: %d %s", r.Status, r.Body)
	}
	if n := len(s.commits(t, "acme", "r1")); n != 4 {
		t.Errorf("%d commits, want the 4 accepted", n)
	}
	if r := invoke(t, s.fn("end-run"), call{who: &engine, route: "POST /runs/{runId}/cancel", params: map[string]string{"runId": "r1"}}); r.Status != 200 {
		t.Errorf("a full run cannot be ended: %d %s", r.Status, r.Body)
	}

	s2 := newStack(t)
	s2.mustRequest(t, "r1", "n1", example(t, "approval"))
	ask := `{"action":"ask","decidedAt":"2026-11-30T09:00:00Z","feedback":"which cost centre?"}`
	for i := range host.MaxAsksPerPrincipal {
		if r := s2.resolve(t, approver, "r1", "n1", ask); r.Status != 202 {
			t.Fatalf("ask %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	if r := s2.resolve(t, approver, "r1", "n1", ask); r.Status != 409 || r.problem(t).Code != interrupt.CodeConflict {
		t.Errorf("one ask too many: %d %s", r.Status, r.Body)
	}
	if r := s2.resolve(t, approver.named("bob"), "r1", "n1", ask); r.Status != 202 {
		t.Errorf("another principal asks: %d %s", r.Status, r.Body)
	}
}
