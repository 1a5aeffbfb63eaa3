package apigw_test

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/apigw/routes"
	"github.com/interrupthost/interrupthost/pkg/console"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// consoleBrowser is the console function and the approval page's (whose callback completes
// the console's sign-in too) over one stack, signing in at the local identity provider.
type consoleBrowser struct {
	page *signedInPage
	fn   apigw.Handler
}

func (s *stack) console(t testing.TB) *consoleBrowser {
	t.Helper()
	p := s.signedInPage(t)
	services := s.services
	services.SignIn = p.flow
	fn, err := functionOf(apigw.New(slog.New(slog.DiscardHandler), apigw.Options{PublicBaseURL: p.base}), "console", services)
	if err != nil {
		t.Fatal(err)
	}
	return &consoleBrowser{page: p, fn: fn}
}

// do sends the console what API Gateway would for method and path, with the browser's cookies
// and a form.
func (b *consoleBrowser) do(t testing.TB, method, path string, cookies []string, form string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	req, ok := consoleRequest(method, path)
	if !ok {
		t.Fatalf("%s %s is no route of the console", method, path)
	}
	req.Cookies = cookies
	if method == http.MethodPost {
		req.Body, req.Headers["content-type"] = form, "application/x-www-form-urlencoded"
	}
	req.RequestContext.RouteKey, req.RequestContext.HTTP.Method = req.RouteKey, method
	resp, err := b.fn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// consoleRequest is what API Gateway sends the console for method and path, and whether the
// console serves that route at all (the gateway routes nothing else to it).
func consoleRequest(method, path string) (events.APIGatewayV2HTTPRequest, bool) {
	u, err := url.Parse(path)
	if err != nil {
		return events.APIGatewayV2HTTPRequest{}, false
	}
	req := events.APIGatewayV2HTTPRequest{RawPath: u.Path, RawQueryString: u.RawQuery, Headers: map[string]string{}, PathParameters: map[string]string{}, QueryStringParameters: map[string]string{}}
	for k, v := range u.Query() {
		req.QueryStringParameters[k] = strings.Join(v, ",")
	}
	req.RouteKey = method + " " + u.Path
	switch parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/"); {
	case len(parts) == 3 && parts[0] == "console" && parts[1] == "runs":
		req.RouteKey, req.PathParameters["runId"] = method+" /console/runs/{runId}", parts[2]
	case len(parts) == 4 && parts[0] == "console" && parts[1] == "runs":
		req.RouteKey, req.PathParameters["runId"] = method+" /console/runs/{runId}/"+parts[3], parts[2]
	}
	for _, o := range routes.Operations() {
		if o.Function == "console" && o.Route == req.RouteKey {
			return req, true
		}
	}
	return req, false
}

// signIn signs user of tenant in from the console's first page, through the identity provider
// and the approval page's callback, and answers the session cookie.
func (b *consoleBrowser) signIn(t testing.TB, user, tenant string) string {
	t.Helper()
	first := b.do(t, "GET", "/console", nil, "")
	if first.StatusCode != http.StatusSeeOther || len(first.Cookies) != 1 {
		t.Fatalf("the console without a session: %d %v", first.StatusCode, first.Cookies)
	}
	return b.page.signInAt(t, first, "/console", user, tenant)
}

