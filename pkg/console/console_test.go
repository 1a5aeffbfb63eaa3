package console_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/interrupthost/interrupthost/pkg/console"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// names is the name of the tenant's one contact, as the console's function reads it from its
// contacts; none for every other ref.
func names(ref string) string {
	if ref == "principal:bob" {
		return "Bob Builder"
	}
	return ""
}

// TestWhatWaits: the list of what waits puts the nearest deadline first and those without one
// last (then the longest waiting), marks a deadline passed or within the hour late, says whom
// each waits on by their contacts' names (a machine's answer when no one), and sums the page
// up: none, none here but maybe on the next page, or how many and since when.
func TestWhatWaits(t *testing.T) {
	t.Parallel()
	now := t0
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	page := []host.PendingInterrupt{
		{RunID: "r2", Kind: interrupt.KindClarification, RequestedAt: at(-10 * time.Minute)},
		{RunID: "r1", Kind: interrupt.KindApproval, Title: "Pay invoice 4471", RequestedAt: at(-2 * time.Hour), ExpiresAt: at(30 * time.Minute),
			WaitingOn: []string{"principal:bob", "group:finance"}, Tally: &interrupt.Tally{Approvals: 1, Rejections: 1, Required: 2}, RequestedBy: "engine"},
		{RunID: "r3", Kind: interrupt.KindExternalEvent, Title: "Payment", RequestedAt: at(-time.Hour), ExpiresAt: at(3 * time.Hour)},
		{RunID: "r:4", Kind: interrupt.KindApproval, Title: "Old refund", RequestedAt: at(-5 * time.Hour), ExpiresAt: at(-time.Minute),
			WaitingOn: []string{"anyone"}, Tally: &interrupt.Tally{Rejections: 2, Required: 3}},
	}
	type row struct{ RunID, Title, Kind, WaitsOn, Tally, Requested, Deadline string }
	type late struct {
		RunID string
		Late  bool
	}
	for _, tt := range []struct {
		name, kind, next string
		page             []host.PendingInterrupt
		summary          string
		rows             []row
	}{
		{name: "nothing at all", summary: "Nothing waits."},
		{name: "nothing here, maybe on the next page", next: "console?after=x", summary: "Nothing on this page waits; the next page may hold more."},
		{name: "every kind, nearest deadline first", page: page, summary: "4 waiting on this page; the oldest was requested 5 hours ago.", rows: []row{
			{"r:4", "Old refund", "approval", "anyone", "0 of 3 approvals, 2 rejections", "5 hours ago", "Mon 30 Nov 2026, 08:59:00 UTC (passed)"},
			{"r1", "Pay invoice 4471", "approval", iso("Bob Builder") + " (" + iso("bob") + "), group " + iso("finance"), "1 of 2 approvals, 1 rejection", "2 hours ago by " + iso("engine"), "Mon 30 Nov 2026, 09:30:00 UTC (in 30 minutes)"},
			{"r3", "Payment", "external event", "a machine's answer", "", "1 hour ago", "Mon 30 Nov 2026, 12:00:00 UTC (in 3 hours)"},
			{"r2", "(no title)", "question", "a machine's answer", "", "10 minutes ago", ""},
		}},
		{name: "questions only, more on the next page", kind: string(interrupt.KindClarification), next: "console?after=x", page: page,
			summary: "1 waiting on this page; the oldest was requested 10 minutes ago. More are on the next page.", rows: []row{
				{"r2", "(no title)", "question", "a machine's answer", "", "10 minutes ago", ""},
			}},
		{name: "asked this minute", page: []host.PendingInterrupt{{RunID: "r5", Kind: interrupt.KindCustom, Title: "Label the batch", RequestedAt: at(-30 * time.Second)}},
			summary: "1 waiting on this page; the oldest was requested just now.", rows: []row{
				{"r5", "Label the batch", "custom", "a machine's answer", "", "just now", ""},
			}},
		{name: "a kind none is of", kind: string(interrupt.KindLowConfidence), page: page, summary: "Nothing waits."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := console.HomeOf(console.HomeParams{Pending: tt.page, Kind: tt.kind, NextPage: tt.next, Names: names, Now: now})
			if h.Summary != tt.summary {
				t.Errorf("summary %q, want %q", h.Summary, tt.summary)
			}
			var got []row
			for _, r := range h.Rows {
				got = append(got, row{r.RunID, r.Title, r.Kind, r.WaitsOn, r.Tally, r.Requested, r.Deadline})
			}
			if !reflect.DeepEqual(got, tt.rows) {
				t.Errorf("rows\n%+v\nwant\n%+v", got, tt.rows)
			}
			if h.Kind != tt.kind || h.Next != tt.next {
				t.Errorf("the filter %q and next page %q are not kept: %q, %q", tt.kind, tt.next, h.Kind, h.Next)
			}
			var selected []string
			for _, c := range h.Kinds {
				if c.Selected {
					selected = append(selected, c.Value)
				}
			}
			if len(h.Kinds) != 9 || !reflect.DeepEqual(selected, []string{tt.kind}) {
				t.Errorf("the kinds offered: %+v, want every kind and the 8 the list filters by, %q selected", h.Kinds, tt.kind)
			}
		})
	}
	t.Run("late: a deadline passed or within the hour", func(t *testing.T) {
		t.Parallel()
		var got []late
		for _, r := range console.HomeOf(console.HomeParams{Pending: page, Names: names, Now: now}).Rows {
			got = append(got, late{r.RunID, r.Late})
		}
		want := []late{{"r:4", true}, {"r1", true}, {"r3", false}, {"r2", false}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("late %v, want %v", got, want)
		}
	})
	t.Run("requested through a signed link", func(t *testing.T) {
		t.Parallel()
		// The list says who asked as the run's story does: a link's holder, not its token's id.
		h := console.HomeOf(console.HomeParams{Pending: []host.PendingInterrupt{{RunID: "r6", Kind: interrupt.KindClarification, Title: "Which order?",
			RequestedAt: at(-10 * time.Minute), RequestedBy: "token:jti-1"}}, Names: names, Now: now})
		if len(h.Rows) != 1 || h.Rows[0].Requested != "10 minutes ago by a signed link's holder" {
			t.Errorf("rows %+v, want one requested 10 minutes ago by a signed link's holder", h.Rows)
		}
	})
}

