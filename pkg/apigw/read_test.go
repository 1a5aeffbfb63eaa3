package apigw_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

func (s *stack) events(t testing.TB, who caller, run string, query map[string]string) (host.EventPage, response) {
	t.Helper()
	r := invoke(t, s.fn("list-events"), call{who: &who, params: map[string]string{"runId": run}, query: query})
	var page host.EventPage
	if r.Status == 200 {
		r.decode(t, &page)
	}
	return page, r
}

// TestEvents: list-events returns every event with its payload as recorded, each envelope valid
// against run-event-payloads.schema.json, and paging with after neither skips nor repeats.
func TestEvents(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	s.mustRequest(t, "r1", "approve", example(t, "approval"))
	s.resolve(t, approver, "r1", "approve", `{"action":"ask","decidedAt":"2026-11-30T09:00:00Z"}`)
	s.resolve(t, approver, "r1", "approve", `{"action":"accept","decidedAt":"2026-11-30T09:00:01Z"}`)
	s.mustRequest(t, "r1", "clarify", example(t, "clarification"))
	s.resolve(t, approver, "r1", "clarify", `{"answers":{"address":"Main St 1","express":false}}`)
	s.mustRequest(t, "r1", "triage", example(t, "low-confidence"))
	s.mustRequest(t, "r1", "pay", example(t, "external-event"))

	all, r := s.events(t, engine, "r1", nil)
	if r.Status != 200 {
		t.Fatalf("list-events: %d %s", r.Status, r.Body)
	}
	wantTypes := []string{
		"interrupt.requested", "approval.requested", "interrupt.asked", "interrupt.voted", "interrupt.resolved", "approval.resolved",
		"interrupt.requested", "clarification.requested", "interrupt.resolved", "clarification.resolved",
		"agent.decided", "node.suspended", "interrupt.requested", "interrupt.requested",
	}
	if len(all.Events) != len(wantTypes) || all.Next != 7 {
		t.Fatalf("%d events next %d, want %d next 7", len(all.Events), all.Next, len(wantTypes))
	}
	for i, e := range all.Events {
		if e.Type != wantTypes[i] {
			t.Errorf("event %d is %s, want %s", i, e.Type, wantTypes[i])
		}
		raw, _ := json.Marshal(e)
		if fields := sch.Validate(schema.RunEventPayloads, raw, ""); len(fields) > 0 {
			t.Errorf("event %d (%s) does not match run-event-payloads.schema.json: %v", i, e.Type, fields)
		}
	}
	if got := string(all.Events[0].Payload); got != compact(t, example(t, "approval")) {
		t.Errorf("interrupt.requested payload %s is not the payload verbatim", got)
	}
	var resolved map[string]any
	if err := json.Unmarshal(all.Events[4].Payload, &resolved); err != nil {
		t.Fatal(err)
	}
	if len(resolved) != 4 || resolved["nodeId"] != "approve" || resolved["kind"] != "approval" {
		t.Errorf("interrupt.resolved payload %v", resolved)
	}

	for limit := 1; limit <= 3; limit++ {
		var paged []runlog.Envelope
		after := int64(0)
		for range 20 {
			page, r := s.events(t, engine, "r1", map[string]string{"after": strconv.FormatInt(after, 10), "limit": strconv.Itoa(limit)})
			if r.Status != 200 {
				t.Fatalf("page after %d: %d %s", after, r.Status, r.Body)
			}
			if len(page.Events) == 0 {
				if page.Next != after {
					t.Errorf("empty page moved the cursor from %d to %d", after, page.Next)
				}
				break
			}
			paged = append(paged, page.Events...)
			after = page.Next
		}
		if len(paged) != len(all.Events) {
			t.Fatalf("limit %d: paging returned %d events, want %d", limit, len(paged), len(all.Events))
		}
		for i := range paged {
			if paged[i].Seq != all.Events[i].Seq || paged[i].Index != all.Events[i].Index {
				t.Errorf("limit %d: event %d is %d.%d, want %d.%d", limit, i, paged[i].Seq, paged[i].Index, all.Events[i].Seq, all.Events[i].Index)
			}
		}
	}

	for _, q := range []map[string]string{{"after": "-1"}, {"after": "x"}, {"limit": "0"}, {"limit": "1001"}, {"mode": "verbose"}} {
		if _, r := s.events(t, engine, "r1", q); r.Status != 400 || r.problem(t).Code != interrupt.CodeValidation {
			t.Errorf("query %v: %d %s", q, r.Status, r.Body)
		}
	}
	updates := slices.DeleteFunc(slices.Clone(wantTypes), func(typ string) bool { return slices.Contains(interrupt.Detail, typ) })
	if len(updates) == len(wantTypes) {
		t.Fatal("the run holds no debug detail: the modes are not told apart")
	}
	for mode, want := range map[string][]string{"updates": updates, "debug": wantTypes} {
		page, r := s.events(t, engine, "r1", map[string]string{"mode": mode})
		var got []string
		for _, e := range page.Events {
			got = append(got, e.Type)
		}
		if !slices.Equal(got, want) || page.Next != all.Next {
			t.Errorf("mode %s: %v (next %d), want %v (next %d) %s", mode, got, page.Next, want, all.Next, r.Body)
		}
	}
	if _, r := s.events(t, engine, "nope", nil); r.Status != 404 {
		t.Errorf("unknown run: %d", r.Status)
	}
	if page, r := s.events(t, engine, "r1", map[string]string{"after": "99"}); r.Status != 200 || len(page.Events) != 0 || page.Next != 99 {
		t.Errorf("after the end: %d %s", r.Status, r.Body)
	}
}