// TestTheConsole: olga, an operator of acme, sees what waits (a 2-of-2 approval with alice's
// vote, waiting on bob by his contact's name; a question), finds it by run and by kind, reads the
// run's story, and cancels it with a reason, which only a form carrying the session's CSRF value
// and a reason does; mallory of acme, no operator, sees nothing of the tenant; olga signed in to
// another tenant finds no run of acme's.
func TestTheConsole(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "approve", `{"kind":"approval","key":"k1","timeoutMs":3600000,"data":{"artifactId":"4471","artifactType":"invoice","title":"Pay invoice 4471","actions":["accept","reject"],"requiredApprovals":2,"approversList":["alice","bob"],"artifactData":{"supplier":"ACME","amount":1240}}}`)
	s.mustRequest(t, "r2", "ask", `{"kind":"clarification","key":"k2","data":{"questions":[{"id":"po","question":"Which purchase order?"}]}}`)
	if r := s.resolve(t, approver, "r1", "approve", `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","feedback":"Fine by me"}`); r.Status != http.StatusAccepted {
		t.Fatalf("alice's vote: %d %s", r.Status, r.Body)
	}
	if _, _, err := s.services.Contacts.Put(context.Background(), interrupt.Principal{Subject: "ops", Tenant: "acme"}, "principal", "bob", contacts.Request{Name: "Bob Builder", Email: "bob@example.com"}); err != nil {
		t.Fatal(err)
	}
	s.reindex(t, engine, "r1", "r2")
	b := s.console(t)
	olga := b.signIn(t, "olga", "acme")

	home := b.do(t, "GET", "/console", []string{olga}, "")
	if home.StatusCode != http.StatusOK || home.Headers["Content-Security-Policy"] != console.CSP || home.Headers["X-Frame-Options"] != "DENY" || home.Headers["Cache-Control"] != "no-store" {
		t.Fatalf("the console: %d %v", home.StatusCode, home.Headers)
	}
	// Each value inside the console's words is isolated (words.Isolated; pkg/console's
	// TestTheConsolesWordsStayInOrder): "\u2068Bob Builder\u2069 (\u2068bob\u2069)".
	for _, want := range []string{"Pay invoice 4471", "\u2068Bob Builder\u2069 (\u2068bob\u2069)", "1 of 2 approvals", `href="console/runs/r1"`, "Which purchase order?", "2 waiting on this page", "Signed in as olga"} {
		if !strings.Contains(home.Body, want) {
			t.Errorf("the console lacks %q", want)
		}
	}
	if strings.Contains(home.Body, "<script") {
		t.Error("the console has a script")
	}
	for path, want := range map[string][2]string{
		"/console?kind=clarification": {"Which purchase order?", "Pay invoice 4471"},
		"/console?run=r1":             {"Pay invoice 4471", "Which purchase order?"},
	} {
		r := b.do(t, "GET", path, []string{olga}, "")
		if r.StatusCode != http.StatusOK || !strings.Contains(r.Body, want[0]) || strings.Contains(r.Body, want[1]) {
			t.Errorf("%s: %d, want %q and not %q", path, r.StatusCode, want[0], want[1])
		}
	}
	if r := b.do(t, "GET", "/console?run=r%231", []string{olga}, ""); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a search that is no run id: %d", r.StatusCode)
	}

	run := b.do(t, "GET", "/console/runs/r1", []string{olga}, "")
	for _, want := range []string{"Pay invoice 4471", "<strong>\u2068alice\u2069</strong> voted accept (1 of 2 approvals)", "<blockquote>Fine by me</blockquote>",
		"Waits on \u2068Bob Builder\u2069 (\u2068bob\u2069)", "\u2068alice\u2069 voted accept: “\u2068Fine by me\u2069”",
		"<strong>\u2068engine\u2069</strong> asked for an approval at step approve: “\u2068Pay invoice 4471\u2069”", `href="../../approve/r1/`, `action="./r1/cancel"`, "<dt>Supplier</dt><dd>ACME</dd>"} {
		if !strings.Contains(run.Body, want) {
			t.Errorf("the run's page lacks %q", want)
		}
	}
	csrf := csrfRE.FindStringSubmatch(run.Body)
	if csrf == nil {
		t.Fatalf("the run's page has no CSRF value:\n%s", run.Body)
	}
	before := s.items(t)
	for _, form := range []url.Values{{"reason": {"duplicate invoice"}}, {"reason": {"duplicate invoice"}, "csrf": {"forged"}}, {"csrf": {csrf[1]}, "reason": {"  "}}} {
		r := b.do(t, "POST", "/console/runs/r1/cancel", []string{olga}, form.Encode())
		if r.StatusCode != http.StatusForbidden && r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "Nothing was changed") {
			t.Errorf("cancel with %v: %d", form, r.StatusCode)
		}
		if strings.Contains(r.Body, `action="./r1/cancel"`) || !strings.Contains(r.Body, `action=".././r1/cancel"`) {
			t.Errorf("a refused form's page, answered at the form's path, does not link one level up")
		}
	}
	if after := s.items(t); after != before {
		t.Fatal("a refused cancel wrote")
	}
	ended := b.do(t, "POST", "/console/runs/r1/cancel", []string{olga}, url.Values{"csrf": {csrf[1]}, "reason": {"duplicate invoice"}}.Encode())
	if ended.StatusCode != http.StatusSeeOther || ended.Headers["Location"] != "../r1" {
		t.Fatalf("cancel: %d %v\n%s", ended.StatusCode, ended.Headers, ended.Body)
	}
	events := s.eventTypes(t, "acme", "r1")
	if events[len(events)-1] != interrupt.EventRunCancelled {
		t.Fatalf("events %v", events)
	}
	after := b.do(t, "GET", "/console/runs/r1", []string{olga}, "")
	if !strings.Contains(after.Body, "<strong>\u2068olga\u2069</strong> cancelled the run") || !strings.Contains(after.Body, "<blockquote>duplicate invoice</blockquote>") || strings.Contains(after.Body, "/cancel") {
		t.Errorf("the run's page after its cancel:\n%s", after.Body)
	}

	mallory := b.signIn(t, "mallory", "acme")
	for _, path := range []string{"/console", "/console/runs/r2"} {
		r := b.do(t, "GET", path, []string{mallory}, "")
		if r.StatusCode != http.StatusForbidden || strings.Contains(r.Body, "r2") || strings.Contains(r.Body, "purchase order") || !strings.Contains(r.Body, "signed in as \u2068mallory\u2069") {
			t.Errorf("%s as mallory: %d\n%s", path, r.StatusCode, r.Body)
		}
	}
	elsewhere := b.signIn(t, "olga", "globex")
	if r := b.do(t, "GET", "/console/runs/r2", []string{elsewhere}, ""); r.StatusCode != http.StatusNotFound || strings.Contains(r.Body, "purchase order") {
		t.Errorf("acme's run from globex: %d", r.StatusCode)
	}
	if r := b.do(t, "GET", "/console", []string{elsewhere}, ""); strings.Contains(r.Body, "purchase order") || !strings.Contains(r.Body, "Nothing waits") {
		t.Errorf("globex's console lists acme's runs:\n%s", r.Body)
	}
}