// TestOnlyANearDeadlineIsUrgent: the list and a run's page style a deadline as urgent (late)
// only when it passed or is within the hour; one further away is plain.
func TestOnlyANearDeadlineIsUrgent(t *testing.T) {
	t.Parallel()
	now := t0
	for _, tt := range []struct {
		name string
		in   time.Duration
		late bool
	}{
		{"passed", -time.Minute, true},
		{"in 30 minutes", 30 * time.Minute, true},
		{"in 2 hours", 2 * time.Hour, false},
		{"in 3 days", 72 * time.Hour, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			deadline := now.Add(tt.in)
			home := console.HomeOf(console.HomeParams{Now: now, Pending: []host.PendingInterrupt{{RunID: "r1", Kind: interrupt.KindApproval,
				RequestedAt: now.Add(-time.Hour).Format(time.RFC3339), ExpiresAt: deadline.Format(time.RFC3339)}}})
			run := console.RunOf(console.RunParams{Now: now, Story: host.Story{RunID: "r1", Status: interrupt.RunWaitingApproval,
				Waiting: []host.StoryWaiting{{NodeID: "approve", InterruptID: "int_1", Kind: interrupt.KindApproval, RequestedAt: now.Add(-time.Hour), Deadline: deadline}}}})
			for _, v := range []console.View{{Status: http.StatusOK, Title: "What waits", Home: home}, {Status: http.StatusOK, Title: "Run r1", Run: run}} {
				page := render(t, v)
				var deadlines []string
				for _, line := range strings.Split(page, "\n") {
					if strings.Contains(line, ">Deadline ") {
						deadlines = append(deadlines, line)
					}
				}
				if len(deadlines) != 1 || strings.Contains(deadlines[0], "late") != tt.late {
					t.Errorf("%s: deadline lines %q; want one, urgent (late): %v", v.Title, deadlines, tt.late)
				}
			}
		})
	}
}

// TestEndingARunIsExplained: each of a run's end forms says, beside its button, what ending the
// run that way does; a run that has ended shows neither form.
func TestEndingARunIsExplained(t *testing.T) {
	t.Parallel()
	page := render(t, console.View{Status: http.StatusOK, Title: "Run r1", Run: &console.Run{ID: "r1", Status: "waits for an approval", CSRF: "c"}})
	for form, says := range map[string]string{
		"cancel":   "Cancelling ends the run as cancelled: the interrupts it waits on close undecided, and it cannot be undone.",
		"complete": "Completing ends the run as completed: the interrupts it waits on close, and it cannot be undone.",
	} {
		_, rest, ok := strings.Cut(page, `action="./r1/`+form+`"`)
		body, _, _ := strings.Cut(rest, "</form>")
		if !ok || !strings.Contains(body, `<p class="meta" id="`+form+`-what">`+says+`</p>`) || !strings.Contains(body, `aria-describedby="`+form+`-what"`) {
			t.Errorf("the %s form does not say what it does (%q), by its button:\n%s", form, says, body)
		}
	}
	if page := render(t, console.View{Status: http.StatusOK, Title: "Run r1", Run: &console.Run{ID: "r1", Status: "completed", Ended: true}}); strings.Contains(page, "-what") {
		t.Error("an ended run's page explains forms it does not show")
	}
}

