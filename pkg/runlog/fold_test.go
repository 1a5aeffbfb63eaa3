package runlog_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func requested(seq int64, node, id, key string, kind interrupt.Kind, timeoutMs int64) runlog.Commit {
	p := fmt.Sprintf(`{"kind":%q,"key":%q,"data":{}`, kind, key)
	if timeoutMs > 0 {
		p += fmt.Sprintf(`,"timeoutMs":%d`, timeoutMs)
	}
	p += "}"
	return runlog.Commit{Seq: seq, ID: fmt.Sprintf("c%d", seq), At: t0.Add(time.Duration(seq) * time.Second), Events: []runlog.Event{
		{Type: interrupt.EventRequested, NodeID: node, InterruptID: id, Payload: json.RawMessage(p)},
	}}
}

func resolved(seq int64, node, id, value string) runlog.Commit {
	p, _ := json.Marshal(interrupt.Resolved{NodeID: node, InterruptID: id, ResumeValue: json.RawMessage(value)})
	return runlog.Commit{Seq: seq, At: t0.Add(time.Duration(seq) * time.Second), Events: []runlog.Event{
		{Type: interrupt.EventResolved, NodeID: node, InterruptID: id, Payload: p},
		{Type: "approval.resolved", NodeID: node, InterruptID: id, Payload: p},
	}}
}

func ended(seq int64, typ string) runlog.Commit {
	return runlog.Commit{Seq: seq, At: t0.Add(time.Duration(seq) * time.Second), Events: []runlog.Event{
		{Type: typ, Payload: json.RawMessage(`{"by":"alice"}`)},
	}}
}

func TestFold(t *testing.T) {
	late := t0.Add(time.Hour)
	tests := []struct {
		name        string
		commits     []runlog.Commit
		now         time.Time
		wantStatus  interrupt.RunStatus
		wantNode    string
		wantPending int
		// wantInterrupt is the status of the interrupt with key "k1".
		wantInterrupt interrupt.Status
	}{
		{"empty run", nil, t0, interrupt.RunRunning, "", 0, ""},
		{"approval pending", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindApproval, 0)}, t0, interrupt.RunWaitingApproval, "n1", 1, interrupt.StatusPending},
		{"clarification pending", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindClarification, 0)}, t0, interrupt.RunWaitingInput, "n1", 1, interrupt.StatusPending},
		{"conversation pending", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindConversationExchange, 0)}, t0, interrupt.RunWaitingInput, "n1", 1, interrupt.StatusPending},
		{"low-confidence pending", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindLowConfidence, 0)}, t0, interrupt.RunWaitingInput, "n1", 1, interrupt.StatusPending},
		{"external pending", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindExternalEvent, 0)}, t0, interrupt.RunWaitingExternal, "n1", 1, interrupt.StatusPending},
		{"custom pending", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindCustom, 0)}, t0, interrupt.RunWaitingExternal, "n1", 1, interrupt.StatusPending},
		{"resolved", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindApproval, 0), resolved(2, "n1", "i1", `{"action":"accept"}`)}, t0, interrupt.RunRunning, "", 0, interrupt.StatusResolved},
		{"oldest pending decides", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindExternalEvent, 0), requested(2, "n2", "i2", "k2", interrupt.KindApproval, 0)}, t0, interrupt.RunWaitingExternal, "n1", 2, interrupt.StatusPending},
		{"deadline not reached", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindApproval, 60_000)}, t0.Add(60 * time.Second), interrupt.RunWaitingApproval, "n1", 1, interrupt.StatusPending},
		{"deadline reached", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindApproval, 60_000)}, t0.Add(61 * time.Second), interrupt.RunRunning, "", 0, interrupt.StatusExpired},
		{"cancelled run", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindApproval, 0), ended(2, interrupt.EventRunCancelled)}, t0, interrupt.RunCancelled, "", 0, interrupt.StatusCancelled},
		{"completed run", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindApproval, 0), ended(2, interrupt.EventRunCompleted)}, late, interrupt.RunCompleted, "", 0, interrupt.StatusCancelled},
		{"resolved stays resolved past deadline", []runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindApproval, 1000), resolved(2, "n1", "i1", `1`)}, late, interrupt.RunRunning, "", 0, interrupt.StatusResolved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := runlog.Fold(tt.commits)
			if err != nil {
				t.Fatal(err)
			}
			snap := st.Snapshot("r1", tt.now)
			if snap.Status != tt.wantStatus || snap.CurrentNodeID != tt.wantNode || len(snap.Pending) != tt.wantPending {
				t.Errorf("snapshot = %+v, want status %s node %q pending %d", snap, tt.wantStatus, tt.wantNode, tt.wantPending)
			}
			if snap.LastSeq != int64(len(tt.commits)) {
				t.Errorf("lastSeq = %d, want %d", snap.LastSeq, len(tt.commits))
			}
			in := st.ByKey("k1")
			switch {
			case tt.wantInterrupt == "" && in != nil:
				t.Errorf("key k1 found in an empty run")
			case tt.wantInterrupt != "" && (in == nil || in.StatusAt(tt.now) != tt.wantInterrupt):
				t.Errorf("interrupt k1 = %+v, want status %s", in, tt.wantInterrupt)
			}
		})
	}
}

