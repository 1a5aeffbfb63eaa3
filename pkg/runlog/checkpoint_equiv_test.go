package runlog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// TestCheckpointsAreTheFold: what the fold knows of a run is what a checkpoint keeps. For long
// scripts of every event the fold reads, and every prefix of each, resuming from the prefix's
// checkpoint and folding the rest gives, byte for byte, the checkpoint of folding everything,
// and the same pending interrupts, every field (what derives from the kept ones too: a field
// the fold sets that a checkpoint dropped would differ here).
func TestCheckpointsAreTheFold(t *testing.T) {
	t.Parallel()
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			commits := script(rand.New(rand.NewPCG(seed, 43)), 120)
			whole, err := runlog.Fold(commits)
			if err != nil {
				t.Fatal(err)
			}
			want := checkpointOf(t, whole)
			for i := range commits {
				prefix, err := runlog.Fold(commits[:i+1])
				if err != nil {
					t.Fatal(err)
				}
				cp, _, err := prefix.Checkpoint()
				if err != nil {
					t.Fatal(err)
				}
				var kept runlog.Checkpoint // as a store keeps it: encoded, read back
				if err := json.Unmarshal(checkpointOf(t, prefix), &kept); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(checkpointOf(t, prefix), mustMarshal(t, cp)) {
					t.Fatalf("commit %d: a checkpoint is not its own encoding", i+1)
				}
				resumed, err := runlog.Resume(&kept, commits[i+1:])
				if err != nil {
					t.Fatalf("resuming after commit %d: %v", i+1, err)
				}
				if got := checkpointOf(t, resumed); !bytes.Equal(got, want) {
					t.Fatalf("resumed after commit %d:\n%s\nfolded whole:\n%s", i+1, got, want)
				}
				for _, in := range whole.Pending(t0) {
					if got, want := mustMarshal(t, resumed.ByID(in.ID)), mustMarshal(t, in); !bytes.Equal(got, want) {
						t.Fatalf("resumed after commit %d, interrupt %s is\n%s\nfolded whole:\n%s", i+1, in.ID, got, want)
					}
				}
			}
		})
	}
}