// TestTheDeliveriesScrollInTheirBox: at a phone's width a subscription's deliveries table is
// not cut off: it scrolls sideways inside its own box (a focusable, labelled region whose
// stylesheet rule scrolls it, overflow-x: auto), which shades the edge it hides, and says so
// above it, outside the scrolled table; the page's CSP allows that stylesheet by its hash.
func TestTheDeliveriesScrollInTheirBox(t *testing.T) {
	t.Parallel()
	sub := console.Deliveries(outbound.Subscription{ID: "sub_1", URL: "https://hooks.example.com/in", Format: "standard-webhooks"}, []outbound.Attempt{
		{EventID: "r1:1:0", EventType: interrupt.EventRequested, RunID: "r1", Status: outbound.StatusFailed, Attempts: 3, StatusCode: 500, LastError: "server error", At: t0},
	}, "r1")
	page := render(t, console.View{Status: http.StatusOK, Title: "Run r1", Run: &console.Run{ID: "r1", Deliveries: []console.Subscription{sub}}})
	_, rest, ok := strings.Cut(page, `<p class="meta" id="deliveries-sub_1">Recent deliveries of this run's events to subscription sub_1; on a narrow screen the table scrolls sideways.</p>`+"\n"+
		`<div class="table scrolls" role="region" tabindex="0" aria-labelledby="deliveries-sub_1"><table>`)
	if !ok {
		t.Fatalf("the deliveries table is not in a labelled box of its own that scrolls:\n%s", page)
	}
	if table, _, _ := strings.Cut(rest, "</table>"); strings.Contains(table, "<caption") {
		t.Error("the table's description is inside the scrolled table, cut off with it")
	}
	_, style, _ := strings.Cut(page, "<style>")
	style, _, _ = strings.Cut(style, "</style>")
	if !strings.Contains(style, ".table.scrolls { overflow-x: auto; background: ") {
		t.Error("the stylesheet does not scroll the deliveries' box sideways")
	}
	sum := sha256.Sum256([]byte(style))
	if !strings.Contains(console.CSP, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"';") {
		t.Errorf("the CSP %q does not allow the run page's stylesheet", console.CSP)
	}
}

// TestValidKind: the list filters by the kinds it offers, and by nothing else.
func TestValidKind(t *testing.T) {
	t.Parallel()
	for kind, want := range map[string]bool{
		"": true, "approval": true, "clarification": true, "external-event": true, "low-confidence": true, "custom": true,
		"conversation.start": true, "conversation.exchange": true, "conversation.close": true,
		"Approval": false, "approval ": false, "question": false, "<script>": false,
	} {
		if got := console.ValidKind(kind); got != want {
			t.Errorf("ValidKind(%q) = %v, want %v", kind, got, want)
		}
	}
}

// TestRefs: a waitingOn ref is its kind and name (the name may hold a colon); said plainly, a
// principal is its name and a group or a role keeps its kind, the name isolated; anyone is
// "anyone"; what is no ref, or of a kind the host has not, is said as itself, isolated whole.
func TestRefs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		ref, kind, name string
		ok              bool
		plain           string
	}{
		{"principal:alice", "principal", "alice", true, "\u2068alice\u2069"},
		{"group:finance", "group", "finance", true, "group \u2068finance\u2069"},
		{"role:a:b", "role", "a:b", true, "role \u2068a:b\u2069"},
		{"anyone", "anyone", "", false, "anyone"},
		{"group:", "group", "", false, "\u2068group:\u2069"},
		{"team:x", "team", "x", true, "\u2068team:x\u2069"},
		{"principal:\u202eevil", "principal", "\u202eevil", true, "\u2068\ufffdevil\u2069"},
	} {
		kind, name, ok := console.Ref(tt.ref)
		if kind != tt.kind || name != tt.name || ok != tt.ok {
			t.Errorf("Ref(%q) = %q, %q, %v; want %q, %q, %v", tt.ref, kind, name, ok, tt.kind, tt.name, tt.ok)
		}
		if got := console.Plain(tt.ref); got != tt.plain {
			t.Errorf("Plain(%q) = %q, want %q", tt.ref, got, tt.plain)
		}
	}
}

