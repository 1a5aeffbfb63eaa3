package apigw_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/internal/testkeys"
	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// kinds is the spec's Payload table: each kind's required data fields, and the run status while
// it is pending.
var kinds = []struct {
	kind     string
	required []string
	waiting  interrupt.RunStatus
}{
	{"approval", []string{"artifactId", "artifactType", "title", "actions"}, interrupt.RunWaitingApproval},
	{"clarification", []string{"questions"}, interrupt.RunWaitingInput},
	{"external-event", []string{"eventType", "correlation"}, interrupt.RunWaitingExternal},
	{"custom", []string{"customKind"}, interrupt.RunWaitingExternal},
	{"conversation.start", []string{"conversationId"}, interrupt.RunWaitingInput},
	{"conversation.exchange", []string{"conversationId", "prompt"}, interrupt.RunWaitingInput},
	{"conversation.close", []string{"conversationId"}, interrupt.RunWaitingInput},
	{"low-confidence", []string{"agentId", "threshold", "observed"}, interrupt.RunWaitingInput},
}

func TestRequestEachKind(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			run := "run-" + strings.ReplaceAll(k.kind, ".", "-")
			payload := strings.ReplaceAll(example(t, k.kind), "conv-7", run) // a conversation belongs to one run
			base := 0
			if needsOpen(k.kind) {
				base = s.opened(t, run, run)
			}
			v := s.mustRequest(t, run, "node-1", payload)
			if v.Status != interrupt.StatusPending || v.Kind != interrupt.Kind(k.kind) || v.RunID != run || v.NodeID != "node-1" || v.InterruptID == "" || v.Seq != int64(base+1) {
				t.Errorf("answer = %+v", v)
			}
			snap, _ := s.snapshot(t, engine, run)
			if snap.Status != k.waiting || snap.CurrentNodeID != "node-1" || len(snap.Pending) != 1 || snap.Pending[0].InterruptID != v.InterruptID {
				t.Errorf("snapshot = %+v, want %s at node-1", snap, k.waiting)
			}
			commits := s.commits(t, "acme", run)
			if len(commits) != base+1 {
				t.Fatalf("%d commits, want %d", len(commits), base+1)
			}
			for _, e := range commits[base].Events {
				if interrupt.IsLegacyType(e.Type) {
					t.Errorf("stored %s: an alias is derived on read, never stored", e.Type)
				}
			}
			var requested []string
			for _, e := range commits[base].Envelopes(run) {
				if strings.HasSuffix(e.Type, ".requested") {
					requested = append(requested, e.Type)
					if string(e.Payload) != compact(t, payload) {
						t.Errorf("%s payload = %s, want the request's payload verbatim", e.Type, e.Payload)
					}
				}
			}
			want := []string{interrupt.EventRequested}
			if prefix := interrupt.Kind(k.kind).LegacyPrefix(); prefix != "" {
				want = append(want, prefix+".requested")
			}
			if !slices.Equal(requested, want) {
				t.Errorf("requested events read %v, want %v in one commit", requested, want)
			}
		})
	}
}

func TestRequestLowConfidenceRecordsTheDecision(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "triage", example(t, "low-confidence"))
	got := s.eventTypes(t, "acme", "r1")
	want := []string{interrupt.EventAgentDecided, interrupt.EventNodeSuspended, interrupt.EventRequested}
	if !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	confident := strings.Replace(example(t, "low-confidence"), `"observed": 0.42`, `"observed": 0.9`, 1)
	r := s.request(t, engine, "r2", "triage", confident)
	if r.Status != 400 || !hasPath(r.problem(t), "/payload/data/observed") {
		t.Errorf("confident decision: %d %s", r.Status, r.Body)
	}
}

func hasPath(p apigw.Problem, path string) bool {
	for _, e := range p.Errors {
		if e.Path == path {
			return true
		}
	}
	return false
}

