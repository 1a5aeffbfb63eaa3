package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// voter is an approver's JWT: alice, bob, carol and dave are ordinary approvers; supervisor is
// the local stack's override principal.
func voter(t testing.TB, sub string, groups, roles []string) string {
	t.Helper()
	return jwt(t, devjwt.Token{Subject: sub, Tenant: "acme", Scopes: []string{"approvals:respond", "runs:read"}, Groups: groups, Roles: roles})
}

func approval(data map[string]any) string {
	d := map[string]any{"artifactId": "po-77", "artifactType": "purchase-order", "title": "PO 77",
		"actions": []string{"accept", "reject", "refine", "edit-accept", "ask"}}
	maps.Copy(d, data)
	b, _ := json.Marshal(map[string]any{"kind": "approval", "key": "approve-po-77", "data": d})
	return string(b)
}

func decision(action string) string {
	v := map[string]any{"action": action, "decidedAt": "2026-11-30T09:00:00Z"}
	switch action {
	case "refine":
		v["refineFeedback"] = map[string]any{"scope": "items", "itemIds": []string{"line-2"}, "text": "split it"}
	case "edit-accept":
		v["editedArtifactData"] = map[string]any{"amount": 900}
	}
	b, _ := json.Marshal(map[string]any{"resumeValue": v})
	return string(b)
}

type logEvent struct {
	Seq         int
	Type        string
	InterruptID string
	Payload     json.RawMessage
}

func runEvents(t testing.TB, base, run string) []logEvent {
	t.Helper()
	var page struct{ Events []logEvent }
	call{base: base, method: "GET", path: "/runs/" + run + "/events", bearer: jwt(t, engine)}.must(t).json(t, &page)
	return page.Events
}