// TestWhatARunWaitsOn: a run's page says of each interrupt it waits on what it is, whom it
// still waits on (its audience less whoever voted, by their contacts' names), the votes so far
// with their comments, how long ago it was asked and by whom, and its deadline; and whether
// the run still takes an end (a run cancelled or completed does not).
func TestWhatARunWaitsOn(t *testing.T) {
	t.Parallel()
	invoice := fixture(t, "invoice.json")
	now := t0.Add(30 * time.Minute)
	for _, tt := range []struct {
		name    string
		commits func(t *testing.T) []runlog.Commit
		status  string
		ended   bool
		waiting []console.Waiting
	}{
		{"an approval half decided", func(t *testing.T) []runlog.Commit {
			return []runlog.Commit{
				commit("engine", requested(t, "approve", "int_1", invoice, runlog.With{})),
				commit("alice", event(t, interrupt.EventVoted, "approve", "int_1", interrupt.Vote{NodeID: "approve", InterruptID: "int_1", Principal: "alice",
					Action: interrupt.ActionAccept, ResumeValue: json.RawMessage(`{"action":"accept","feedback":"Fine by me"}`), Tally: interrupt.Tally{Approvals: 1, Required: 2}})),
			}
		}, "waits for an approval", false, []console.Waiting{{
			Title: "Pay invoice 4471", Kind: "approval", Step: "approve", Tally: "1 of 2 approvals", WaitsOn: iso("Bob Builder") + " (" + iso("bob") + ")",
			Requested: "30 minutes ago by " + iso("engine"), Deadline: "Mon 30 Nov 2026, 10:00:00 UTC (in 30 minutes)", Late: true, PageHref: "../../approve/r1/int_1",
			Votes: []string{iso("alice") + " voted accept: “" + iso("Fine by me") + "”"},
		}}},
		{"a question for the people its display names, and an external event", func(t *testing.T) []runlog.Commit {
			return []runlog.Commit{
				commit("engine", requested(t, "clarify", "int_2", `{"kind":"clarification","key":"k2","data":{"questions":[{"id":"po","question":"Which purchase order?"}]}}`,
					runlog.With{Display: &interrupt.Display{Audience: []string{"carol", "bob"}}})),
				commit("", requested(t, "pay", "int_3", `{"kind":"external-event","key":"k3","timeoutMs":7200000,"data":{"eventType":"payment.succeeded"}}`, runlog.With{})),
			}
		}, "waits for an answer", false, []console.Waiting{
			{Title: "Which purchase order?", Kind: "question", Step: "clarify", WaitsOn: iso("carol") + ", " + iso("Bob Builder") + " (" + iso("bob") + ")", Requested: "30 minutes ago by " + iso("engine"),
				PageHref: "../../approve/r1/int_2"},
			{Title: "Interrupt at pay", Kind: "external event", Step: "pay", WaitsOn: "a machine's answer", Requested: "29 minutes ago",
				Deadline: "Mon 30 Nov 2026, 11:01:00 UTC (in 1 hour)", PageHref: "../../approve/r1/int_3"},
		}},
		// Who asked is said as the story says it: a signed link's holder, not its token's id.
		{"a question asked through a signed link", func(t *testing.T) []runlog.Commit {
			return []runlog.Commit{commit("token:jti-1", requested(t, "clarify", "int_2", `{"kind":"clarification","key":"k2","data":{"questions":[{"id":"po","question":"Which purchase order?"}]}}`,
				runlog.With{Display: &interrupt.Display{Audience: []string{"carol"}}}))}
		}, "waits for an answer", false, []console.Waiting{
			{Title: "Which purchase order?", Kind: "question", Step: "clarify", WaitsOn: iso("carol"), Requested: "30 minutes ago by a signed link's holder",
				PageHref: "../../approve/r1/int_2"},
		}},
		{"a run cancelled", func(t *testing.T) []runlog.Commit {
			return []runlog.Commit{
				commit("engine", requested(t, "approve", "int_1", invoice, runlog.With{})),
				commit("olga", event(t, interrupt.EventRunCancelled, "", "", interrupt.Ended{By: "olga", Reason: "duplicate"})),
			}
		}, "cancelled", true, nil},
		{"a run completed", func(t *testing.T) []runlog.Commit {
			return []runlog.Commit{commit("engine", event(t, interrupt.EventRunCompleted, "", "", interrupt.Ended{By: "engine"}))}
		}, "completed", true, nil},
		{"a run that waits on nothing", func(t *testing.T) []runlog.Commit {
			return []runlog.Commit{commit("engine", event(t, interrupt.EventRunConfigured, "", "", interrupt.Configured{EscalationThreshold: 0.5, By: "engine"}))}
		}, "running", false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := console.RunOf(console.RunParams{Story: storyOf(t, "r1", now, tt.commits(t)...), EarlierPage: "./r1", LaterPage: "./r1?after=50", CSRF: "csrf-1", Names: names, Now: now})
			if r.ID != "r1" || r.Status != tt.status || r.Ended != tt.ended {
				t.Errorf("run %q, status %q, ended %v; want r1, %q, %v", r.ID, r.Status, r.Ended, tt.status, tt.ended)
			}
			if r.CSRF != "csrf-1" || r.Earlier != "./r1" || r.Later != "./r1?after=50" {
				t.Errorf("the forms' CSRF %q and the story's pages %q, %q are not the ones given", r.CSRF, r.Earlier, r.Later)
			}
			if !reflect.DeepEqual(r.Waiting, tt.waiting) {
				t.Errorf("waiting\n%+v\nwant\n%+v", r.Waiting, tt.waiting)
			}
		})
	}
}