// TestRequestRefusesInvalidPayloads removes each required field and adds an unknown field at
// every level, for every kind: each is a 400 validation_error naming the field, and nothing is
// written.
func TestRequestRefusesInvalidPayloads(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	empty := s.items(t)
	type variant struct {
		name, body, path string
	}
	var variants []variant
	for _, k := range kinds {
		var payload map[string]any
		if err := json.Unmarshal([]byte(example(t, k.kind)), &payload); err != nil {
			t.Fatal(err)
		}
		mutate := func(name, path string, change func(p map[string]any)) {
			p := clone(t, payload)
			change(p)
			b, _ := json.Marshal(p)
			variants = append(variants, variant{k.kind + "/" + name, fmt.Sprintf(`{"nodeId":"n1","payload":%s}`, b), path})
		}
		for _, f := range k.required {
			mutate("without data."+f, "/payload/data/"+f, func(p map[string]any) { delete(p["data"].(map[string]any), f) })
		}
		for _, f := range []string{"kind", "key", "data"} {
			mutate("without "+f, "/payload/"+f, func(p map[string]any) { delete(p, f) })
		}
		mutate("unknown data field", "/payload/data/surprise", func(p map[string]any) { p["data"].(map[string]any)["surprise"] = 1 })
		mutate("unknown payload field", "/payload/surprise", func(p map[string]any) { p["surprise"] = true })
	}
	variants = append(variants,
		variant{"unknown body field", `{"nodeId":"n1","payload":{},"surprise":1}`, "/surprise"},
		variant{"without nodeId", `{"payload":` + example(t, "custom") + `}`, "/nodeId"},
		variant{"without payload", `{"nodeId":"n1"}`, "/payload"},
		variant{"bad nodeId", `{"nodeId":"a#b","payload":` + example(t, "custom") + `}`, "/nodeId"},
		variant{"nodeId not a string", `{"nodeId":7,"payload":` + example(t, "custom") + `}`, "/nodeId"},
		variant{"question without id", `{"nodeId":"n1","payload":{"kind":"clarification","key":"k","data":{"questions":[{"question":"?"}]}}}`, "/payload/data/questions/0/id"},
		variant{"duplicate question ids", `{"nodeId":"n1","payload":{"kind":"clarification","key":"k","data":{"questions":[{"id":"q","question":"?"},{"id":"q","question":"!"}]}}}`, "/payload/data/questions/1/id"},
		variant{"resumeSchema with remote ref", `{"nodeId":"n1","payload":{"kind":"custom","key":"k","data":{"customKind":"x"},"resumeSchema":{"$ref":"http://127.0.0.1:1/s.json"}}}`, "/payload/resumeSchema/$ref"},
		variant{"resumeSchema referring to itself", `{"nodeId":"n1","payload":{"kind":"custom","key":"k","data":{"customKind":"x"},"resumeSchema":{"$ref":"#"}}}`, "/payload/resumeSchema/$ref"},
		variant{"resumeSchema of draft 2020-12", `{"nodeId":"n1","payload":{"kind":"custom","key":"k","data":{"customKind":"x"},"resumeSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"integer"}]}}}`, "/payload/resumeSchema/$schema"},
		variant{"outcomeSchema with a 2020-12 keyword", `{"nodeId":"n1","payload":{"kind":"conversation.exchange","key":"k","data":{"conversationId":"c","prompt":"?","outcomeSchema":{"type":"object","dependentRequired":{"a":["b"]}}}}}`, "/payload/data/outcomeSchema/dependentRequired"},
		variant{"question schema looping through anyOf", `{"nodeId":"n1","payload":{"kind":"clarification","key":"k","data":{"questions":[{"id":"q","question":"?","schema":{"anyOf":[{"$ref":"#"}]}}]}}}`, "/payload/data/questions/0/schema/anyOf/0/$ref"},
		variant{"outcomeSchema with a slow pattern", `{"nodeId":"n1","payload":{"kind":"conversation.exchange","key":"k","data":{"conversationId":"c","prompt":"?","outcomeSchema":{"pattern":"(.{1,1000})+z"}}}}`, "/payload/data/outcomeSchema/pattern"},
		variant{"uncompilable outcomeSchema", `{"nodeId":"n1","payload":{"kind":"conversation.exchange","key":"k","data":{"conversationId":"c","prompt":"?","outcomeSchema":{"type":"nonsense"}}}}`, "/payload/data/outcomeSchema"},
	)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			r := invoke(t, s.fn("request-interrupt"), call{who: &engine, params: map[string]string{"runId": "r1"}, body: v.body})
			if r.Status != 400 {
				t.Fatalf("status %d %s, want 400", r.Status, r.Body)
			}
			p := r.problem(t)
			if p.Code != interrupt.CodeValidation || !hasPath(p, v.path) {
				t.Errorf("problem %+v does not name %s", p, v.path)
			}
		})
	}
	if now := s.items(t); now != empty {
		t.Errorf("refused requests wrote: %s, then %s", empty, now)
	}
}

