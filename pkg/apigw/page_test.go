package apigw_test

import (
	"cmp"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/interrupthost/interrupthost/pkg/token"
)

// hostile is an approval whose every string tries to be markup.
const hostile = `{"kind":"approval","key":"k-page","timeoutMs":3600000,"data":{"artifactId":"inv-<b>1</b>","artifactType":"invoice","title":"Pay <script>alert(1)</script> & co","description":"Line one\n<img src=x onerror=alert(2)>","artifactData":{"amount":12400,"note":"</pre><script>alert(3)</script>"},"actions":["accept","reject","refine","edit-accept","ask"],"requiredApprovals":2,"approversList":["alice","bob","carol"]}}`

func (s *stack) page(t *testing.T, method, tok string, form url.Values) response {
	t.Helper()
	c := call{route: method + " /approve/{token}", params: map[string]string{"token": tok}}
	if form != nil {
		c.body, c.ctype = form.Encode(), "application/x-www-form-urlencoded"
	}
	return invoke(t, s.fn("approval-page"), c)
}

// doc parses a page, failing on anything a browser would run: a script element, an event
// handler attribute, a javascript: URL.
func doc(t *testing.T, r response) *html.Node {
	t.Helper()
	n, err := html.Parse(strings.NewReader(string(r.Body)))
	if err != nil {
		t.Fatal(err)
	}
	for d := range n.Descendants() {
		if d.Type != html.ElementNode {
			continue
		}
		if d.Data == "script" || d.Data == "iframe" || d.Data == "img" {
			t.Errorf("the page has a <%s> element", d.Data)
		}
		for _, a := range d.Attr {
			if strings.HasPrefix(a.Key, "on") || strings.Contains(strings.ToLower(a.Val), "javascript:") {
				t.Errorf("the page has %s=%q on <%s>", a.Key, a.Val, d.Data)
			}
		}
	}
	return n
}

// buttons lists the page's submit buttons by value (or text).
func buttons(n *html.Node) []string {
	var out []string
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && d.Data == "button" {
			v := ""
			for _, a := range d.Attr {
				if a.Key == "value" {
					v = a.Val
				}
			}
			if v == "" && d.FirstChild != nil {
				v = d.FirstChild.Data
			}
			out = append(out, v)
		}
	}
	return out
}

var formKeyRE = regexp.MustCompile(`name="formKey" value="([a-z0-9]+)"`)

// TestApprovalPageShowsAndNeverWrites: the page shows the approval with every string as text,
// under the security headers; a hundred GETs and HEADs write nothing.
func TestApprovalPageShowsAndNeverWrites(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "approve", hostile)
	tok := s.mintOK(t, "r1", "approve", `{"intent":"resolve","principal":"alice"}`).Token
	before := s.items(t)
	var r response
	for range 50 {
		r = s.page(t, "GET", tok, nil)
		if h := s.page(t, "HEAD", tok, nil); h.Status != 200 || len(h.Body) != 0 || h.Headers["Content-Security-Policy"] == "" {
			t.Fatalf("HEAD: %d %v %q", h.Status, h.Headers, h.Body)
		}
	}
	if after := s.items(t); after != before {
		t.Fatalf("GET and HEAD wrote: %s, then %s", before, after)
	}
	if r.Status != 200 {
		t.Fatalf("GET: %d %s", r.Status, r.Body)
	}
	for k, want := range map[string]string{
		"Content-Type": "text/html; charset=utf-8", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
		"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
	} {
		if r.Headers[k] != want {
			t.Errorf("%s: %q, want %q", k, r.Headers[k], want)
		}
	}
	csp := r.Headers["Content-Security-Policy"]
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") || strings.Contains(csp, "script-src") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	n := doc(t, r)
	body := string(r.Body)
	for _, want := range []string{
		"Pay &lt;script&gt;alert(1)&lt;/script&gt; &amp; co", "invoice inv-&lt;b&gt;1&lt;/b&gt;", "&lt;img src=x onerror=alert(2)&gt;",
		"&lt;/pre&gt;&lt;script&gt;alert(3)&lt;/script&gt;", "Deciding as", "alice", "0 of 2 needed", "alice, bob, carol",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if got := strings.Join(buttons(n), ","); got != "accept,reject,Accept with these edits,Send back for changes,Ask" {
		t.Errorf("buttons %s", got)
	}
	if strings.Contains(body, `name="decidedBy"`) {
		t.Error("a link with a principal asks for a name")
	}
}