// TestTheDeliveriesTarget: a subscription's deliveries name its target by its format: an email
// subscription as mail, any other by its receiver's scheme and host only (a Slack incoming
// webhook's URL is its credential; a URL's user, path and query are not shown), or as "a
// receiver" where its URL has no scheme or host to name it by; they list the attempts of the
// run's events alone, each with what went wrong in one line: nothing for a delivery a receiver
// answered with a 2xx, however it failed before.
func TestTheDeliveriesTarget(t *testing.T) {
	t.Parallel()
	at := t0.Add(5 * time.Minute)
	attempts := []outbound.Attempt{
		{EventID: "r1:1:0", EventType: interrupt.EventRequested, RunID: "r1", Status: outbound.StatusFailed, Attempts: 3, StatusCode: 500, LastError: "server error", At: at},
		{EventID: "r2:1:0", EventType: interrupt.EventRequested, RunID: "r2", Status: outbound.StatusDelivered, Attempts: 1, At: at},
		{EventID: "r1:2:0", EventType: interrupt.EventResolved, RunID: "r1", Status: outbound.StatusDelivered, Attempts: 1, At: at, Resent: true,
			Unreached: []string{"principal carol"}, Refused: []string{"dan@example.com: the tenant's hourly bound"}},
		// A 2xx is no error: delivered after a failure, only its success is left to say.
		{EventID: "r1:3:0", EventType: interrupt.EventVoted, RunID: "r1", Status: outbound.StatusDelivered, Attempts: 2, StatusCode: 204, LastError: "timeout", At: at},
		{EventID: "r1:4:0", EventType: interrupt.EventVoted, RunID: "r1", Status: outbound.StatusRetrying, Attempts: 1, StatusCode: 429, LastError: "the receiver answered 429", At: at},
		{EventID: "r1:5:0", EventType: interrupt.EventVoted, RunID: "r1", Status: outbound.StatusFailed, Attempts: 1, LastError: "dial tcp: connection refused", At: at},
	}
	want := []console.Attempt{
		{EventID: "r1:1:0", EventType: interrupt.EventRequested, Status: "failed", When: "Mon 30 Nov 2026, 09:05:00 UTC", Detail: "HTTP 500; server error", Attempts: 3, Failed: true},
		{EventID: "r1:2:0", EventType: interrupt.EventResolved, Status: "delivered", When: "Mon 30 Nov 2026, 09:05:00 UTC",
			Detail: "principal carol; dan@example.com: the tenant's hourly bound", Attempts: 1, Resent: true},
		{EventID: "r1:3:0", EventType: interrupt.EventVoted, Status: "delivered", When: "Mon 30 Nov 2026, 09:05:00 UTC", Attempts: 2},
		{EventID: "r1:4:0", EventType: interrupt.EventVoted, Status: "retrying", When: "Mon 30 Nov 2026, 09:05:00 UTC", Detail: "HTTP 429; the receiver answered 429", Attempts: 1, Failed: true},
		{EventID: "r1:5:0", EventType: interrupt.EventVoted, Status: "failed", When: "Mon 30 Nov 2026, 09:05:00 UTC", Detail: "dial tcp: connection refused", Attempts: 1, Failed: true},
	}
	for _, tt := range []struct {
		name, url, format, target string
	}{
		{"a Slack incoming webhook", "https://hooks.slack.com/services/T0001/B0001/XXXXsecretXXXX", "slack", "https://hooks.slack.com"},
		{"a receiver with a user, a port and a query", "https://ops:pa55word@hooks.example.com:8443/in?token=s3cret", "standard-webhooks", "https://hooks.example.com:8443"},
		{"mail", "", "email", "mail to the people asked"},
		{"mail, whatever URL it holds", "https://ops:pa55word@hooks.example.com/services/in", "email", "mail to the people asked"},
		{"a URL without a scheme", "hooks.example.com/services/in?token=s3cret", "standard-webhooks", "a receiver"},
		{"a URL without a scheme, with a port", "hooks.example.com:8443/services/in?token=s3cret", "standard-webhooks", "a receiver"},
		{"a URL relative to its scheme", "//ops:pa55word@hooks.slack.com/services/T0001/B0001/XXXXsecretXXXX", "slack", "a receiver"},
		{"no URL", "", "standard-webhooks", "a receiver"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := console.Deliveries(outbound.Subscription{ID: "sub_1", URL: tt.url, Format: tt.format}, attempts, "r1")
			if got.ID != "sub_1" || got.Format != tt.format || got.Target != tt.target {
				t.Errorf("subscription %q, format %q, target %q; want sub_1, %q, %q", got.ID, got.Format, got.Target, tt.format, tt.target)
			}
			if !reflect.DeepEqual(got.Attempts, want) {
				t.Errorf("attempts\n%+v\nwant\n%+v", got.Attempts, want)
			}
			page := render(t, console.View{Status: http.StatusOK, Title: "Run r1", Run: &console.Run{ID: "r1", Deliveries: []console.Subscription{got}}})
			for _, secret := range []string{"XXXXsecretXXXX", "pa55word", "s3cret", "/services/"} {
				if strings.Contains(page, secret) {
					t.Errorf("the page shows %q of the receiver's URL", secret)
				}
			}
		})
	}
}

// render is v as the console answers it.
func render(t *testing.T, v console.View) string {
	t.Helper()
	b, err := console.Render(v)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(b) {
		t.Error("the page is not UTF-8")
	}
	return string(b)
}