func TestRequestConversationNeedsTheCapability(t *testing.T) {
	t.Parallel()
	s := newStack(t, "none")
	empty := s.items(t)
	for _, kind := range []string{"conversation.start", "conversation.exchange", "conversation.close"} {
		r := s.request(t, engine, "r1", "n1", example(t, kind))
		if r.Status != 400 || !hasPath(r.problem(t), "/payload/kind") {
			t.Errorf("%s without the capability: %d %s", kind, r.Status, r.Body)
		}
	}
	if now := s.items(t); now != empty {
		t.Errorf("wrote: %s, then %s", empty, now)
	}
}

func clone(t testing.TB, m map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(m)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRequestNodeBusy(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "n1", example(t, "custom"))
	r := s.request(t, engine, "r1", "n1", example(t, "external-event"))
	if r.Status != 409 || r.problem(t).Code != interrupt.CodeConflict {
		t.Errorf("second key at a waiting node: %d %s", r.Status, r.Body)
	}
	if n := len(s.commits(t, "acme", "r1")); n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
}

// TestReentry: key K is requested once per run; later requests with K answer the interrupt as
// the log has it, with its persisted resumeValue once resolved, from this process and from a
// process that shares nothing with it.
func TestReentry(t *testing.T) {
	t.Parallel()
	s := dynamoStack(t)
	payload := example(t, "conversation.exchange")
	base := s.opened(t, "r1", "conv-7")
	first := s.mustRequest(t, "r1", "chat", payload)

	again := s.request(t, engine, "r1", "chat", payload)
	var v host.InterruptView
	again.decode(t, &v)
	if again.Status != 200 || v.InterruptID != first.InterruptID || v.Status != interrupt.StatusPending || v.Seq != first.Seq {
		t.Errorf("repeat while pending: %d %+v", again.Status, v)
	}
	if n := len(s.commits(t, "acme", "r1")); n != base+1 {
		t.Fatalf("%d commits after a repeat, want %d", n, base+1)
	}

	if r := s.resolve(t, approver, "r1", "chat", `{"plan":"team"}`); r.Status != 200 {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	before := s.commits(t, "acme", "r1")

	third := s.request(t, engine, "r1", "chat", payload)
	third.decode(t, &v)
	if third.Status != 200 || v.Status != interrupt.StatusResolved || string(v.ResumeValue) != `{"plan":"team"}` || v.InterruptID != first.InterruptID {
		t.Errorf("repeat after resolve: %d %s", third.Status, third.Body)
	}

	out, err := helper(t, s.table, "r1", "chat", payload)
	if err != nil {
		t.Fatalf("second process: %v\n%s", err, out)
	}
	var fromOther struct {
		Status int
		View   host.InterruptView
	}
	if err := json.Unmarshal(out, &fromOther); err != nil {
		t.Fatalf("second process said %s: %v", out, err)
	}
	if fromOther.Status != 200 || fromOther.View.Status != interrupt.StatusResolved || string(fromOther.View.ResumeValue) != `{"plan":"team"}` {
		t.Errorf("second process answered %d %+v", fromOther.Status, fromOther.View)
	}
	if after := s.commits(t, "acme", "r1"); len(after) != len(before) {
		t.Errorf("log grew from %d to %d commits on replays", len(before), len(after))
	}
	if got := s.eventTypes(t, "acme", "r1"); strings.Count(strings.Join(got, " "), interrupt.EventRequested) != 2 {
		t.Errorf("events %v hold other than one %s for the start and one for the exchange", got, interrupt.EventRequested)
	}
}

// TestAReentryKeyNamesOneInterrupt: the same key at another node or for another kind is 409
// key_reused, whose problem names the interrupt's node, and appends nothing, while the
// interrupt is pending and once resolved; at its node for its kind it replays (200).
func TestAReentryKeyNamesOneInterrupt(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	custom := example(t, "custom")
	first := s.mustRequest(t, "r1", "n1", custom)
	otherKind := strings.Replace(example(t, "external-event"), `"await-payment-pi_3QX"`, `"robot-arm-calibrated"`, 1)
	for _, resolved := range []bool{false, true} {
		if resolved {
			if r := s.resolve(t, approver, "r1", "n1", `{}`); r.Status != 200 {
				t.Fatalf("resolve: %d %s", r.Status, r.Body)
			}
		}
		commits := len(s.commits(t, "acme", "r1"))
		for _, c := range []struct {
			name, node, payload string
			status              int
			code                interrupt.Code
		}{
			{"its node and kind", "n1", custom, 200, ""},
			{"another node", "n2", custom, 409, interrupt.CodeKeyReused},
			{"another kind", "n1", otherKind, 409, interrupt.CodeKeyReused},
			{"another node and kind", "n2", otherKind, 409, interrupt.CodeKeyReused},
		} {
			r := s.request(t, engine, "r1", c.node, c.payload)
			if c.code == "" {
				var v host.InterruptView
				r.decode(t, &v)
				if r.Status != 200 || v.InterruptID != first.InterruptID {
					t.Errorf("resolved %v, %s: %d %s, want the first interrupt again", resolved, c.name, r.Status, r.Body)
				}
				continue
			}
			if p := r.problem(t); r.Status != c.status || p.Code != c.code || !strings.Contains(p.Detail, "node n1") {
				t.Errorf("resolved %v, %s: %d %s, want %d %s naming node n1", resolved, c.name, r.Status, r.Body, c.status, c.code)
			}
		}
		if n := len(s.commits(t, "acme", "r1")); n != commits {
			t.Errorf("resolved %v: %d commits after the repeats, want %d", resolved, n, commits)
		}
	}
}

const helperEnv = "APIGW_TEST_HELPER"

// helper re-runs this test binary as a separate process that requests payload once over table
// and prints the answer.
func helper(t *testing.T, table, run, node, payload string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "HELPER_TABLE="+table, "HELPER_RUN="+run, "HELPER_NODE="+node, "HELPER_PAYLOAD="+payload)
	return cmd.Output()
}