// TestApprovalPageDecides: a posted form votes as the token's principal; the same form again is
// the same vote; each action's fields reach the resume value; the outcome is a page.
func TestApprovalPageDecides(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "approve", hostile)
	alice := s.mintOK(t, "r1", "approve", `{"intent":"resolve","principal":"alice"}`).Token
	bob := s.mintOK(t, "r1", "approve", `{"intent":"resolve","principal":"bob"}`).Token
	carol := s.mintOK(t, "r1", "approve", `{"intent":"resolve","principal":"carol"}`).Token

	key := formKeyRE.FindStringSubmatch(string(s.page(t, "GET", alice, nil).Body))[1]
	form := url.Values{"formKey": {key}, "action": {"accept"}, "feedback": {"Fine <by> me"}}
	first := s.page(t, "POST", alice, form)
	if first.Status != 200 || !strings.Contains(string(first.Body), "Your vote (accept) was recorded") {
		t.Fatalf("accept: %d %s", first.Status, first.Body)
	}
	again := s.page(t, "POST", alice, form)
	if again.Status != 200 || !strings.Contains(string(again.Body), "Your vote (accept) was recorded") {
		t.Errorf("the same form again: %d %s", again.Status, again.Body)
	}
	if got := strings.Join(s.eventTypes(t, "acme", "r1"), " "); got != "interrupt.requested approval.requested interrupt.voted" {
		t.Fatalf("events %s", got)
	}
	if r := s.page(t, "GET", alice, nil); !strings.Contains(string(r.Body), "You voted accept") || len(buttons(doc(t, r))) != 0 {
		t.Errorf("alice's page after her vote: %s", r.Body)
	}
	other := url.Values{"formKey": {key}, "action": {"reject"}}
	if r := s.page(t, "POST", alice, other); r.Status != 422 {
		t.Errorf("the form key with another decision: %d %s", r.Status, r.Body)
	}

	// A mistake renders the form again, with what was wrong and what was typed.
	bad := url.Values{"formKey": {"k-bob"}, "action": {"edit-accept"}, "editedArtifactData": {`{"amount": 12,`}}
	if r := s.page(t, "POST", bob, bad); r.Status != 400 || !strings.Contains(string(r.Body), "not valid JSON") || !strings.Contains(string(r.Body), `{&#34;amount&#34;: 12,`) {
		t.Errorf("invalid edit: %d %s", r.Status, r.Body)
	}
	edit := url.Values{"formKey": {"k-bob-2"}, "action": {"edit-accept"}, "editedArtifactData": {`{"amount": 12000}`}}
	if r := s.page(t, "POST", bob, edit); r.Status != 200 || !strings.Contains(string(r.Body), "it decides the approval") {
		t.Fatalf("edit-accept: %d %s", r.Status, r.Body)
	}
	commits := s.commits(t, "acme", "r1")
	last := string(commits[len(commits)-1].Events[1].Payload)
	if !strings.Contains(last, `"decidedBy":"bob"`) || !strings.Contains(last, `"editedArtifactData":{"amount":12000}`) {
		t.Errorf("the releasing commit: %s", last)
	}
	if r := s.page(t, "GET", carol, nil); r.Status != 409 || len(buttons(doc(t, r))) != 0 || !strings.Contains(string(r.Body), "already decided") {
		t.Errorf("carol after the release: %d %s", r.Status, r.Body)
	}
	if r := s.page(t, "POST", carol, url.Values{"formKey": {"k-c"}, "action": {"reject"}}); r.Status != 409 {
		t.Errorf("carol posts after the release: %d %s", r.Status, r.Body)
	}
}