// TestConsoleAfterSignOut: an operator's sign-out (on the approval page's function) ends the
// session on the console too: the old cookie, sent again, opens no page (a new sign-in) and
// ends no run (401), and nothing is written. While the session store fails, the console lets
// nobody in and ends nothing (503), rather than asking them to sign in again.
func TestConsoleAfterSignOut(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "ask", `{"kind":"clarification","key":"k1","data":{"questions":[{"id":"po","question":"Which purchase order?"}]}}`)
	b := s.console(t)
	olga := b.signIn(t, "olga", "acme")
	run := b.do(t, "GET", "/console/runs/r1", []string{olga}, "")
	csrf := csrfRE.FindStringSubmatch(run.Body)
	if run.StatusCode != http.StatusOK || csrf == nil {
		t.Fatalf("the run's page: %d\n%s", run.StatusCode, run.Body)
	}
	cancel := url.Values{"csrf": {csrf[1]}, "reason": {"duplicate"}}.Encode()
	before := s.items(t)

	b.page.sessions.down.Store(true)
	for _, c := range []struct{ method, path, form string }{{"GET", "/console", ""}, {"GET", "/console/runs/r1", ""}, {"POST", "/console/runs/r1/cancel", cancel}} {
		if r := b.do(t, c.method, c.path, []string{olga}, c.form); r.StatusCode != http.StatusServiceUnavailable || len(r.Cookies) != 0 {
			t.Errorf("%s %s with the session store down: %d, want 503", c.method, c.path, r.StatusCode)
		}
	}
	b.page.sessions.down.Store(false)

	if r := b.page.do(t, "POST", "/signin/signout", []string{olga}, url.Values{"csrf": {csrf[1]}}.Encode()); r.StatusCode != http.StatusOK || len(r.Cookies) != 1 {
		t.Fatalf("sign-out: %d setting %v", r.StatusCode, r.Cookies)
	}
	for _, path := range []string{"/console", "/console/runs/r1"} {
		if r := b.do(t, "GET", path, []string{olga}, ""); r.StatusCode != http.StatusSeeOther || !strings.Contains(r.Headers["Location"], "/authorize?") {
			t.Errorf("%s with the signed-out cookie: %d %q, want a new sign-in", path, r.StatusCode, r.Headers["Location"])
		}
	}
	for _, end := range []string{"cancel", "complete"} {
		if r := b.do(t, "POST", "/console/runs/r1/"+end, []string{olga}, cancel); r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.Body, "nothing was changed") {
			t.Errorf("%s with the signed-out cookie: %d\n%s", end, r.StatusCode, r.Body)
		}
	}
	if after := s.items(t); after != before {
		t.Errorf("the signed-out cookie wrote: %s, then %s", before, after)
	}
}