func TestFoldKeepsResumeValueAndNodeHistory(t *testing.T) {
	st, err := runlog.Fold([]runlog.Commit{
		requested(1, "n1", "i1", "k1", interrupt.KindConversationExchange, 0),
		resolved(2, "n1", "i1", `{"answer":42}`),
		requested(3, "n1", "i2", "k2", interrupt.KindConversationExchange, 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(st.ByKey("k1").ResumeValue); got != `{"answer":42}` {
		t.Errorf("resumeValue = %s", got)
	}
	if latest := st.LatestAt("n1"); latest.ID != "i2" {
		t.Errorf("latest at n1 = %s, want i2", latest.ID)
	}
	if st.CommitIDs["c3"] != 3 {
		t.Errorf("commit ids = %v", st.CommitIDs)
	}
}

func TestFoldRefusesBrokenLogs(t *testing.T) {
	tests := []struct {
		name    string
		commits []runlog.Commit
	}{
		{"gap", []runlog.Commit{requested(1, "n", "i1", "k1", interrupt.KindCustom, 0), requested(3, "n2", "i2", "k2", interrupt.KindCustom, 0)}},
		{"repeat", []runlog.Commit{requested(1, "n", "i1", "k1", interrupt.KindCustom, 0), requested(1, "n2", "i2", "k2", interrupt.KindCustom, 0)}},
		{"resolve of unknown interrupt", []runlog.Commit{resolved(1, "n", "nope", "1")}},
		{"unreadable payload", []runlog.Commit{{Seq: 1, Events: []runlog.Event{{Type: interrupt.EventRequested, Payload: json.RawMessage(`[`)}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := runlog.Fold(tt.commits); err == nil {
				t.Fatal("folded a broken log")
			}
		})
	}
}

func TestApplyLeavesStateUnchangedOnError(t *testing.T) {
	st, err := runlog.Fold([]runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindCustom, 0)})
	if err != nil {
		t.Fatal(err)
	}
	bad := runlog.Commit{Seq: 2, Events: []runlog.Event{
		{Type: interrupt.EventRequested, NodeID: "n2", InterruptID: "i2", Payload: json.RawMessage(`{"kind":"custom","key":"k2","data":{}}`)},
		{Type: interrupt.EventResolved, Payload: json.RawMessage(`{"nodeId":"n9","interruptId":"nope"}`)},
	}}
	if err := st.Apply(bad); err == nil {
		t.Fatal("applied a commit resolving an unknown interrupt")
	}
	if st.Seq != 1 || st.ByKey("k2") != nil {
		t.Errorf("state changed by a refused commit: seq %d, k2 %v", st.Seq, st.ByKey("k2"))
	}
}

// TestEnvelopes: readers see the same events whether a commit was stored in the current form
// (each value once, aliases derived) or in the earlier one (aliases and vote values stored).
func TestEnvelopes(t *testing.T) {
	at := t0.Add(7 * time.Second)
	ev := func(typ, payload string) runlog.Event {
		return runlog.Event{Type: typ, NodeID: "n1", InterruptID: "i1", Payload: json.RawMessage(payload)}
	}
	const (
		approval = `{"kind":"approval","key":"k","data":{"title":"<b>&</b>"}}`
		value    = `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","feedback":"<ok> & é \"\\"}`
		vote     = `{"nodeId":"n1","interruptId":"i1","principal":"alice","action":"accept","eligibility":{"via":"open"},"tally":{"approvals":1,"rejections":0,"required":1}}`
		fullVote = `{"nodeId":"n1","interruptId":"i1","principal":"alice","action":"accept","resumeValue":` + value + `,"eligibility":{"via":"open"},"tally":{"approvals":1,"rejections":0,"required":1}}`
		resolved = `{"nodeId":"n1","interruptId":"i1","kind":"approval","resumeValue":` + value + `}`
		answered = `{"nodeId":"n1","interruptId":"i1","kind":"clarification","resumeValue":{"answers":{}}}`
		custom   = `{"nodeId":"n1","interruptId":"i1","kind":"custom","resumeValue":null}`
	)
	type read struct{ typ, payload string }
	tests := []struct {
		name   string
		stored []runlog.Event
		want   []read
	}{
		{"approval requested", []runlog.Event{ev(interrupt.EventRequested, approval)},
			[]read{{interrupt.EventRequested, approval}, {"approval.requested", approval}}},
		{"approval requested, earlier form", []runlog.Event{ev(interrupt.EventRequested, approval), ev("approval.requested", approval)},
			[]read{{interrupt.EventRequested, approval}, {"approval.requested", approval}}},
		{"releasing vote", []runlog.Event{ev(interrupt.EventVoted, vote), ev(interrupt.EventResolved, resolved)},
			[]read{{interrupt.EventVoted, fullVote}, {interrupt.EventResolved, resolved}, {"approval.resolved", resolved}}},
		{"releasing vote, earlier form", []runlog.Event{ev(interrupt.EventVoted, fullVote), ev(interrupt.EventResolved, resolved), ev("approval.resolved", resolved)},
			[]read{{interrupt.EventVoted, fullVote}, {interrupt.EventResolved, resolved}, {"approval.resolved", resolved}}},
		{"counted vote", []runlog.Event{ev(interrupt.EventVoted, fullVote)}, []read{{interrupt.EventVoted, fullVote}}},
		{"clarification resolved", []runlog.Event{ev(interrupt.EventResolved, answered)},
			[]read{{interrupt.EventResolved, answered}, {"clarification.resolved", answered}}},
		{"custom resolved", []runlog.Event{ev(interrupt.EventResolved, custom)}, []read{{interrupt.EventResolved, custom}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			envs := runlog.Commit{Seq: 7, At: at, Events: tt.stored}.Envelopes("r1")
			if len(envs) != len(tt.want) {
				t.Fatalf("read %d events %+v, want %d", len(envs), envs, len(tt.want))
			}
			for i, e := range envs {
				if e.Type != tt.want[i].typ || string(e.Payload) != tt.want[i].payload {
					t.Errorf("event %d = %s %s, want %s %s", i, e.Type, e.Payload, tt.want[i].typ, tt.want[i].payload)
				}
				if e.Seq != 7 || e.Index != i || e.RunID != "r1" || e.NodeID != "n1" || e.InterruptID != "i1" || e.At != "2026-11-30T09:00:07.000Z" {
					t.Errorf("envelope %d = %+v", i, e)
				}
			}
		})
	}
}

// BenchmarkFold folds a 100-commit log: 50 interrupts requested and resolved, the state every
// write and read starts from.
func BenchmarkFold(b *testing.B) {
	var commits []runlog.Commit
	for i := int64(1); i <= 50; i++ {
		node, id, key := fmt.Sprintf("n%d", i), fmt.Sprintf("i%d", i), fmt.Sprintf("k%d", i)
		commits = append(commits, requested(2*i-1, node, id, key, interrupt.KindApproval, 60_000), resolved(2*i, node, id, `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := runlog.Fold(commits); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFoldOfOwnCommits: the fold of commits as their writer built them (each payload's Go value
// at hand) and of the same commits read back from a store (parsed) is one state, and a
// checkpoint of either is the same bytes.
func TestFoldOfOwnCommits(t *testing.T) {
	t.Parallel()
	must := func(e runlog.Event, err error) runlog.Event {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	raw := json.RawMessage(`{"kind":"approval","key":"k","timeoutMs":60000,"data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept","ask"],"requiredApprovals":2}}`)
	var p interrupt.Payload
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	commits := []runlog.Commit{
		{Seq: 1, ID: "c1", At: t0, By: "engine", Events: []runlog.Event{runlog.Requested("n", "int_1", runlog.With{}, p, raw)}},
		{Seq: 2, ID: "c2", At: t0.Add(time.Second), Events: []runlog.Event{
			must(runlog.NewEvent(interrupt.EventAsked, "n", "int_1", interrupt.Asked{NodeID: "n", InterruptID: "int_1", Principal: "bob", ResumeValue: json.RawMessage(`{"action":"ask"}`)})),
			must(runlog.NewEvent(interrupt.EventVoted, "n", "int_1", interrupt.Vote{NodeID: "n", InterruptID: "int_1", Principal: "alice", Action: interrupt.ActionAccept, ResumeValue: json.RawMessage(`{"action":"accept"}`)})),
		}},
		{Seq: 3, ID: "c3", At: t0.Add(2 * time.Second), Events: []runlog.Event{
			must(runlog.NewEvent(interrupt.EventRunConfigured, "", "", interrupt.Configured{EscalationThreshold: 0.4, By: "ops"})),
			must(runlog.NewEvent(interrupt.EventAgentDecided, "m", "", interrupt.AgentDecided{NodeID: "m", Key: "d1", AgentID: "a", Confidence: 0.9, Threshold: 0.4})),
		}},
		{Seq: 4, ID: "c4", At: t0.Add(3 * time.Second), Events: []runlog.Event{
			must(runlog.NewEvent(interrupt.EventResolved, "n", "int_1", interrupt.Resolved{NodeID: "n", InterruptID: "int_1", Kind: interrupt.KindApproval, ResumeValue: json.RawMessage(`{"action":"accept"}`)})),
		}},
	}
	stored := make([]runlog.Commit, len(commits))
	for i, c := range commits {
		stored[i] = c.Stored()
	}
	own, err := runlog.Fold(commits)
	if err != nil {
		t.Fatal(err)
	}
	read, err := runlog.Fold(stored)
	if err != nil {
		t.Fatal(err)
	}
	a, archiveA, errA := own.Checkpoint()
	b, archiveB, errB := read.Checkpoint()
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	ja, _ := json.Marshal([]any{a, archiveA})
	jb, _ := json.Marshal([]any{b, archiveB})
	if string(ja) != string(jb) {
		t.Errorf("the writer's fold %s\nthe reader's %s", ja, jb)
	}
	for _, f := range archiveA {
		if f.Kind == runlog.RefKey && strings.Contains(string(f.Value), `"votes"`) {
			t.Errorf("a closed approval is archived with its votes (its item could outgrow the store's): %s", f.Value)
		}
	}
	if own.Decided("d1") != 3 || *own.Threshold != 0.4 || own.ByKey("k").Recorded() != interrupt.StatusResolved || len(archiveA) == 0 {
		t.Errorf("the fold: decided %d, threshold %v, %s, %d archived", own.Decided("d1"), *own.Threshold, own.ByKey("k").Recorded(), len(archiveA))
	}
}

// TestAsksAreKeptForTheApprovers: each ask is folded with who asked, when (its commit's time)
// and the question, and a checkpoint carries them, so every approver's page can show them.
func TestAsksAreKeptForTheApprovers(t *testing.T) {
	t.Parallel()
	ask := func(seq int64, who, question string) runlog.Commit {
		p, _ := json.Marshal(interrupt.Asked{NodeID: "n1", InterruptID: "i1", Principal: who, ResumeValue: json.RawMessage(`{"action":"ask","feedback":` + strconv.Quote(question) + `}`)})
		return runlog.Commit{Seq: seq, ID: fmt.Sprintf("c%d", seq), At: t0.Add(time.Duration(seq) * time.Second), Events: []runlog.Event{
			{Type: interrupt.EventAsked, NodeID: "n1", InterruptID: "i1", Payload: p},
		}}
	}
	st, err := runlog.Fold([]runlog.Commit{requested(1, "n1", "i1", "k1", interrupt.KindApproval, 0), ask(2, "alice", "Which month?"), ask(3, "bob", "Why <twice>?")})
	if err != nil {
		t.Fatal(err)
	}
	want := []interrupt.Ask{{Principal: "alice", At: t0.Add(2 * time.Second), Question: "Which month?"}, {Principal: "bob", At: t0.Add(3 * time.Second), Question: "Why <twice>?"}}
	if got := st.ByKey("k1").Asked; !reflect.DeepEqual(got, want) {
		t.Fatalf("folded asks %+v, want %+v", got, want)
	}
	cp, _, err := st.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	var stored runlog.Checkpoint
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	resumed, err := runlog.Resume(&stored, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resumed.ByKey("k1").Asked; !reflect.DeepEqual(got, want) {
		t.Errorf("asks after a checkpoint %+v, want %+v", got, want)
	}
}

// TestCountedVotesAreTheEvents: the state's counted votes read as the events' readers read them:
// the vote that released a 2-of-2 with the resolution's value, the first with its own.
func TestCountedVotesAreTheEvents(t *testing.T) {
	vote := func(who, value string) runlog.Event {
		v := interrupt.Vote{NodeID: "n1", InterruptID: "i1", Principal: who, Action: interrupt.ActionAccept, ResumeValue: json.RawMessage(value)}
		p, _ := json.Marshal(v)
		return runlog.Event{Type: interrupt.EventVoted, NodeID: "n1", InterruptID: "i1", Payload: p}
	}
	first, second := `{"action":"accept","feedback":"fine"}`, `{"action":"accept","feedback":"ok too"}`
	release := resolved(3, "n1", "i1", second)
	release.Events = append([]runlog.Event{vote("bob", "")}, release.Events...)
	commits := []runlog.Commit{
		requested(1, "n1", "i1", "k1", interrupt.KindApproval, 0),
		{Seq: 2, At: t0.Add(2 * time.Second), Events: []runlog.Event{vote("alice", first)}},
		release,
	}
	st, err := runlog.Fold(commits)
	if err != nil {
		t.Fatal(err)
	}
	votes := st.ByID("i1").CountedVotes()
	if len(votes) != 2 || string(votes[0].ResumeValue) != first || string(votes[1].ResumeValue) != second {
		t.Errorf("counted votes %+v", votes)
	}
	if len(st.ByID("i1").Votes[1].ResumeValue) != 0 {
		t.Errorf("the state's own releasing vote was given the value: it is kept once")
	}
	var read []string
	for _, c := range commits {
		for _, e := range c.Envelopes("r1") {
			if e.Type == interrupt.EventVoted {
				var v interrupt.Vote
				_ = json.Unmarshal(e.Payload, &v)
				read = append(read, string(v.ResumeValue))
			}
		}
	}
	if len(read) != 2 || read[0] != string(votes[0].ResumeValue) || read[1] != string(votes[1].ResumeValue) {
		t.Errorf("the events read %v, the state %+v", read, votes)
	}
}

// TestASummaryTitlesAClarificationByItsQuestion: a clarification has no title; what the waiting
// index and the inbox list it by is its first question.
func TestASummaryTitlesAClarificationByItsQuestion(t *testing.T) {
	c := runlog.Commit{Seq: 1, ID: "c1", At: t0, Events: []runlog.Event{{Type: interrupt.EventRequested, NodeID: "ask", InterruptID: "i1",
		Payload: json.RawMessage(`{"kind":"clarification","key":"k","data":{"questions":[{"id":"a","question":"Which address?"},{"id":"b","question":"How many?"}]}}`)}}}
	st, err := runlog.Fold([]runlog.Commit{c})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Entry(runlog.Key{Tenant: "acme", RunID: "r1"}).Pending[0].Title; got != "Which address?" {
		t.Errorf("title %q", got)
	}
}
