package apigw_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// TestConcurrentResolve: 64 principals resolve one pending interrupt at the same instant, 20
// times over: exactly one 200, 63 interrupt_already_resolved, one interrupt.resolved in the log.
func TestConcurrentResolve(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const callers, rounds = 64, 20
	for round := range rounds {
		run := fmt.Sprintf("race-%d", round)
		s.mustRequest(t, run, "gate", example(t, "approval"))
		start := make(chan struct{})
		statuses := make([]int, callers)
		codes := make([]interrupt.Code, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				who := approver.named(fmt.Sprintf("approver-%d", i))
				c := call{who: &who, params: map[string]string{"runId": run, "nodeId": "gate"},
					body: fmt.Sprintf(`{"resumeValue":{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","feedback":"%d"}}`, i)}
				<-start
				r, err := invokeErr(s.fn("resolve-by-run"), c)
				if err != nil {
					t.Error(err)
					return
				}
				statuses[i] = r.Status
				var p problemCode
				_ = json.Unmarshal(r.Body, &p)
				codes[i] = p.Code
			})
		}
		close(start)
		wg.Wait()
		won := -1
		for i, st := range statuses {
			switch {
			case st == 200 && won == -1:
				won = i
			case st == 200:
				t.Errorf("round %d: callers %d and %d both resolved", round, won, i)
			case st != 409 || codes[i] != interrupt.CodeAlreadyResolved:
				t.Errorf("round %d: caller %d got %d %s", round, i, st, codes[i])
			}
		}
		if won == -1 {
			t.Fatalf("round %d: nobody resolved", round)
		}
		types := s.eventTypes(t, "acme", run)
		if n := strings.Count(strings.Join(types, " "), interrupt.EventResolved); n != 1 {
			t.Fatalf("round %d: %d interrupt.resolved events: %v", round, n, types)
		}
		commits := s.commits(t, "acme", run)
		var resolved interrupt.Resolved
		if err := json.Unmarshal(commits[len(commits)-1].Events[1].Payload, &resolved); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(resolved.ResumeValue), fmt.Sprintf(`"feedback":"%d"`, won)) {
			t.Errorf("round %d: the log holds %s, but caller %d was told it won", round, resolved.ResumeValue, won)
		}
	}
}

type problemCode struct {
	Code interrupt.Code `json:"code"`
}

func TestResolveValidatesTheResumeValue(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const decided = `"decidedAt":"2026-11-30T09:00:00Z"`
	onlyAccept := `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept","reject"]}}`
	withSchema := `{"kind":"custom","key":"k","data":{"customKind":"x"},"resumeSchema":{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer","minimum":1},"currency":{"enum":["EUR","USD"]}},"additionalProperties":false}}`
	tests := []struct {
		name, payload, value string
		paths                []string
	}{
		{"resumeSchema: wrong type and enum", withSchema, `{"amount":"ten","currency":"GBP"}`, []string{"/resumeValue/amount", "/resumeValue/currency"}},
		{"resumeSchema: missing member", withSchema, `{}`, []string{"/resumeValue/amount"}},
		{"resumeSchema: unknown member", withSchema, `{"amount":3,"tip":1}`, []string{"/resumeValue/tip"}},
		{"resumeSchema: null", withSchema, `null`, []string{"/resumeValue"}},
		{"approval: action not offered", onlyAccept, `{"action":"refine",` + decided + `,"refineFeedback":{"scope":"whole"}}`, []string{"/resumeValue/action"}},
		{"approval: unknown action", example(t, "approval"), `{"action":"approve",` + decided + `}`, []string{"/resumeValue/action"}},
		{"approval: refine without feedback", example(t, "approval"), `{"action":"refine",` + decided + `}`, []string{"/resumeValue/refineFeedback"}},
		{"approval: refine with an unknown scope", example(t, "approval"), `{"action":"refine",` + decided + `,"refineFeedback":{"scope":"page"}}`, []string{"/resumeValue/refineFeedback/scope"}},
		{"approval: edit-accept without data", example(t, "approval"), `{"action":"edit-accept",` + decided + `}`, []string{"/resumeValue/editedArtifactData"}},
		{"approval: without decidedAt", example(t, "approval"), `{"action":"accept"}`, []string{"/resumeValue/decidedAt"}},
		{"approval: not an object", example(t, "approval"), `"accept"`, []string{"/resumeValue"}},
		{"clarification: answer fails its schema", example(t, "clarification"), `{"answers":{"address":"x","express":true}}`, []string{"/resumeValue/answers/address"}},
		{"clarification: unanswered question", example(t, "clarification"), `{"answers":{"address":"Main St 1"}}`, []string{"/resumeValue/answers/express"}},
		{"clarification: unknown question", example(t, "clarification"), `{"answers":{"address":"Main St 1","express":false,"gift":true}}`, []string{"/resumeValue/answers/gift"}},
		{"clarification: not answers", example(t, "clarification"), `["Main St 1"]`, []string{"/resumeValue"}},
		{"conversation.exchange: outcomeSchema", example(t, "conversation.exchange"), `{"plan":"platinum"}`, []string{"/resumeValue/plan"}},
		{"low-confidence: resumeSchema", example(t, "low-confidence"), `{"label":7}`, []string{"/resumeValue/label"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := fmt.Sprintf("v%d", i)
			base := 0
			if strings.Contains(tt.payload, "conversation.exchange") {
				base = s.opened(t, run, "conv-7")
			}
			s.mustRequest(t, run, "n1", tt.payload)
			r := s.resolve(t, approver, run, "n1", tt.value)
			if r.Status != 400 {
				t.Fatalf("status %d %s, want 400", r.Status, r.Body)
			}
			p := r.problem(t)
			if p.Code != interrupt.CodeValidation {
				t.Errorf("code %s", p.Code)
			}
			for _, path := range tt.paths {
				if !hasPath(p, path) {
					t.Errorf("errors %+v do not name %s", p.Errors, path)
				}
			}
			if n := len(s.commits(t, "acme", run)); n != base+1 {
				t.Errorf("a refused resolve changed the log: %d commits", n)
			}
		})
	}
}