// TestApprovalPageRefusals: the token surface's statuses, as pages.
func TestApprovalPageRefusals(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	v := s.mustRequest(t, "r1", "approve", hostile)
	inspect := s.mintOK(t, "r1", "approve", `{"intent":"inspect"}`).Token
	// A link without principal to an approval with approvers, as delivered before links went to
	// people: the host mints none any more, and those outstanding still decide nothing.
	anyone := s.forge(t, s.signer(t, "kA"), token.Claims{Tenant: "acme", RunID: "r1", NodeID: "approve", InterruptID: v.InterruptID})
	if r := s.page(t, "GET", inspect, nil); r.Status != 200 || len(buttons(doc(t, r))) != 0 || !strings.Contains(string(r.Body), "not decide it") {
		t.Errorf("inspect token: %d %s", r.Status, r.Body)
	}
	if r := s.page(t, "POST", inspect, url.Values{"action": {"accept"}}); r.Status != 403 || len(buttons(doc(t, r))) != 0 {
		t.Errorf("inspect token posts: %d %s", r.Status, r.Body)
	}
	if r := s.page(t, "GET", "ow2.hs256.kA.e30.AAAA", nil); r.Status != 401 || r.Headers["Content-Type"] != "text/html; charset=utf-8" {
		t.Errorf("bad token: %d %s", r.Status, r.Body)
	}
	if r := s.page(t, "GET", anyone, nil); len(buttons(doc(t, r))) != 0 || !strings.Contains(string(r.Body), "does not say who you are") {
		t.Errorf("a link without principal to an approval with approvers: %s", r.Body)
	}
	if r := s.page(t, "POST", anyone, url.Values{"formKey": {"k1"}, "action": {"reject"}, "decidedBy": {"carol"}}); r.Status != 403 || len(buttons(doc(t, r))) != 0 {
		t.Errorf("an anonymous link posts: %d %s", r.Status, r.Body)
	}
	s.clock.Advance(2 * time.Hour)
	if r := s.page(t, "GET", inspect, nil); r.Status != 410 {
		t.Errorf("past the deadline: %d", r.Status)
	}
}

// TestUnnamedLink: an approval without approvers is decided from a link without principal by
// whoever holds it, who says who they are.
func TestUnnamedLink(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "approve", example(t, "approval"))
	tok := s.mintOK(t, "r1", "approve", `{"intent":"resolve"}`).Token
	if r := s.page(t, "GET", tok, nil); !strings.Contains(string(r.Body), `name="decidedBy"`) {
		t.Fatalf("no name field: %s", r.Body)
	}
	before := s.items(t)
	for _, c := range []struct {
		form   url.Values
		ctype  string
		status int
	}{
		{url.Values{"action": {"accept"}}, "", 400},                        // no name
		{url.Values{"action": {"approve"}, "decidedBy": {"dan"}}, "", 400}, // no such action
		{url.Values{"action": {"ask"}, "decidedBy": {"dan"}}, "", 400},     // no question
		{url.Values{"action": {"accept"}, "decidedBy": {"dan"}}, "application/json", 415},
	} {
		req := call{route: "POST /approve/{token}", params: map[string]string{"token": tok}, body: c.form.Encode(), ctype: cmp.Or(c.ctype, "application/x-www-form-urlencoded")}
		if r := invoke(t, s.fn("approval-page"), req); r.Status != c.status || r.Headers["Content-Type"] != "text/html; charset=utf-8" {
			t.Errorf("%v (%s): %d, want %d", c.form, c.ctype, r.Status, c.status)
		}
	}
	if after := s.items(t); after != before {
		t.Errorf("refusals wrote: %s, then %s", before, after)
	}
	r := s.page(t, "POST", tok, url.Values{"formKey": {"k1"}, "action": {"accept"}, "decidedBy": {"Dan <dan@example.com>"}})
	if r.Status != 200 || !strings.Contains(string(r.Body), "it decides the approval") {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	commits := s.commits(t, "acme", "r1")
	if got := string(commits[len(commits)-1].Events[1].Payload); !strings.Contains(got, `"decidedBy":"Dan <dan@example.com>"`) {
		t.Errorf("resolved with %s", got)
	}
}