func types(evs []logEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// TestApprovalScenarios: quorum 1, 2 and 3; every action; both rejection policies; override on
// and off. Each row gives the answers, the released decision and the events, checked against the
// log.
func TestApprovalScenarios(t *testing.T) {
	type vote struct {
		who, action string
		status      int
	}
	const voted, resolved = "interrupt.voted", "interrupt.voted interrupt.resolved approval.resolved"
	scenarios := []struct {
		name     string
		data     map[string]any
		votes    []vote
		final    string // the released action, "" while pending
		by       string
		events   string
		tallyEnd string
	}{
		{"q1 accept", nil, []vote{{"alice", "accept", 200}}, "accept", "alice", resolved, ""},
		{"q1 reject", nil, []vote{{"alice", "reject", 200}}, "reject", "alice", resolved, ""},
		{"q1 refine", nil, []vote{{"alice", "refine", 200}}, "refine", "alice", resolved, ""},
		{"q1 edit-accept", nil, []vote{{"alice", "edit-accept", 200}}, "edit-accept", "alice", resolved, ""},
		{"q1 ask then accept", nil, []vote{{"alice", "ask", 202}, {"bob", "accept", 200}}, "accept", "bob", "interrupt.asked " + resolved, ""},
		{"q2 two accepts", map[string]any{"requiredApprovals": 2}, []vote{{"alice", "accept", 202}, {"bob", "accept", 200}}, "accept", "bob", voted + " " + resolved, ""},
		{"q2 one vote per principal", map[string]any{"requiredApprovals": 2}, []vote{{"alice", "accept", 202}, {"alice", "accept", 409}, {"alice", "reject", 409}, {"bob", "edit-accept", 200}}, "edit-accept", "bob", voted + " " + resolved, ""},
		{"q2 single-veto", map[string]any{"requiredApprovals": 2}, []vote{{"alice", "accept", 202}, {"bob", "reject", 200}}, "reject", "bob", voted + " " + resolved, ""},
		{"q2 majority needs two rejects", map[string]any{"requiredApprovals": 2, "rejectionPolicy": "majority"}, []vote{{"alice", "reject", 202}, {"bob", "reject", 200}}, "reject", "bob", voted + " " + resolved, ""},
		{"q2 majority outvoted", map[string]any{"requiredApprovals": 2, "rejectionPolicy": "majority"}, []vote{{"alice", "accept", 202}, {"bob", "reject", 202}, {"carol", "accept", 200}}, "accept", "carol", voted + " " + voted + " " + resolved, ""},
		{"q2 pending", map[string]any{"requiredApprovals": 2, "rejectionPolicy": "majority"}, []vote{{"alice", "reject", 202}, {"bob", "ask", 202}}, "", "", voted + " interrupt.asked", "0/1/2"},
		{"q3 majority", map[string]any{"requiredApprovals": 3, "rejectionPolicy": "majority"}, []vote{{"alice", "reject", 202}, {"bob", "accept", 202}, {"carol", "reject", 200}}, "reject", "carol", voted + " " + voted + " " + resolved, ""},
		{"q3 refine exits at once", map[string]any{"requiredApprovals": 3}, []vote{{"alice", "accept", 202}, {"bob", "accept", 202}, {"carol", "refine", 200}}, "refine", "carol", voted + " " + voted + " " + resolved, ""},
		{"q3 ask and three accepts", map[string]any{"requiredApprovals": 3}, []vote{{"dave", "ask", 202}, {"alice", "accept", 202}, {"bob", "edit-accept", 202}, {"carol", "accept", 200}}, "accept", "carol", "interrupt.asked " + voted + " " + voted + " " + resolved, ""},
		{"q2 override releases alone", map[string]any{"requiredApprovals": 2, "overrideBypassesQuorum": true}, []vote{{"supervisor", "accept", 200}}, "accept", "supervisor", resolved, ""},
		{"q3 override rejects alone under majority", map[string]any{"requiredApprovals": 3, "rejectionPolicy": "majority", "overrideBypassesQuorum": true}, []vote{{"supervisor", "reject", 200}}, "reject", "supervisor", resolved, ""},
		{"q2 override off counts once", map[string]any{"requiredApprovals": 2}, []vote{{"supervisor", "accept", 202}, {"alice", "accept", 200}}, "accept", "alice", voted + " " + resolved, ""},
		{"q2 override on, ordinary voters", map[string]any{"requiredApprovals": 2, "overrideBypassesQuorum": true}, []vote{{"alice", "accept", 202}, {"bob", "accept", 200}}, "accept", "bob", voted + " " + resolved, ""},
		{"q1 vote after release", nil, []vote{{"alice", "accept", 200}, {"bob", "reject", 409}}, "accept", "alice", resolved, ""},
	}
	eng := jwt(t, engine)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			run := newRun("vote")
			if a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"gate","payload":`+approval(sc.data)+`}`); a.Status != 201 {
				t.Fatalf("request: %d %s", a.Status, a.Body)
			}
			var last struct {
				Status      string
				ResumeValue map[string]any
				Tally       struct{ Approvals, Rejections, Required int }
			}
			for i, v := range sc.votes {
				a := do(t, "POST", "/runs/"+run+"/interrupts/gate", voter(t, v.who, nil, nil), decision(v.action))
				if a.Status != v.status {
					t.Fatalf("vote %d (%s %s): %d %s, want %d", i, v.who, v.action, a.Status, a.Body, v.status)
				}
				if a.Status < 300 {
					a.json(t, &last)
				}
			}
			evs := runEvents(t, gatewayURL(), run)
			if got := strings.Join(types(evs[2:]), " "); got != sc.events {
				t.Errorf("events %q, want %q", got, sc.events)
			}
			var resolvedValue map[string]any
			for _, e := range evs {
				if e.Type == "interrupt.resolved" {
					var p struct{ ResumeValue map[string]any }
					_ = json.Unmarshal(e.Payload, &p)
					resolvedValue = p.ResumeValue
				}
			}
			switch {
			case sc.final == "" && resolvedValue != nil:
				t.Errorf("released %v, want pending", resolvedValue)
			case sc.final != "" && (resolvedValue["action"] != sc.final || resolvedValue["decidedBy"] != sc.by):
				t.Errorf("released %v, want %s by %s", resolvedValue, sc.final, sc.by)
			}
			if sc.tallyEnd != "" {
				if got := fmt.Sprintf("%d/%d/%d", last.Tally.Approvals, last.Tally.Rejections, last.Tally.Required); got != sc.tallyEnd || last.Status != "pending" {
					t.Errorf("last answer %s tally %s, want pending %s", last.Status, got, sc.tallyEnd)
				}
			}
			var snap struct{ Status string }
			do(t, "GET", "/runs/"+run, eng, "").json(t, &snap)
			if want := map[bool]string{true: "waiting-approval", false: "running"}[sc.final == ""]; snap.Status != want {
				t.Errorf("run is %s, want %s", snap.Status, want)
			}
		})
	}
}

// TestConcurrentVotes: quorum 2, three eligible approvers accept at the same instant, 20 rounds.
// Every round releases once, the log holds at most one vote per principal, and every answer
// agrees with the log.
func TestConcurrentVotes(t *testing.T) {
	eng := jwt(t, engine)
	names := []string{"alice", "bob", "carol"}
	tokens := map[string]string{}
	for _, n := range names {
		tokens[n] = voter(t, n, nil, nil)
	}
	for round := range 20 {
		run := newRun("quorum")
		do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"gate","payload":`+approval(map[string]any{"requiredApprovals": 2, "approversList": names})+`}`)
		statuses := map[string]int{}
		var mu sync.Mutex
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, n := range names {
			wg.Go(func() {
				<-start
				a, err := call{method: "POST", path: "/runs/" + run + "/interrupts/gate", bearer: tokens[n], body: decision("accept")}.send()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				statuses[n] = a.Status
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		evs := runEvents(t, gatewayURL(), run)
		votes := map[string]int{}
		resolvedCount := 0
		for _, e := range evs {
			switch e.Type {
			case "interrupt.voted":
				var v struct{ Principal string }
				_ = json.Unmarshal(e.Payload, &v)
				votes[v.Principal]++
			case "interrupt.resolved":
				resolvedCount++
			}
		}
		if resolvedCount != 1 {
			t.Fatalf("round %d: %d releases", round, resolvedCount)
		}
		count := map[int]int{}
		for _, n := range names {
			st := statuses[n]
			count[st]++
			switch {
			case votes[n] > 1:
				t.Errorf("round %d: %s has %d votes in the log", round, n, votes[n])
			case (st == 200 || st == 202) && votes[n] != 1:
				t.Errorf("round %d: %s was answered %d but the log holds no vote", round, n, st)
			case st == 409 && votes[n] != 0:
				t.Errorf("round %d: %s was refused but the log counts its vote", round, n)
			case st != 200 && st != 202 && st != 409:
				t.Errorf("round %d: %s was answered %d", round, n, st)
			}
		}
		if count[200] != 1 || count[202] != 1 || count[409] != 1 {
			t.Errorf("round %d: answers %v, want one each of 200, 202, 409", round, count)
		}
	}
}

func TestEligibility(t *testing.T) {
	eng := jwt(t, engine)
	request := func(t *testing.T, base string, data map[string]any) string {
		t.Helper()
		run := newRun("elig")
		if a := (call{base: base, method: "POST", path: "/runs/" + run + "/interrupts", bearer: eng, body: `{"nodeId":"gate","payload":` + approval(data) + `}`}).must(t); a.Status != 201 {
			t.Fatalf("request: %d %s", a.Status, a.Body)
		}
		return run
	}
	vote := func(t *testing.T, base, run, bearer string, want int) answer {
		t.Helper()
		before := len(runEvents(t, base, run))
		a := call{base: base, method: "POST", path: "/runs/" + run + "/interrupts/gate", bearer: bearer, body: decision("accept")}.must(t)
		if a.Status != want {
			t.Fatalf("%d %s, want %d", a.Status, a.Body, want)
		}
		if want == 403 {
			if !strings.Contains(string(a.Body), `"code":"approver_not_eligible"`) {
				t.Errorf("403 body %s", a.Body)
			}
			if after := len(runEvents(t, base, run)); after != before {
				t.Errorf("a refused vote wrote %d events", after-before)
			}
		}
		return a
	}
	eligibilityOf := func(t *testing.T, base, run string) string {
		t.Helper()
		for _, e := range runEvents(t, base, run) {
			if e.Type == "interrupt.voted" {
				var v struct{ Eligibility struct{ Via, Ref string } }
				_ = json.Unmarshal(e.Payload, &v)
				return v.Eligibility.Via + ":" + v.Eligibility.Ref
			}
		}
		return ""
	}
	stack := gatewayURL()

	t.Run("approversList", func(t *testing.T) {
		run := request(t, stack, map[string]any{"approversList": []string{"alice", "bob"}})
		vote(t, stack, run, voter(t, "carol", []string{"finance"}, []string{"manager"}), 403)
		vote(t, stack, run, voter(t, "alice", nil, nil), 200)
		if got := eligibilityOf(t, stack, run); got != "principal:alice" {
			t.Errorf("recorded %s", got)
		}
	})
	t.Run("audience is not eligibility", func(t *testing.T) {
		run := request(t, stack, map[string]any{"approversList": []string{"alice"}, "audience": []string{"carol"}})
		vote(t, stack, run, voter(t, "carol", nil, nil), 403)
		open := request(t, stack, map[string]any{"audience": []string{"carol"}})
		vote(t, stack, open, voter(t, "dave", nil, nil), 200)
		if got := eligibilityOf(t, stack, open); got != "open:" {
			t.Errorf("recorded %s", got)
		}
	})
	for _, kind := range []string{"group", "role"} {
		t.Run(kind+" refs", func(t *testing.T) {
			field, member, outsider := "approverGroupRefs", voter(t, "dave", []string{"finance"}, nil), voter(t, "erin", []string{"sales"}, []string{"clerk"})
			if kind == "role" {
				field, member = "approverRoleRefs", voter(t, "dave", nil, []string{"manager", "finance"})
			}
			run := request(t, stack, map[string]any{field: []string{"finance"}})
			vote(t, stack, run, outsider, 403)
			vote(t, stack, run, member, 200)
			if got := eligibilityOf(t, stack, run); got != kind+":finance" {
				t.Errorf("recorded %s", got)
			}
		})
	}
	t.Run("a recorded group decision is history", func(t *testing.T) {
		run := request(t, stack, map[string]any{"approverGroupRefs": []string{"finance"}, "requiredApprovals": 2})
		vote(t, stack, run, voter(t, "dave", []string{"finance"}, nil), 202)
		// dave leaves finance: his vote stands as recorded, and he cannot vote again.
		daveNow := voter(t, "dave", []string{"sales"}, nil)
		var page struct{ Events []logEvent }
		call{base: stack, method: "GET", path: "/runs/" + run + "/events", bearer: daveNow}.must(t).json(t, &page)
		if got := eligibilityOf(t, stack, run); got != "group:finance" || len(page.Events) != 3 {
			t.Fatalf("read back %s, %d events", got, len(page.Events))
		}
		vote(t, stack, run, daveNow, 403)
		a := vote(t, stack, run, voter(t, "frank", []string{"finance"}, nil), 200)
		var res struct{ Tally struct{ Approvals int } }
		a.json(t, &res)
		if res.Tally.Approvals != 2 {
			t.Errorf("dave's recorded vote was not counted: tally %+v", res.Tally)
		}
	})
	t.Run("tokens", func(t *testing.T) {
		run := newRun("elig-token")
		do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"gate","payload":`+approval(map[string]any{"approversList": []string{"alice"}})+`}`)
		mailer := jwt(t, devjwt.Token{Subject: "mailer", Tenant: "acme", Scopes: []string{"tokens:delegate"}})
		for _, body := range []string{`{"intent":"resolve"}`, `{"intent":"resolve","principal":"bob"}`} {
			if a := do(t, "POST", "/runs/"+run+"/interrupts/gate/tokens", mailer, body); a.Status != 403 || !strings.Contains(string(a.Body), `"approver_not_eligible"`) {
				t.Errorf("a token %s for an approval of alice: %d %s", body, a.Status, a.Body)
			}
		}
		var alice tokenView
		do(t, "POST", "/runs/"+run+"/interrupts/gate/tokens", mailer, `{"intent":"resolve","principal":"alice"}`).json(t, &alice)
		if a := do(t, "POST", "/interrupts/"+alice.Token, "", decision("accept")); a.Status != 200 {
			t.Errorf("token for alice: %d %s", a.Status, a.Body)
		}
	})

	// The same functions configured without group and role ref kinds: those fields are ignored.
	principalOnly := serveGateway(t, map[string]string{"RefKinds": "principal"})
	t.Run("refKinds without group and role", func(t *testing.T) {
		run := request(t, principalOnly, map[string]any{"approverGroupRefs": []string{"finance"}, "approverRoleRefs": []string{"manager"}})
		vote(t, principalOnly, run, voter(t, "erin", []string{"sales"}, nil), 200)
		if got := eligibilityOf(t, principalOnly, run); got != "open:" {
			t.Errorf("recorded %s", got)
		}
		listed := request(t, principalOnly, map[string]any{"approverGroupRefs": []string{"finance"}, "approversList": []string{"alice"}})
		vote(t, principalOnly, listed, voter(t, "dave", []string{"finance"}, nil), 403)
		var inspect []byte
		var created struct{ Tokens []tokenView }
		call{base: principalOnly, method: "POST", path: "/runs/" + newRun("x") + "/interrupts", bearer: eng, body: `{"nodeId":"gate","payload":` + approval(map[string]any{"approverGroupRefs": []string{"finance"}}) + `,"token":{"intent":"inspect"}}`}.must(t).json(t, &created)
		inspect = call{base: principalOnly, method: "GET", path: "/interrupts/" + created.Tokens[0].Token}.must(t).Body
		if !strings.Contains(string(inspect), `"approverGroupRefs":["finance"]`) {
			t.Errorf("inspect does not return the ref field unchanged: %s", inspect)
		}
	})

	t.Run("discovery follows the configuration", func(t *testing.T) {
		sch, err := schema.Load()
		if err != nil {
			t.Fatal(err)
		}
		for base, want := range map[string][]string{stack: {"principal", "group", "role"}, principalOnly: {"principal"}} {
			a := call{base: base, method: "GET", path: "/.well-known/interrupt-host"}.must(t)
			var doc struct {
				Capabilities   []string
				Interrupt      json.RawMessage
				Implementation struct{ Name, Version string }
			}
			a.json(t, &doc)
			if doc.Implementation.Name != "interrupthost" || doc.Implementation.Version != host.Version {
				t.Errorf("discovery names %+v, want interrupthost %s", doc.Implementation, host.Version)
			}
			if fields := sch.Validate(schema.InterruptFacet, doc.Interrupt, "/interrupt"); a.Status != 200 || len(fields) > 0 {
				t.Errorf("discovery %d %s: %v", a.Status, a.Body, fields)
			}
			var facet struct{ TokenAlgs, RefKinds []string }
			_ = json.Unmarshal(doc.Interrupt, &facet)
			if !slices.Equal(facet.RefKinds, want) || !slices.Equal(facet.TokenAlgs, []string{"hs256"}) || !slices.Contains(doc.Capabilities, "conversation") {
				t.Errorf("discovery at %s: %s", base, a.Body)
			}
		}
	})
}