func TestResolveEachKind(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	values := map[string]string{
		"approval":              `{"action":"edit-accept","decidedAt":"2026-11-30T09:00:00Z","editedArtifactData":{"amount":12000}}`,
		"clarification":         `{"answers":{"address":"Main St 1","express":true}}`,
		"external-event":        `{"status":"succeeded"}`,
		"custom":                `{"calibrated":true}`,
		"conversation.start":    `{"accepted":true}`,
		"conversation.exchange": `{"plan":"team"}`,
		"conversation.close":    `null`,
		"low-confidence":        `{"label":"billing"}`,
	}
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			run := "resolve-" + strings.ReplaceAll(k.kind, ".", "-")
			if needsOpen(k.kind) {
				s.opened(t, run, run)
			}
			v := s.mustRequest(t, run, "n1", strings.ReplaceAll(example(t, k.kind), "conv-7", run))
			r := s.resolve(t, approver, run, "n1", values[k.kind])
			if r.Status != 200 {
				t.Fatalf("resolve: %d %s", r.Status, r.Body)
			}
			var res host.Resolution
			r.decode(t, &res)
			if res.Status != interrupt.StatusResolved || res.InterruptID != v.InterruptID || res.Seq != v.Seq+1 || res.RunID != run || res.NodeID != "n1" {
				t.Errorf("answer %+v", res)
			}
			snap, _ := s.snapshot(t, engine, run)
			if snap.Status != interrupt.RunRunning || snap.CurrentNodeID != "" || len(snap.Pending) != 0 {
				t.Errorf("snapshot after resolve %+v", snap)
			}
			commits := s.commits(t, "acme", run)
			last := commits[len(commits)-1]
			var want []string
			if k.kind == "approval" {
				want = append(want, interrupt.EventVoted)
			}
			want = append(want, interrupt.EventResolved)
			if prefix := interrupt.Kind(k.kind).LegacyPrefix(); prefix != "" {
				want = append(want, prefix+".resolved")
			}
			read := last.Envelopes(run)
			if len(read) != len(want) {
				t.Fatalf("resolve commit read as %+v, want %v", read, want)
			}
			for i, e := range read {
				if e.Type != want[i] {
					t.Errorf("event %d is %s, want %s", i, e.Type, want[i])
				}
			}
			var stored, wantStored []string
			for _, e := range last.Events {
				stored = append(stored, e.Type)
			}
			for _, typ := range want {
				if !interrupt.IsLegacyType(typ) {
					wantStored = append(wantStored, typ)
				}
			}
			if !slices.Equal(stored, wantStored) {
				t.Errorf("stored %v, want %v: aliases are derived on read", stored, wantStored)
			}
			if again := s.resolve(t, approver, run, "n1", values[k.kind]); again.Status != 409 || again.problem(t).Code != interrupt.CodeAlreadyResolved {
				t.Errorf("second resolve: %d %s", again.Status, again.Body)
			}
		})
	}
}