// TestAuth: every function checks the caller itself, whatever the gateway did.
func TestAuth(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "n1", example(t, "custom"))
	requested := s.items(t)
	handlers := []struct {
		name  string
		h     apigw.Handler
		scope string
		body  string
	}{
		{"request-interrupt", s.fn("request-interrupt"), apigw.ScopeInterruptsWrite, `{"nodeId":"n2","payload":` + example(t, "custom") + `}`},
		{"resolve-by-run", s.fn("resolve-by-run"), apigw.ScopeApprovalsRespond, `{"resumeValue":1}`},
		{"get-run", s.fn("get-run"), apigw.ScopeRunsRead, ""},
		{"list-events", s.fn("list-events"), apigw.ScopeRunsRead, ""},
	}
	params := map[string]string{"runId": "r1", "nodeId": "n1"}
	all := []string{apigw.ScopeInterruptsWrite, apigw.ScopeApprovalsRespond, apigw.ScopeRunsRead}
	for _, h := range handlers {
		var others []string
		for _, sc := range all {
			if sc != h.scope {
				others = append(others, sc)
			}
		}
		cases := []struct {
			name   string
			who    *caller
			status int
			code   interrupt.Code
		}{
			{"no authorizer context", nil, 401, interrupt.CodeUnauthorized},
			{"no subject", &caller{"", "acme", all}, 401, interrupt.CodeUnauthorized},
			{"no tenant", &caller{"alice", "", all}, 403, interrupt.CodeForbidden},
			{"tenant with separator", &caller{"alice", "acme#run#r1", all}, 403, interrupt.CodeForbidden},
			{"every scope but the route's", &caller{"alice", "acme", others}, 403, interrupt.CodeForbidden},
			{"another tenant", &intruder, 404, interrupt.CodeNotFound},
		}
		for _, c := range cases {
			if h.name == "request-interrupt" && c.name == "another tenant" {
				continue // requesting in another tenant creates that tenant's own run; see TestTenantsAreIsolated
			}
			t.Run(h.name+"/"+c.name, func(t *testing.T) {
				r := invoke(t, h.h, call{who: c.who, params: params, body: h.body})
				if r.Status != c.status || r.problem(t).Code != c.code {
					t.Errorf("%d %s, want %d %s", r.Status, r.Body, c.status, c.code)
				}
			})
		}
	}
	if n := len(s.commits(t, "acme", "r1")); n != 1 {
		t.Errorf("refused calls changed the log: %d commits", n)
	}
	if now := s.items(t); now != requested {
		t.Errorf("refused calls wrote: %s, then %s", requested, now)
	}
}

func TestTenantsAreIsolated(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	mine := s.mustRequest(t, "shared-id", "n1", example(t, "custom"))
	theirs := s.request(t, intruder, "shared-id", "n1", example(t, "custom"))
	var v host.InterruptView
	theirs.decode(t, &v)
	if theirs.Status != 201 || v.InterruptID == mine.InterruptID || v.Seq != 1 {
		t.Errorf("another tenant's request with the same run id and key: %d %s", theirs.Status, theirs.Body)
	}
	if r := s.resolve(t, intruder.named("mallory"), "shared-id", "n1", `{"x":1}`); r.Status != 200 {
		t.Fatalf("intruder resolves its own run: %d %s", r.Status, r.Body)
	}
	if snap, _ := s.snapshot(t, engine, "shared-id"); snap.Status != interrupt.RunWaitingExternal || snap.Pending[0].InterruptID != mine.InterruptID {
		t.Errorf("acme's run after evilcorp resolved its own: %+v", snap)
	}
}