func helperProcess() int {
	// A keyring of its own: the requests it sends ask for no token.
	keys := testkeys.Static{ActiveKid: "helper", Keys: map[string][]byte{"helper": make([]byte, 32)}}
	s, err := build(localaws.DynamoDB(), os.Getenv("HELPER_TABLE"), testclock.New(time.Now()), keys)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r, err := invokeErr(s.fn("request-interrupt"), requestCall(engine, os.Getenv("HELPER_RUN"), os.Getenv("HELPER_NODE"), os.Getenv("HELPER_PAYLOAD")))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var v host.InterruptView
	_ = json.Unmarshal(r.Body, &v)
	out, _ := json.Marshal(map[string]any{"Status": r.Status, "View": v})
	fmt.Println(string(out))
	return 0
}

func TestRequestRefusesAnUnreachableQuorum(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	payload := `{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"],"requiredApprovals":3,"approversList":["alice","bob"]}}`
	r := s.request(t, engine, "r1", "n1", payload)
	if r.Status != 400 || !hasPath(r.problem(t), "/payload/data/requiredApprovals") {
		t.Errorf("3 approvals from 2 approvers: %d %s", r.Status, r.Body)
	}
	// The list binds beside the group too: three approvals still need three listed principals.
	withGroups := strings.Replace(payload, `"approversList"`, `"approverGroupRefs":["finance"],"approversList"`, 1)
	if r := s.request(t, engine, "r1", "n1", withGroups); r.Status != 400 || !hasPath(r.problem(t), "/payload/data/requiredApprovals") {
		t.Errorf("3 approvals from 2 approvers and a group: %d %s", r.Status, r.Body)
	}
}