// TestTheCSPAllowsTheStyle: the console's Content-Security-Policy allows its one style element
// by hash, and nothing else: a stylesheet changed without its hash would leave the console
// unstyled, one with a script source would let a script run.
func TestTheCSPAllowsTheStyle(t *testing.T) {
	t.Parallel()
	for _, v := range []console.View{
		console.Problem(http.StatusNotFound, "No console", "This host signs no one in."),
		console.Refused("mallory", &console.SignOut{Action: "signin/signout", CSRF: "c"}),
	} {
		page := render(t, v)
		_, rest, _ := strings.Cut(page, "<style>")
		style, _, ok := strings.Cut(rest, "</style>")
		if !ok || strings.Count(page, "<style") != 1 {
			t.Fatalf("the page has no one style element:\n%s", page)
		}
		sum := sha256.Sum256([]byte(style))
		if want := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "';"; !strings.Contains(console.CSP, want) {
			t.Errorf("the CSP %q does not allow the page's style element (%s)", console.CSP, want)
		}
		if !strings.HasPrefix(console.CSP, "default-src 'none';") || strings.Contains(console.CSP, "script-src") {
			t.Errorf("the CSP %q allows more than the style", console.CSP)
		}
	}
}

// TestOthersWordsAreEscaped: whatever a requester, a decider or an operator wrote (a title, a
// comment, a name, data's members and values, the tenant) is text on the console's pages,
// never markup: no element, no attribute of their making.
func TestOthersWordsAreEscaped(t *testing.T) {
	t.Parallel()
	hostile := fixture(t, "hostile.json")
	now := t0.Add(time.Minute)
	story := storyOf(t, "r1", now,
		commit("engine", requested(t, "approve", "int_1", hostile, runlog.With{})),
		commit(`"><img src=x onerror=alert(3)>`, event(t, interrupt.EventVoted, "approve", "int_1", interrupt.Vote{NodeID: "approve", InterruptID: "int_1",
			Principal: `"><img src=x onerror=alert(3)>`, Action: interrupt.ActionReject,
			ResumeValue: json.RawMessage(`{"action":"reject","feedback":"</blockquote><script>alert(4)</script>"}`), Tally: interrupt.Tally{Rejections: 1, Required: 1}})),
	)
	pending := []host.PendingInterrupt{{RunID: "r1", Kind: interrupt.KindApproval, Title: "<script>alert(1)</script>", RequestedAt: t0.Format(time.RFC3339),
		WaitingOn: []string{`principal:<b onmouseover=alert(5)>`}, RequestedBy: "<i>engine</i>"}}
	for _, tt := range []struct {
		name  string
		view  console.View
		shown []string
	}{
		{"what waits", console.View{Status: http.StatusOK, Title: "What waits", Operator: "<u>olga</u>", Tenant: `acme"><script>`,
			Home: console.HomeOf(console.HomeParams{Pending: pending, Now: now})},
			[]string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b onmouseover=alert(5)&gt;", "&lt;i&gt;engine&lt;/i&gt;", "&lt;u&gt;olga&lt;/u&gt;"}},
		{"a run's page", console.View{Status: http.StatusOK, Title: "Run r1", Operator: "olga", Tenant: "acme",
			Run: console.RunOf(console.RunParams{Story: story, CSRF: "csrf", Now: now})},
			[]string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;/blockquote&gt;&lt;script&gt;alert(4)&lt;/script&gt;", "&#34;&gt;&lt;img src=x onerror=alert(3)&gt;",
				"&lt;img src=x onerror=alert(1)&gt;", "&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;", "&lt;b&gt;member&lt;/b&gt;"}},
		{"a refusal", console.Refused(`<script>alert(6)</script>`, nil), []string{"&lt;script&gt;alert(6)&lt;/script&gt;"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			page := render(t, tt.view)
			for _, markup := range []string{"<script", "<img", "<b ", "<b>", "<i>", "<u>", "onerror=alert(3)\"", "</blockquote><script"} {
				if strings.Contains(strings.ToLower(page), markup) {
					t.Errorf("the page holds %q as markup:\n%s", markup, page)
				}
			}
			for _, s := range tt.shown {
				if !strings.Contains(page, s) {
					t.Errorf("the page does not show %q as text:\n%s", s, page)
				}
			}
		})
	}
}