// TestEventPagesAreBoundedBySize: a page of large commits stops at about host.MaxPageBytes
// (Lambda answers at most 6 MB), never splits a commit, and next carries on without a gap.
func TestEventPagesAreBoundedBySize(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	// Each large approval is decided before the next is requested: a run holds at most
	// host.MaxPendingBytes of payloads pending at once.
	const approvals = 10
	for i := range approvals {
		payload := fmt.Sprintf(`{"kind":"approval","key":"k%d","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"],"artifactData":"%s"}}`,
			i, strings.Repeat("x", 120_000))
		node := fmt.Sprintf("n%d", i)
		s.mustRequest(t, "r1", node, payload)
		if r := s.resolve(t, approver, "r1", node, `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`); r.Status != 200 {
			t.Fatalf("resolve %s: %d %s", node, r.Status, r.Body)
		}
	}
	const commits = 2 * approvals
	var seqs []int64
	after, pages := int64(0), 0
	for {
		page, r := s.events(t, engine, "r1", map[string]string{"after": fmt.Sprint(after)})
		if r.Status != 200 {
			t.Fatalf("%d %.300s", r.Status, r.Body)
		}
		if len(r.Body) > host.MaxPageBytes+64<<10 {
			t.Errorf("a page of %d bytes", len(r.Body))
		}
		if len(page.Events) == 0 {
			break
		}
		pages++
		if first := page.Events[0]; first.Index != 0 {
			t.Errorf("page starts inside commit %d (index %d)", first.Seq, first.Index)
		}
		for _, e := range page.Events {
			if e.Index == 0 {
				seqs = append(seqs, e.Seq)
			}
		}
		if last := page.Events[len(page.Events)-1]; last.Seq != page.Next {
			t.Errorf("page ends at commit %d, next %d", last.Seq, page.Next)
		}
		after = page.Next
	}
	if pages < 2 || len(seqs) != commits || seqs[0] != 1 || seqs[commits-1] != commits {
		t.Errorf("%d pages over commits %v", pages, seqs)
	}
}

func (s *stack) pending(t testing.TB, who caller, query map[string]string) (host.PendingPage, response) {
	t.Helper()
	r := invoke(t, s.fn("get-run"), call{who: &who, route: "GET /interrupts", query: query})
	var page host.PendingPage
	if r.Status == 200 {
		r.decode(t, &page)
	}
	return page, r
}