// FuzzConsole: whatever a signed-in operator's browser (or another site's form) sends the console,
// it answers a page, never a 5xx, and writes nothing unless it redirects after a form.
func FuzzConsole(f *testing.F) {
	s := newStack(f)
	s.mustRequest(f, "r1", "n1", hostile)
	b := s.console(f)
	olga := b.signIn(f, "olga", "acme")
	csrf := csrfRE.FindStringSubmatch(b.do(f, "GET", "/console/runs/r1", []string{olga}, "").Body)[1]
	f.Add("GET", "/console?kind=approval&after=eHl6", "")
	f.Add("GET", "/console/runs/r1?after=1", "")
	f.Add("POST", "/console/runs/r1/cancel", "csrf="+csrf+"&reason=%00")
	f.Add("POST", "/console/runs/r1/resend", "csrf="+csrf+"&subscription=s1&eventId=r1%3A1%3A0")
	f.Add("POST", "/console/runs/r2/complete", "reason=x")
	f.Add("HEAD", "/console/runs/%23", "")
	f.Fuzz(func(t *testing.T, method, path, form string) {
		switch method {
		case "GET", "HEAD", "POST":
		default:
			method = "GET"
		}
		if _, ok := consoleRequest(method, path); !ok {
			return // API Gateway routes it elsewhere, or nowhere
		}
		before := s.items(t)
		r := b.do(t, method, path, []string{olga}, form)
		if r.StatusCode >= 500 {
			t.Fatalf("answered %d: %s", r.StatusCode, r.Body)
		}
		if r.StatusCode == http.StatusSeeOther && method == "POST" {
			return // a run ended or a delivery resent: back to the run's page
		}
		if r.Headers["Content-Type"] != "text/html; charset=utf-8" || r.Headers["Content-Security-Policy"] != console.CSP {
			t.Fatalf("not a page: %v", r.Headers)
		}
		if s.items(t) != before {
			t.Fatalf("%s %s answered %d, yet wrote", method, path, r.StatusCode)
		}
	})
}

// TestTheConsoleKeepsItsSearchOverSignIn: a console link opened without a session comes back,
// once signed in, to the page as it was asked: its search, filter and page (?run=, ?kind=,
// ?after=), and nothing else of its query.
func TestTheConsoleKeepsItsSearchOverSignIn(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "approve", `{"kind":"approval","key":"k1","data":{"artifactId":"4471","artifactType":"invoice","title":"Pay invoice 4471","actions":["accept","reject"],"approversList":["alice"]}}`)
	s.reindex(t, engine, "r1")
	for path, back := range map[string]string{
		"/console?run=r1":                           "/console?run=r1",
		"/console?run=r1&kind=approval&x=y":         "/console?kind=approval&run=r1",
		"/console/runs/r1?after=0":                  "/console/runs/r1?after=0",
		"/console?run=" + strings.Repeat("a", 1100): "/console",
	} {
		b := s.console(t)
		first := b.do(t, "GET", path, nil, "")
		if first.StatusCode != http.StatusSeeOther || len(first.Cookies) != 1 {
			t.Fatalf("%s without a session: %d %v", path, first.StatusCode, first.Cookies)
		}
		olga := b.page.signInAt(t, first, back, "olga", "acme")
		if back != "/console?run=r1" {
			continue
		}
		if r := b.do(t, "GET", back, []string{olga}, ""); r.StatusCode != http.StatusOK || !strings.Contains(r.Body, `name="run" value="r1"`) || !strings.Contains(r.Body, "Pay invoice 4471") {
			t.Errorf("%s after the sign-in: %d, the search for r1 not shown", back, r.StatusCode)
		}
	}
}