// TestLongAndRightToLeftInput: a title is cut to runlog.MaxTitle characters, whole characters
// (a multi-byte one is never split), wherever the run's page names it; a reason of the most an
// end takes is quoted whole; a title, with its own direction overrides and isolates, stands
// alone in its own block where the list and the run's page head an interrupt with it, so its
// direction reaches none of the console's words there.
func TestLongAndRightToLeftInput(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Minute)
	long := strings.Repeat("é", runlog.MaxTitle+50)
	reason := strings.Repeat("w", 999) + "!"
	for _, tt := range []struct {
		name, title, shown string
	}{
		{"a title too long", long, strings.Repeat("é", runlog.MaxTitle)},
		{"a right-to-left override", "\u202eevil.exe\u2069\u2066", "\u202eevil.exe\u2069\u2066"},
		{"a right-to-left title", "فاتورة 4471", "فاتورة 4471"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw, err := json.Marshal(map[string]any{"kind": "approval", "key": "k1", "data": map[string]any{"title": tt.title, "approversList": []string{"bob"}}})
			if err != nil {
				t.Fatal(err)
			}
			s := storyOf(t, "r1", now, commit("engine", requested(t, "approve", "int_1", string(raw), runlog.With{})))
			r := console.RunOf(console.RunParams{Story: s, CSRF: "csrf", Names: names, Now: now})
			if len(r.Waiting) != 1 || r.Waiting[0].Title != tt.shown {
				t.Fatalf("the waiting interrupt's title: %+v, want %q", r.Waiting, tt.shown)
			}
			if len(r.Story) != 1 || strings.Count(r.Story[0].Text, "é") > runlog.MaxTitle || !utf8.ValidString(r.Story[0].Text) {
				t.Errorf("the story's line names more than the title cut: %+v", r.Story)
			}
			home := console.HomeOf(console.HomeParams{Pending: []host.PendingInterrupt{{RunID: "r1", Kind: interrupt.KindApproval, Title: tt.shown, RequestedAt: t0.Format(time.RFC3339)}}, Names: names, Now: now})
			page := render(t, console.View{Status: http.StatusOK, Title: "What waits", Home: home}) +
				render(t, console.View{Status: http.StatusOK, Title: "Run r1", Run: r})
			for _, want := range []string{
				`<h3><a href="console/runs/r1">` + tt.shown + `</a></h3>`,
				`<section class="waiting" aria-label="` + tt.shown + `">` + "\n<h3>" + tt.shown + "</h3>\n",
			} {
				if !strings.Contains(page, want) {
					t.Errorf("the title is not alone in its heading: %q", want)
				}
			}
		})
	}
	t.Run("a reason of the most an end takes", func(t *testing.T) {
		t.Parallel()
		s := storyOf(t, "r1", now, commit("olga", event(t, interrupt.EventRunCancelled, "", "", interrupt.Ended{By: "olga", Reason: reason})))
		page := render(t, console.View{Status: http.StatusOK, Title: "Run r1", Run: console.RunOf(console.RunParams{Story: s, CSRF: "csrf", Names: names, Now: now})})
		if !strings.Contains(page, "<blockquote>"+reason+"</blockquote>") {
			t.Error("the reason is not quoted whole")
		}
	})
}

// TestPagesOfNoTenant: a refusal names who is signed in, and a problem page says what went
// wrong, each with its status, and neither shows anything of a tenant.
func TestPagesOfNoTenant(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		view   console.View
		status int
		says   string
	}{
		{"not an operator", console.Refused("mallory", &console.SignOut{Action: "signin/signout", CSRF: "c-1"}), http.StatusForbidden,
			"You are signed in as \u2068mallory\u2069, who does not hold this host&#39;s operator role."},
		{"a problem", console.Problem(http.StatusServiceUnavailable, "The console is unavailable", "Nothing was changed."), http.StatusServiceUnavailable,
			"<h1>The console is unavailable</h1>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.view.Status != tt.status || tt.view.Tenant != "" || tt.view.Home != nil || tt.view.Run != nil {
				t.Errorf("%+v: want status %d and nothing of a tenant", tt.view, tt.status)
			}
			page := render(t, tt.view)
			if !strings.Contains(page, tt.says) || strings.Contains(page, "tenant ") {
				t.Errorf("the page does not say %q, or names a tenant:\n%s", tt.says, page)
			}
		})
	}
}