func TestResolveRecordsTheDecider(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "n1", example(t, "approval"))
	r := s.resolve(t, approver, "r1", "n1", `{ "action" : "accept", "decidedAt":"2026-11-30T09:00:00Z" }`)
	var res host.Resolution
	r.decode(t, &res)
	if string(res.ResumeValue) != `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","decidedBy":"alice"}` {
		t.Errorf("resumeValue %s: decidedBy should record the caller", res.ResumeValue)
	}
	// decidedBy is opaque: kept as sent, whatever it names; the vote records who decided.
	for i, name := range []string{"bob", "Alice", "user:alice"} {
		run := fmt.Sprintf("r2-%d", i)
		s.mustRequest(t, run, "n1", example(t, "approval"))
		r = s.resolve(t, approver, run, "n1", `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","decidedBy":"`+name+`"}`)
		r.decode(t, &res)
		if r.Status != 200 || !strings.Contains(string(res.ResumeValue), `"decidedBy":"`+name+`"`) {
			t.Errorf("alice sending decidedBy %q: %d %s", name, r.Status, r.Body)
		}
		commits := s.commits(t, "acme", run)
		var v interrupt.Vote
		if err := json.Unmarshal(commits[len(commits)-1].Events[0].Payload, &v); err != nil || v.Principal != "alice" {
			t.Errorf("decidedBy %q: the vote records %q (%v), want alice", name, v.Principal, err)
		}
	}
	s.mustRequest(t, "r3", "n1", example(t, "approval"))
	anonymous := s.mintOK(t, "r3", "n1", `{"intent":"resolve"}`).Token
	r = s.resolveByToken(t, anonymous, `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","decidedBy":"Alice Liddell <ops@acme>"}`)
	r.decode(t, &res)
	if !strings.Contains(string(res.ResumeValue), `"decidedBy":"Alice Liddell <ops@acme>"`) {
		t.Errorf("resumeValue %s: a token without a principal keeps decidedBy as sent", res.ResumeValue)
	}
}

func TestAskDoesNotExit(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "n1", example(t, "approval"))
	r := s.resolve(t, approver, "r1", "n1", `{"action":"ask","decidedAt":"2026-11-30T09:00:00Z","feedback":"which cost centre?"}`)
	var res host.Resolution
	r.decode(t, &res)
	if r.Status != 202 || res.Status != interrupt.StatusPending {
		t.Fatalf("ask: %d %s", r.Status, r.Body)
	}
	if snap, _ := s.snapshot(t, engine, "r1"); snap.Status != interrupt.RunWaitingApproval {
		t.Errorf("after ask the run is %s", snap.Status)
	}
	if r := s.resolve(t, approver, "r1", "n1", `{"action":"accept","decidedAt":"2026-11-30T09:05:00Z"}`); r.Status != 200 {
		t.Errorf("accept after ask: %d %s", r.Status, r.Body)
	}
	want := []string{interrupt.EventRequested, "approval.requested", interrupt.EventAsked, interrupt.EventVoted, interrupt.EventResolved, "approval.resolved"}
	if got := s.eventTypes(t, "acme", "r1"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("events %v, want %v", got, want)
	}
}

func TestResolvePastDeadline(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "n1", example(t, "external-event")) // timeoutMs 86400000
	s.clock.Advance(24*time.Hour - time.Millisecond)
	if snap, _ := s.snapshot(t, engine, "r1"); snap.Status != interrupt.RunWaitingExternal {
		t.Errorf("a ms before the deadline the run is %s", snap.Status)
	}
	s.clock.Advance(time.Millisecond)
	if snap, _ := s.snapshot(t, engine, "r1"); snap.Status != interrupt.RunRunning || len(snap.Pending) != 0 {
		t.Errorf("at the deadline the snapshot is %+v", snap)
	}
	r := s.resolve(t, approver, "r1", "n1", `{"status":"succeeded"}`)
	if r.Status != 409 || r.problem(t).Code != interrupt.CodeAlreadyResolved {
		t.Errorf("resolve past deadline: %d %s", r.Status, r.Body)
	}
	var v host.InterruptView
	s.request(t, engine, "r1", "n1", example(t, "external-event")).decode(t, &v)
	if v.Status != interrupt.StatusExpired {
		t.Errorf("replayed key past deadline: %+v", v)
	}
	if n := len(s.commits(t, "acme", "r1")); n != 1 {
		t.Errorf("%d commits", n)
	}
}

func TestResolveUnknownRunOrNode(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "n1", example(t, "custom"))
	for _, c := range []struct{ run, node string }{{"nope", "n1"}, {"r1", "nope"}, {"r1", "a#b"}, {"", "n1"}} {
		r := invoke(t, s.fn("resolve-by-run"), call{who: &approver, params: map[string]string{"runId": c.run, "nodeId": c.node}, body: `{"resumeValue":1}`})
		if r.Status != 404 || r.problem(t).Code != interrupt.CodeNotFound {
			t.Errorf("%s/%s: %d %s", c.run, c.node, r.Status, r.Body)
		}
	}
	for _, body := range []string{`{}`, `{"resumeValue":1,"by":"x"}`, `{"resumeValue":1} {}`, `nope`} {
		r := invoke(t, s.fn("resolve-by-run"), call{who: &approver, params: map[string]string{"runId": "r1", "nodeId": "n1"}, body: body})
		if r.Status != 400 || r.problem(t).Code != interrupt.CodeValidation {
			t.Errorf("body %s: %d %s", body, r.Status, r.Body)
		}
	}
	r := invoke(t, s.fn("resolve-by-run"), call{who: &approver, params: map[string]string{"runId": "r1", "nodeId": "n1"}, body: `{"resumeValue":1}`, ctype: "text/plain"})
	if r.Status != 415 {
		t.Errorf("text/plain body: %d", r.Status)
	}
	if n := len(s.commits(t, "acme", "r1")); n != 1 {
		t.Errorf("%d commits", n)
	}
}