func checkpointOf(t *testing.T, s *runlog.State) []byte {
	t.Helper()
	cp, _, err := s.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	return mustMarshal(t, cp)
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := runlog.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// script is a run's log of n commits, drawn by r: interrupts of every kind requested with
// displays, follow-ups and ref kinds, approvals voted on and asked about, reminders,
// escalations, resolutions, redemptions, expiries, configurations and agent decisions,
// idempotency records.
func script(r *rand.Rand, n int) []runlog.Commit {
	var commits []runlog.Commit
	var pending, redeemed []string
	kinds := map[string]interrupt.Kind{}
	people := []string{"alice", "bob", "carol", "dave"}
	next := 0
	ev := func(typ, node, id string, p any) runlog.Event {
		e, err := runlog.NewEvent(typ, node, id, p)
		if err != nil {
			panic(err)
		}
		return runlog.Commit{Events: []runlog.Event{e}}.Stored().Events[0]
	}
	for seq := int64(1); seq <= int64(n); seq++ {
		c := runlog.Commit{Seq: seq, ID: fmt.Sprint("c", seq), At: t0.Add(time.Duration(seq) * time.Second), By: people[r.IntN(len(people))]}
		if r.IntN(5) == 0 {
			c.Idem = &runlog.Idem{Key: fmt.Sprint("sub:", c.By, ":k", seq), Fingerprint: "f", Response: json.RawMessage(`{"ok":true}`)}
		}
		node := func(id string) string { return "n-" + id }
		switch op := r.IntN(11); {
		case len(pending) == 0 || op < 3:
			next++
			id := fmt.Sprint("int_", next)
			kind := []interrupt.Kind{interrupt.KindApproval, interrupt.KindApproval, interrupt.KindClarification, interrupt.KindLowConfidence, interrupt.KindExternalEvent}[r.IntN(5)]
			data := `{}`
			switch kind {
			case interrupt.KindApproval:
				data = fmt.Sprintf(`{"actions":["accept","reject","ask"],"requiredApprovals":%d,"approversList":["alice","bob","carol"],"approverGroupRefs":["finance"],"audience":["alice","pager"],"title":"t%d \u2028"}`, 1+r.IntN(3), next)
			case interrupt.KindClarification:
				data = `{"questions":[{"id":"q"}]}`
			case interrupt.KindLowConfidence:
				data = `{"agentId":"agent-1"}`
			}
			raw := fmt.Sprintf(`{"kind":%q,"key":"k%d","data":%s,"timeoutMs":%d}`, kind, next, data, 1000*(1+r.IntN(500)))
			var p interrupt.Payload
			if err := json.Unmarshal([]byte(raw), &p); err != nil {
				panic(err)
			}
			with := runlog.With{Display: &interrupt.Display{RequesterName: "Ops", Audience: []string{"dave"}}}
			if kind == interrupt.KindApproval {
				with.ToolCall = &interrupt.ToolCall{Name: "issue_refund", Arguments: json.RawMessage(`{"order":"4471"}`)}
			}
			if r.IntN(2) == 0 {
				with.FollowUp = &interrupt.FollowUp{Reminders: &interrupt.Reminders{AfterMs: 60000, Count: 2}}
				with.RefKinds = []string{interrupt.RefPrincipal}
				with.EndsRun = true
			}
			c.Events = append(c.Events, runlog.Commit{Events: []runlog.Event{runlog.Requested(node(id), id, with, p, json.RawMessage(raw))}}.Stored().Events[0])
			pending, kinds[id] = append(pending, id), kind
		default:
			i := r.IntN(len(pending))
			id := pending[i]
			closed := false
			switch op {
			case 3, 4:
				if kinds[id] == interrupt.KindApproval {
					c.Events = append(c.Events, ev(interrupt.EventVoted, node(id), id, interrupt.Vote{NodeID: node(id), InterruptID: id, Principal: c.By, Action: interrupt.ActionAccept,
						ResumeValue: json.RawMessage(`{"action":"accept"}`), Eligibility: interrupt.Eligibility{Via: "principal", Ref: c.By}, Tally: interrupt.Tally{Approvals: 1, Required: 2}}))
				}
			case 5:
				if kinds[id] == interrupt.KindApproval {
					c.Events = append(c.Events, ev(interrupt.EventAsked, node(id), id, interrupt.Asked{NodeID: node(id), InterruptID: id, Principal: c.By, ResumeValue: json.RawMessage(`{"action":"ask","feedback":"why?"}`)}))
				}
			case 6:
				c.Events = append(c.Events, ev(interrupt.EventReminded, node(id), id, interrupt.Reminded{NodeID: node(id), InterruptID: id, Reminder: 1 + r.IntN(2), Recipients: []interrupt.Ref{{Kind: "principal", Ref: "bob"}}}),
					ev(interrupt.EventEscalated, node(id), id, interrupt.Escalated{NodeID: node(id), InterruptID: id, To: []interrupt.Ref{{Kind: "group", Ref: "ops"}}}))
			case 7:
				c.Events = append(c.Events, ev(interrupt.EventResolved, node(id), id, interrupt.Resolved{NodeID: node(id), InterruptID: id, Kind: kinds[id], ResumeValue: json.RawMessage(`{"action":"accept","decidedBy":"someone"}`)}))
				if kinds[id] == interrupt.KindApproval && r.IntN(2) == 0 {
					redeemed = append(redeemed, id)
				}
				closed = true
			case 10:
				// A receipt is redeemed in a commit after its interrupt closed, as the host
				// records it: the interrupt may be in the archive by then.
				if len(redeemed) > 0 {
					id := redeemed[0]
					redeemed = redeemed[1:]
					c.Events = append(c.Events, ev(interrupt.EventReceiptRedeemed, node(id), id, interrupt.Redeemed{NodeID: node(id), InterruptID: id, Name: "issue_refund", By: c.By}))
				}
			case 8:
				c.By = ""
				c.Events = append(c.Events, ev(interrupt.EventExpired, node(id), id, interrupt.Expired{NodeID: node(id), InterruptID: id}))
				closed = true
			case 9:
				c.Events = append(c.Events, ev(interrupt.EventRunConfigured, "", "", interrupt.Configured{EscalationThreshold: r.Float64()}),
					ev(interrupt.EventAgentDecided, "", "", interrupt.AgentDecided{Key: fmt.Sprint("d", seq)}))
			}
			if closed {
				pending = append(pending[:i], pending[i+1:]...)
			}
		}
		if len(c.Events) == 0 {
			c.Events = append(c.Events, ev(interrupt.EventRunConfigured, "", "", interrupt.Configured{EscalationThreshold: 0.5}))
		}
		commits = append(commits, c)
	}
	return commits
}