// TestTheConsolesWordsStayInOrder: wherever the console puts a value a run holds (a title, a
// principal's name or id, a contact's name, an agent's or a tool's name, a comment) inside its
// own words, the value is isolated (words.Isolated): between FIRST STRONG ISOLATE and POP
// DIRECTIONAL ISOLATE, its own directional controls shown as U+FFFD, so that a right-to-left
// override (U+202E) in it, or a PDI that would close the isolate early, reverses none of the
// console's words after it; the page escapes the line as any text.
func TestTheConsolesWordsStayInOrder(t *testing.T) {
	t.Parallel()
	now := t0.Add(30 * time.Minute)
	contacts := func(ref string) string {
		if ref == "principal:bob" {
			return "Bob\u202e Builder"
		}
		return ""
	}
	raw := `{"kind":"approval","key":"k1","timeoutMs":3600000,"data":{"title":"Pay \u202e4471 EUR","actions":["accept","reject"],"requiredApprovals":3,` +
		`"approversList":["m\u202eallory","bob","c\u2069\u202earol"]}}`
	voted := commit("c\u2069\u202earol", event(t, interrupt.EventVoted, "approve", "int_1", interrupt.Vote{NodeID: "approve", InterruptID: "int_1",
		Principal: "c\u2069\u202earol", Action: interrupt.ActionAccept, ResumeValue: json.RawMessage(`{"action":"accept","feedback":"ok\u202e by me"}`),
		Tally: interrupt.Tally{Approvals: 1, Required: 3}}))
	waiting := console.RunOf(console.RunParams{Story: storyOf(t, "r1", now, commit("eng\u202eine", requested(t, "approve", "int_1", raw, runlog.With{})), voted),
		CSRF: "csrf", Names: contacts, Now: now})
	told := console.RunOf(console.RunParams{Story: storyOf(t, "r1", now,
		commit("eng\u202eine", requested(t, "approve", "int_1", raw, runlog.With{})),
		voted,
		commit("", event(t, interrupt.EventReminded, "approve", "int_1", interrupt.Reminded{NodeID: "approve", InterruptID: "int_1", Reminder: 1,
			Recipients: []interrupt.Ref{{Kind: interrupt.RefPrincipal, Ref: "d\u202eave"}}})),
		commit("engine", event(t, interrupt.EventAgentDecided, "triage", "", interrupt.AgentDecided{NodeID: "triage", AgentID: "tri\u202eage", Confidence: 0.42, Threshold: 0.7})),
		commit("payments", event(t, interrupt.EventReceiptRedeemed, "approve", "int_1", interrupt.Redeemed{NodeID: "approve", InterruptID: "int_1",
			Name: "issue_\u202erefund", By: "agent\u202e-7"})),
		commit("console", event(t, interrupt.EventRunCancelled, "", "", interrupt.Ended{By: "ol\u202ega", Reason: "duplicate"})),
	), CSRF: "csrf", Names: contacts, Now: now})
	if len(waiting.Waiting) != 1 || len(waiting.Waiting[0].Votes) != 1 || len(told.Story) != 6 {
		t.Fatalf("the run waits on %+v; its story %+v", waiting.Waiting, told.Story)
	}
	home := console.HomeOf(console.HomeParams{Pending: []host.PendingInterrupt{{RunID: "r1", Kind: interrupt.KindApproval, Title: "Pay invoice", RequestedAt: t0.Format(time.RFC3339),
		WaitingOn: []string{"principal:\u202elive", "group:fin\u2069\u202eance", "principal:bob", "anyone"}, RequestedBy: "eng\u202eine"}}, Names: contacts, Now: now})
	refused := console.Refused("m\u202eallory", nil)
	pages := map[string]string{
		"run":     render(t, console.View{Status: http.StatusOK, Title: "Run r1", Run: waiting}),
		"story":   render(t, console.View{Status: http.StatusOK, Title: "Run r1", Run: told}),
		"home":    render(t, console.View{Status: http.StatusOK, Title: "What waits", Home: home}),
		"refused": render(t, refused),
	}
	line := func(l console.Line) string { return "<strong>" + l.Who + "</strong> " + l.Text }
	for _, tt := range []struct {
		name, page, got, want string
	}{
		{"a title in the story's request", "story", line(told.Story[0]),
			"<strong>\u2068eng\ufffdine\u2069</strong> asked for an approval at step approve: “\u2068Pay \ufffd4471 EUR\u2069”, to be decided by Mon 30 Nov 2026, 10:00:00 UTC"},
		{"a voter and a vote", "story", line(told.Story[1]), "<strong>\u2068c\ufffd\ufffdarol\u2069</strong> voted accept (1 of 3 approvals)"},
		{"a reminder's recipient", "story", line(told.Story[2]), "<strong>the host</strong> sent reminder 1 for step approve to principal \u2068d\ufffdave\u2069"},
		{"an agent", "story", line(told.Story[3]),
			"<strong>\u2068engine\u2069</strong> recorded agent \u2068tri\ufffdage\u2069's decision, 0.42 confident against a threshold of 0.70"},
		{"a tool and who redeemed it", "story", line(told.Story[4]),
			"<strong>\u2068agent\ufffd-7\u2069</strong> redeemed the receipt of the approved call \u2068issue_\ufffdrefund\u2069 at step approve"},
		{"who ended the run", "story", line(told.Story[5]), "<strong>\u2068ol\ufffdga\u2069</strong> cancelled the run"},
		{"whom a run waits on, by id and by contact", "run", "Waits on " + waiting.Waiting[0].WaitsOn,
			"Waits on \u2068m\ufffdallory\u2069, \u2068Bob\ufffd Builder\u2069 (\u2068bob\u2069)"},
		{"who requested it", "run", "requested " + waiting.Waiting[0].Requested, "requested 30 minutes ago by \u2068eng\ufffdine\u2069"},
		{"a vote's line and its comment", "run", waiting.Waiting[0].Votes[0], "\u2068c\ufffd\ufffdarol\u2069 voted accept: “\u2068ok\ufffd by me\u2069”"},
		{"whom the list's interrupt waits on", "home", "Waits on " + home.Rows[0].WaitsOn,
			"Waits on \u2068\ufffdlive\u2069, group \u2068fin\ufffd\ufffdance\u2069, \u2068Bob\ufffd Builder\u2069 (\u2068bob\u2069), anyone"},
		{"who requested the list's interrupt", "home", "Requested " + home.Rows[0].Requested, "Requested 30 minutes ago by \u2068eng\ufffdine\u2069"},
		{"who is refused", "refused", refused.Problem,
			"You are signed in as \u2068m\ufffdallory\u2069, who does not hold this host's operator role."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !strings.HasPrefix(tt.got, tt.want) {
				t.Errorf("the console says\n%q\nwant\n%q", tt.got, tt.want)
			}
			if shown := strings.NewReplacer("'", "&#39;").Replace(tt.want); !strings.Contains(pages[tt.page], shown) {
				t.Errorf("the %s page does not show %q", tt.page, shown)
			}
		})
	}
}