// TestConcurrentRequestsOfOneKey: a run that replays its way to the same interrupt from many
// processes at once suspends once: one 201, the rest 200 with the same interrupt, one
// interrupt.requested.
func TestConcurrentRequestsOfOneKey(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	for round := range 10 {
		run := fmt.Sprintf("replay-%d", round)
		const callers = 16
		views := make([]host.InterruptView, callers)
		statuses := make([]int, callers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				<-start
				r, err := invokeErr(s.fn("request-interrupt"), requestCall(engine, run, "n1", example(t, "clarification")))
				if err != nil {
					t.Error(err)
					return
				}
				statuses[i] = r.Status
				_ = json.Unmarshal(r.Body, &views[i])
			})
		}
		close(start)
		wg.Wait()
		created := 0
		for i, st := range statuses {
			switch {
			case st == 201:
				created++
			case st != 200:
				t.Errorf("round %d caller %d: %d", round, i, st)
			}
			if views[i].InterruptID != views[0].InterruptID || views[i].Seq != 1 {
				t.Errorf("round %d caller %d: %+v, want interrupt %s at seq 1", round, i, views[i], views[0].InterruptID)
			}
		}
		if created != 1 {
			t.Errorf("round %d: %d callers created the interrupt", round, created)
		}
		if n := len(s.commits(t, "acme", run)); n != 1 {
			t.Errorf("round %d: %d commits", round, n)
		}
	}
}

// TestConversationIdsAreTenantUnique: one run of a tenant owns a conversation; another run of
// the tenant is refused it, another tenant is not; a claim left by a run that never committed is
// taken over once it is older than the grace period.
func TestConversationIdsAreTenantUnique(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	start, exchange := example(t, "conversation.start"), example(t, "conversation.exchange")
	s.mustRequest(t, "run-a", "talk", start)
	r := s.request(t, engine, "run-b", "talk", start)
	if r.Status != 409 || r.problem(t).Code != interrupt.CodeConflict {
		t.Fatalf("another run starts conv-7: %d %s", r.Status, r.Body)
	}
	if r := s.request(t, engine, "run-b", "turn", exchange); r.Status != 409 {
		t.Errorf("another run exchanges on conv-7: %d %s", r.Status, r.Body)
	}
	if n := len(s.commits(t, "acme", "run-b")); n != 0 {
		t.Errorf("refused conversations wrote %d commits", n)
	}
	s.resolve(t, approver, "run-a", "talk", `{}`)
	s.mustRequest(t, "run-a", "turn", exchange)
	if r := s.request(t, intruder, "run-b", "talk", start); r.Status != 201 {
		t.Errorf("another tenant's conv-7: %d %s", r.Status, r.Body)
	}

	ctx := context.Background()
	stale := strings.ReplaceAll(start, "conv-7", "conv-stale")
	if _, err := s.log.ClaimConversation(ctx, runlog.ConversationClaim{Tenant: "acme", ConversationID: "conv-stale", RunID: "crashed-run", At: s.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if r := s.request(t, engine, "run-c", "talk", stale); r.Status != 409 {
		t.Errorf("a fresh claim of a run that has not committed yet: %d %s", r.Status, r.Body)
	}
	s.clock.Advance(host.ClaimGrace)
	if r := s.request(t, engine, "run-c", "talk", stale); r.Status != 201 {
		t.Errorf("a stale claim: %d %s", r.Status, r.Body)
	}
	if r := s.request(t, engine, "run-d", "talk", stale); r.Status != 409 {
		t.Errorf("after the take-over: %d %s", r.Status, r.Body)
	}
}