// TestPendingInterruptsRoute: GET /interrupts lists the caller's tenant's pending interrupts and
// no other tenant's, pages by its next without a gap or a repeat, lists one run's with runId,
// and refuses a query it cannot
// honour or a caller without runs:read, writing nothing.
func TestPendingInterruptsRoute(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	for _, run := range []string{"r3", "r1", "r2"} {
		s.mustRequest(t, run, "n1", example(t, "custom"))
	}
	s.mustRequest(t, "r2", "n2", example(t, "approval"))
	s.request(t, intruder, "r9", "n1", example(t, "custom"))
	if r := s.resolve(t, approver, "r3", "n1", `{"done":true}`); r.Status != 200 {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	s.reindex(t, engine, "r1", "r2", "r3")
	s.reindex(t, intruder, "r9")
	var got []string
	query := map[string]string{"limit": "1"}
	for pages := 0; ; pages++ {
		page, r := s.pending(t, engine, query)
		if r.Status != 200 || pages > 3 {
			t.Fatalf("page %d: %d %s", pages, r.Status, r.Body)
		}
		for _, in := range page.Interrupts {
			if in.Kind == "" || in.InterruptID == "" || in.RequestedAt == "" || in.Seq < 1 {
				t.Errorf("an interrupt without its fields: %+v", in)
			}
			got = append(got, in.RunID+"/"+in.NodeID)
		}
		if page.Next == "" {
			break
		}
		query["after"] = page.Next
	}
	if want := []string{"r1/n1", "r2/n1", "r2/n2"}; !slices.Equal(got, want) {
		t.Errorf("acme's pending: %v, want %v", got, want)
	}
	if page, r := s.pending(t, intruder, nil); r.Status != 200 || len(page.Interrupts) != 1 || page.Interrupts[0].RunID != "r9" {
		t.Errorf("evilcorp's pending: %d %s", r.Status, r.Body)
	}
	for run, want := range map[string]int{"r2": 2, "r3": 0, "r9": 0, "nope": 0} {
		if page, r := s.pending(t, engine, map[string]string{"runId": run}); r.Status != 200 || len(page.Interrupts) != want || page.Next != "" {
			t.Errorf("run %s's pending: %d %s, want %d", run, r.Status, r.Body, want)
		}
	}
	before := s.items(t)
	for _, c := range []struct {
		name   string
		who    caller
		query  map[string]string
		status int
		code   interrupt.Code
	}{
		{"limit 0", engine, map[string]string{"limit": "0"}, 400, interrupt.CodeValidation},
		{"limit past the bound", engine, map[string]string{"limit": strconv.Itoa(host.MaxPendingLimit + 1)}, 400, interrupt.CodeValidation},
		{"an after that is no run id", engine, map[string]string{"after": "a#b"}, 400, interrupt.CodeValidation},
		{"a runId that is no run id", engine, map[string]string{"runId": "a#b"}, 400, interrupt.CodeValidation},
		{"a runId with a limit", engine, map[string]string{"runId": "r2", "limit": "1"}, 400, interrupt.CodeValidation},
		{"without runs:read", caller{"engine", "acme", []string{apigw.ScopeInterruptsWrite, apigw.ScopeApprovalsRespond}}, nil, 403, interrupt.CodeForbidden},
	} {
		if _, r := s.pending(t, c.who, c.query); r.Status != c.status || r.problem(t).Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
	}
	if after := s.items(t); after != before {
		t.Errorf("refused lists wrote: %s, then %s", before, after)
	}
}

// TestInboxRoute: GET /inbox lists what the caller may decide, each item with its page, a
// tenant's never another's, pages by its opaque next without a gap or a repeat, and refuses a
// query it cannot honour or a caller without approvals:respond, writing nothing.
func TestInboxRoute(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	listed := func(approvers string) string {
		return `{"kind":"approval","key":"k","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay inv-1","actions":["accept"],"approversList":` + approvers + `}}`
	}
	for _, run := range []string{"r1", "r2", "r3"} {
		s.mustRequest(t, run, "approve", listed(`["alice","bob"]`))
	}
	s.mustRequest(t, "r4", "approve", listed(`["bob"]`))
	if r := s.request(t, caller{"engine", "evilcorp", []string{apigw.ScopeInterruptsWrite}}, "r9", "approve", listed(`["mallory"]`)); r.Status != 201 {
		t.Fatalf("evilcorp's request: %d %s", r.Status, r.Body)
	}
	s.reindex(t, engine, "r1", "r2", "r3", "r4")
	s.reindex(t, intruder, "r9")
	inbox := func(who caller, query map[string]string) (host.InboxPage, response) {
		t.Helper()
		r := invoke(t, s.fn("get-run"), call{who: &who, route: "GET /inbox", query: query})
		var page host.InboxPage
		if r.Status == 200 {
			r.decode(t, &page)
		}
		return page, r
	}
	var got []string
	query := map[string]string{"limit": "2"}
	for pages := 0; ; pages++ {
		page, r := inbox(approver, query)
		if r.Status != 200 || pages > 3 {
			t.Fatalf("page %d: %d %s", pages, r.Status, r.Body)
		}
		for _, it := range page.Items {
			if it.URL != "https://"+testDomain+"/approve/"+it.RunID+"/"+it.InterruptID || it.Kind != interrupt.KindApproval || it.Voted || it.Title == "" {
				t.Errorf("an item: %+v", it)
			}
			got = append(got, it.RunID)
		}
		if page.Next == "" {
			break
		}
		query["after"] = page.Next
	}
	if want := []string{"r1", "r2", "r3"}; !slices.Equal(got, want) {
		t.Errorf("alice's inbox: %v, want %v", got, want)
	}
	if page, r := inbox(intruder, nil); r.Status != 200 || len(page.Items) != 1 || page.Items[0].RunID != "r9" {
		t.Errorf("mallory's inbox: %d %s", r.Status, r.Body)
	}
	before := s.items(t)
	for _, c := range []struct {
		name   string
		who    caller
		query  map[string]string
		status int
		code   interrupt.Code
	}{
		{"limit 0", approver, map[string]string{"limit": "0"}, 400, interrupt.CodeValidation},
		{"limit past the bound", approver, map[string]string{"limit": strconv.Itoa(host.MaxInboxLimit + 1)}, 400, interrupt.CodeValidation},
		{"an after that is no cursor", approver, map[string]string{"after": "not a cursor!"}, 400, interrupt.CodeValidation},
		{"an unknown parameter", approver, map[string]string{"runId": "r1"}, 400, interrupt.CodeValidation},
		{"without approvals:respond", engine, nil, 403, interrupt.CodeForbidden},
	} {
		if _, r := inbox(c.who, c.query); r.Status != c.status || r.problem(t).Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
	}
	if after := s.items(t); after != before {
		t.Errorf("refused queries wrote: %s, then %s", before, after)
	}
}