// TestClarificationPage: questions become fields typed by their schemas; the answers resolve.
func TestClarificationPage(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "ask", `{"kind":"clarification","key":"c1","data":{"questions":[{"id":"address","question":"Ship to?","schema":{"type":"string","minLength":5}},{"id":"express","question":"Express?","schema":{"type":"boolean"}},{"id":"count","question":"How many?","schema":{"type":"integer","minimum":1}},{"id":"size","question":"Size?","schema":{"enum":["S","M","L"]}}]}}`)
	tok := s.mintOK(t, "r1", "ask", `{"intent":"resolve","principal":"alice"}`).Token
	r := s.page(t, "GET", tok, nil)
	body := string(r.Body)
	for _, want := range []string{`type="checkbox" id="q-express"`, `type="number" step="any" id="q-count"`, `<select id="q-size"`, `type="text" id="q-address"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	short := url.Values{"formKey": {"k1"}, "q.address": {"Rue"}, "q.count": {"2"}, "q.size": {"M"}}
	if r := s.page(t, "POST", tok, short); r.Status != 400 || !strings.Contains(string(r.Body), "Answers address: String length") {
		t.Errorf("a short address: %d %s", r.Status, r.Body)
	}
	good := url.Values{"formKey": {"k2"}, "q.address": {"1 Rue de Rivoli"}, "q.express": {"true"}, "q.count": {"2"}, "q.size": {"M"}}
	if r := s.page(t, "POST", tok, good); r.Status != 200 {
		t.Fatalf("answers: %d %s", r.Status, r.Body)
	}
	commits := s.commits(t, "acme", "r1")
	if got := string(commits[len(commits)-1].Events[0].Payload); !strings.Contains(got, `"resumeValue":{"answers":{"address":"1 Rue de Rivoli","count":2,"express":true,"size":"M"}}`) {
		t.Errorf("resolved with %s", got)
	}
}

// FuzzApprovalPage: whatever is posted to the page, with whatever token, it answers a page,
// never a 5xx, and writes nothing when it refuses.
func FuzzApprovalPage(f *testing.F) {
	s := newStack(f)
	s.mustRequest(f, "r1", "n1", hostile)
	s.mustRequest(f, "r1", "n2", example(f, "clarification"))
	s.mustRequest(f, "r1", "n3", example(f, "approval"))
	var toks []string
	for _, m := range []string{`"n1", "alice"`, `"n2", "bob"`, `"n3", ""`} {
		node, who, _ := strings.Cut(m, ", ")
		toks = append(toks, s.mintOK(f, "r1", strings.Trim(node, `"`), `{"intent":"resolve","principal":`+who+`}`).Token)
	}
	for _, tok := range toks {
		f.Add("POST", "application/x-www-form-urlencoded", tok, "formKey=k&action=accept&decidedBy=dan")
		f.Add("GET", "", tok, "")
	}
	f.Add("POST", "application/x-www-form-urlencoded", toks[1], "formKey=k2&q.address=1+Main+Street&q.express=yes")
	f.Add("POST", "application/x-www-form-urlencoded", toks[0], "action=edit-accept&editedArtifactData=%7B%22a%22%3A1%7D&formKey=k3")
	f.Add("HEAD", "text/plain", "ow2.hs256.x.y.z", "%zz&&==")
	f.Fuzz(func(t *testing.T, method, ctype, tok, body string) {
		switch method {
		case "GET", "HEAD", "POST":
		default:
			method = "POST"
		}
		before := s.items(t)
		r := invoke(t, s.fn("approval-page"), call{route: method + " /approve/{token}", params: map[string]string{"token": tok}, body: body, ctype: cmp.Or(ctype, "-")})
		if r.Status >= 500 {
			t.Fatalf("answered %d: %s", r.Status, r.Body)
		}
		if r.Headers["Content-Type"] != "text/html; charset=utf-8" || r.Headers["Content-Security-Policy"] == "" {
			t.Fatalf("not a page: %v", r.Headers)
		}
		if (r.Status >= 400 || method != "POST") && s.items(t) != before {
			t.Fatalf("%s answered %d, yet wrote", method, r.Status)
		}
	})
}