// TestTheConsoleListsEveryRun: olga finds a run that stopped waiting: the pending search for a
// cancelled run says it waits on nothing and links the list of every run, which finds it by its
// status, by a word of its title and by its id's start; the list pages across more runs than a
// page holds, each run once; a search it cannot run is 400 with the form, and mallory, no
// operator, sees none of it.
func TestTheConsoleListsEveryRun(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "pay-1", "approve", `{"kind":"approval","key":"k1","data":{"artifactId":"4471","artifactType":"invoice","title":"Pay invoice 4471","actions":["accept","reject"],"approversList":["alice"]}}`)
	s.mustRequest(t, "ask-1", "ask", `{"kind":"clarification","key":"k2","data":{"questions":[{"id":"po","question":"Which purchase order?"}]}}`)
	s.reindex(t, engine, "pay-1", "ask-1")
	b := s.console(t)
	olga := b.signIn(t, "olga", "acme")
	run := b.do(t, "GET", "/console/runs/pay-1", []string{olga}, "")
	csrf := csrfRE.FindStringSubmatch(run.Body)
	if csrf == nil || !strings.Contains(run.Body, `href="../runs"`) {
		t.Fatalf("the run's page has no CSRF value or no link to every run:\n%s", run.Body)
	}
	if r := b.do(t, "POST", "/console/runs/pay-1/cancel", []string{olga}, url.Values{"csrf": {csrf[1]}, "reason": {"duplicate"}}.Encode()); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", r.StatusCode)
	}
	s.reindex(t, engine, "pay-1")

	if r := b.do(t, "GET", "/console?run=pay-1", []string{olga}, ""); !strings.Contains(r.Body, "waits on nothing now") || !strings.Contains(r.Body, `href="console/runs?q=pay-1"`) {
		t.Errorf("the pending search for a cancelled run does not lead to every run:\n%s", r.Body)
	}
	for path, want := range map[string]struct{ has, hasNot []string }{
		"/console/runs":                                   {[]string{"Pay invoice 4471", "Which purchase order?", "Cancelled", "Waits on 1 interrupt", "2 runs on this page, most recent activity first", `href="runs/pay-1"`, `href="../console"`, `action="../signin/signout"`}, nil},
		"/console/runs?status=cancelled":                  {[]string{"Pay invoice 4471", `<option value="cancelled" selected>`}, []string{"Which purchase order?"}},
		"/console/runs?status=waiting":                    {[]string{"Which purchase order?"}, []string{"Pay invoice 4471"}},
		"/console/runs?q=invoice":                         {[]string{"Pay invoice 4471", `value="invoice"`}, []string{"Which purchase order?"}},
		"/console/runs?q=Purchase+order":                  {[]string{"Which purchase order?"}, []string{"Pay invoice 4471"}},
		"/console/runs?q=pay":                             {[]string{"Pay invoice 4471", `by run id, as they start with &#34;pay&#34;`}, []string{"Which purchase order?"}},
		"/console/runs?q=nothing":                         {[]string{"No run matches."}, []string{"Pay invoice 4471"}},
		"/console/runs?since=2000-01-01&until=2000-01-02": {[]string{"No run matches."}, []string{"Pay invoice 4471"}},
	} {
		r := b.do(t, "GET", path, []string{olga}, "")
		if r.StatusCode != http.StatusOK || r.Headers["Content-Security-Policy"] != console.CSP {
			t.Errorf("%s: %d", path, r.StatusCode)
		}
		for _, w := range want.has {
			if !strings.Contains(r.Body, w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
		for _, w := range want.hasNot {
			if strings.Contains(r.Body, w) {
				t.Errorf("%s has %q", path, w)
			}
		}
	}
	before := s.items(t)
	for _, path := range []string{"/console/runs?status=waiting-approval", "/console/runs?since=yesterday", "/console/runs?since=2026-12-02&until=2026-12-01",
		"/console/runs?after=%21", "/console/runs?q=" + strings.Repeat("a+", 9)} {
		r := b.do(t, "GET", path, []string{olga}, "")
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "That search is not one the console can run") || !strings.Contains(r.Body, `name="q"`) {
			t.Errorf("%s: %d\n%s", path, r.StatusCode, r.Body)
		}
	}
	if after := s.items(t); after != before {
		t.Error("a refused search wrote")
	}
	mallory := b.signIn(t, "mallory", "acme")
	if r := b.do(t, "GET", "/console/runs", []string{mallory}, ""); r.StatusCode != http.StatusForbidden || strings.Contains(r.Body, "Pay invoice") {
		t.Errorf("/console/runs as mallory: %d", r.StatusCode)
	}

	var want []string
	for i := range host.DefaultRunsLimit + 5 {
		id := fmt.Sprintf("bulk-%02d", i)
		s.mustRequest(t, id, "approve", fmt.Sprintf(`{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"x","title":"Routine %02d","actions":["accept","reject"],"approversList":["alice"]}}`, i))
		s.reindex(t, engine, id)
		want = append(want, id)
	}
	seen, path := map[string]bool{}, "/console/runs?q=routine"
	for pages := 1; ; pages++ {
		r := b.do(t, "GET", path, []string{olga}, "")
		for _, m := range runLinkRE.FindAllStringSubmatch(r.Body, -1) {
			if seen[m[1]] {
				t.Errorf("page %d lists %s again", pages, m[1])
			}
			seen[m[1]] = true
		}
		next := nextPageRE.FindStringSubmatch(r.Body)
		if next == nil {
			if pages != 2 {
				t.Errorf("%d runs in %d pages, want 2", len(want), pages)
			}
			break
		}
		path = "/console/" + html.UnescapeString(next[1])
	}
	for _, id := range want {
		if !seen[id] {
			t.Errorf("%s was on no page", id)
		}
	}
}

var (
	runLinkRE  = regexp.MustCompile(`<h3><a href="runs/([^"]+)">`)
	nextPageRE = regexp.MustCompile(`<a href="(runs\?[^"]+)">Next page</a>`)
)
