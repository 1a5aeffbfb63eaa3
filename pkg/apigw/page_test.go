package apigw_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/net/html"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/testkeys"
	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/signin"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// hostile is an approval whose every string tries to be markup.
const hostile = `{"kind":"approval","key":"k-page","timeoutMs":3600000,"data":{"artifactId":"inv-<b>1</b>","artifactType":"invoice","title":"Pay <script>alert(1)</script> & co","description":"Line one\n<img src=x onerror=alert(2)>","artifactData":{"amount":12400,"note":"</pre><script>alert(3)</script>"},"actions":["accept","reject","refine","edit-accept","ask"],"requiredApprovals":2,"approversList":["alice","bob","carol"]}}`

func (s *stack) page(t *testing.T, method, tok string, form url.Values, cookies ...string) response {
	t.Helper()
	c := call{route: method + " /approve/{token}", params: map[string]string{"token": tok}, rawPath: "/approve/" + tok, cookies: cookies}
	if form != nil {
		c.body, c.ctype = form.Encode(), "application/x-www-form-urlencoded"
	}
	return invoke(t, s.fn("approval-page"), c)
}

// decide posts form on tok's page as a browser does: a recorded decision answers 303 to the
// page itself with the recorded cookie (no Path: the page's directory as the browser sees it;
// HttpOnly, Secure, SameSite=Lax, a minute), and the answer is the GET the browser then makes,
// which clears the cookie. A
// refused decision's page is answered as it is.
func (s *stack) decide(t *testing.T, tok string, form url.Values) response {
	t.Helper()
	r := s.page(t, "POST", tok, form)
	if r.Status != http.StatusSeeOther {
		return r
	}
	if r.Headers["Location"] != "./"+tok || len(r.Cookies) != 1 || len(r.Body) != 0 {
		t.Fatalf("the redirect after a decision: %d %v %v %q", r.Status, r.Headers, r.Cookies, r.Body)
	}
	set, err := http.ParseSetCookie(r.Cookies[0])
	if err != nil || set.Path != "" || !set.Secure || !set.HttpOnly || set.SameSite != http.SameSiteLaxMode || set.MaxAge != 60 {
		t.Fatalf("the recorded cookie: %q %v", r.Cookies[0], err)
	}
	g := s.page(t, "GET", tok, nil, set.Name+"="+set.Value)
	if len(g.Cookies) != 1 || !strings.Contains(g.Cookies[0], "Max-Age=0") || strings.Contains(g.Cookies[0], "Path=") {
		t.Errorf("the page after a decision does not clear the recorded cookie: %v", g.Cookies)
	}
	return g
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
		"Asked by", "engine, ", `<p class="reference">Run r1 · step approve</p>`,
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
	first := s.decide(t, alice, form)
	if first.Status != 200 || !strings.Contains(string(first.Body), "Your vote (accept) was recorded") || len(buttons(doc(t, first))) != 0 {
		t.Fatalf("accept: %d %s", first.Status, first.Body)
	}
	again := s.decide(t, alice, form)
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
	// Flat data is edited field by field, each value of its member's type.
	bad := url.Values{"formKey": {"k-bob"}, "action": {"edit-accept"}, "edit.amount": {"12,5x"}, "edit.note": {"<i>fine</i>"}}
	if r := s.page(t, "POST", bob, bad); r.Status != 400 || !strings.Contains(string(r.Body), "Amount must be a number") || !strings.Contains(string(r.Body), `value="12,5x"`) || !strings.Contains(string(r.Body), `value="&lt;i&gt;fine&lt;/i&gt;"`) {
		t.Errorf("invalid edit: %d %s", r.Status, r.Body)
	}
	edit := url.Values{"formKey": {"k-bob-2"}, "action": {"edit-accept"}, "edit.amount": {"12000"}, "edit.note": {"<i>fine</i>"}}
	if r := s.decide(t, bob, edit); r.Status != 200 || !strings.Contains(string(r.Body), "Your decision (edit-accept) was recorded, and it decided the approval") || !strings.Contains(string(r.Body), "Accepted with edits by bob") {
		t.Fatalf("edit-accept: %d %s", r.Status, r.Body)
	}
	// A recorded cookie the state does not bear out says nothing: carol did not accept.
	if r := s.page(t, "GET", carol, nil, "__Secure-ih-recorded=accept"); r.Status != 409 || strings.Contains(string(r.Body), "was recorded") {
		t.Errorf("carol's page with a recorded cookie of her own making: %d %s", r.Status, r.Body)
	}
	commits := s.commits(t, "acme", "r1")
	last := string(commits[len(commits)-1].Events[1].Payload)
	if !strings.Contains(last, `"decidedBy":"bob"`) || !strings.Contains(last, `"editedArtifactData":{"amount":12000,"note":"\u003ci\u003efine\u003c/i\u003e"}`) {
		t.Errorf("the releasing commit: %s", last)
	}
	r := s.page(t, "GET", carol, nil)
	if r.Status != 409 || len(buttons(doc(t, r))) != 0 || !strings.Contains(string(r.Body), "already decided: accepted with edits by bob") {
		t.Errorf("carol after the release: %d %s", r.Status, r.Body)
	}
	// What became of it, by whom, and every vote.
	for _, want := range []string{"Accepted with edits by bob", "alice accepted", "bob accepted with edits"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("carol's page does not say %q: %s", want, r.Body)
		}
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
	r := s.decide(t, tok, url.Values{"formKey": {"k1"}, "action": {"accept"}, "decidedBy": {"Dan <dan@example.com>"}})
	if r.Status != 200 || !strings.Contains(string(r.Body), "it decided the approval") {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	commits := s.commits(t, "acme", "r1")
	if got := string(commits[len(commits)-1].Events[1].Payload); !strings.Contains(got, `"decidedBy":"Dan <dan@example.com>"`) {
		t.Errorf("resolved with %s", got)
	}
}

// TestClarificationPage: questions become fields typed by their schemas (a boolean a yes-or-no
// choice, an enum a list, the schema's description a hint); the answers resolve; the page then
// says they were answered, each answer by its question, who answered and when.
func TestClarificationPage(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "ask", `{"kind":"clarification","key":"c1","data":{"questions":[{"id":"address","question":"Ship to?","schema":{"type":"string","minLength":5}},{"id":"express","question":"Express?","schema":{"type":"boolean"}},{"id":"count","question":"How many?","schema":{"type":"integer","minimum":1}},{"id":"size","question":"Size?","schema":{"enum":["S","M","L"],"description":"Pick the one that fits"}}]}}`)
	tok := s.mintOK(t, "r1", "ask", `{"intent":"resolve","principal":"alice"}`).Token
	r := s.page(t, "GET", tok, nil)
	body := string(r.Body)
	for _, want := range []string{`type="radio" name="q.express" value="true"`, `type="radio" name="q.express" value="false"`, `type="number" step="any" id="q-count"`, `<select id="q-size"`, `type="text" id="q-address"`, "Size?", "Pick the one that fits"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if r := s.page(t, "POST", tok, url.Values{"formKey": {"k0"}, "q.address": {"1 Rue de Rivoli"}, "q.count": {"2"}, "q.size": {"M"}}); r.Status != 400 || !strings.Contains(string(r.Body), "must be yes or no") {
		t.Errorf("no answer to a yes-or-no question: %d %s", r.Status, r.Body)
	}
	short := url.Values{"formKey": {"k1"}, "q.address": {"Rue"}, "q.express": {"false"}, "q.count": {"2"}, "q.size": {"M"}}
	if r := s.page(t, "POST", tok, short); r.Status != 400 || !strings.Contains(string(r.Body), "Ship to? must be at least 5 characters") {
		t.Errorf("a short address: %d %s", r.Status, r.Body)
	}
	good := url.Values{"formKey": {"k2"}, "q.address": {"1 Rue de Rivoli"}, "q.express": {"true"}, "q.count": {"2"}, "q.size": {"M"}}
	if r := s.decide(t, tok, good); r.Status != 200 || !strings.Contains(string(r.Body), "Your answers were recorded") || !strings.Contains(string(r.Body), "Answered") {
		t.Fatalf("answers: %d %s", r.Status, r.Body)
	}
	commits := s.commits(t, "acme", "r1")
	if got := string(commits[len(commits)-1].Events[0].Payload); !strings.Contains(got, `"resumeValue":{"answers":{"address":"1 Rue de Rivoli","count":2,"express":true,"size":"M"},"decidedBy":"alice","decidedAt":"20`) {
		t.Errorf("resolved with %s", got)
	}
	closed := string(s.page(t, "GET", tok, nil).Body)
	for _, want := range []string{"Questions answered", "Answered by alice", "<dt>Answered</dt>", "<dt>Ship to?</dt><dd>1 Rue de Rivoli</dd>", "<dt>How many?</dt><dd>2</dd>", "<dt>Express?</dt><dd>yes</dd>"} {
		if !strings.Contains(closed, want) {
			t.Errorf("the answered page lacks %s", want)
		}
	}
	if strings.Contains(closed, "A run needs your answers") || strings.Contains(closed, "Questions for you") {
		t.Errorf("the answered page still asks: %s", closed)
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
	f.Add("POST", "application/x-www-form-urlencoded", toks[2], url.Values{"formKey": {"k4"}, "action": {"edit-accept"}, "decidedBy": {"dan"}, "editedArtifactData": {manyOf(tinyNumber, 300)}}.Encode())
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
		if r.Status == http.StatusSeeOther && method == "POST" && r.Headers["Location"] == "./"+tok {
			return // a decision recorded: the browser is sent back to the page
		}
		if r.Headers["Content-Type"] != "text/html; charset=utf-8" || r.Headers["Content-Security-Policy"] == "" {
			t.Fatalf("not a page: %v", r.Headers)
		}
		if (r.Status >= 400 || method != "POST") && s.items(t) != before {
			t.Fatalf("%s answered %d, yet wrote", method, r.Status)
		}
	})
}

// issuerKey is the local identity provider's signing key, made once: RSA key generation is slow.
var issuerKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// signedInPage is the approval page's function over a stack's host with the sign-in, against
// the local identity provider on 127.0.0.1, whose base is also the page's public base, as the
// local stack serves them.
type signedInPage struct {
	fn   apigw.Handler
	flow *signin.Flow
	base string
	// sessions are the sign-in's sessions, in memory, which a test can make fail.
	sessions *sessionStore
	// logs are the function's log lines, JSON.
	logs *bytes.Buffer
	// setCookie is the last sign-in's session Set-Cookie value.
	setCookie string
}

func (s *stack) signedInPage(t testing.TB) *signedInPage {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = devjwt.NewProvider(issuerKey(), base, s.clock.Now)
	srv.Start()
	t.Cleanup(srv.Close)
	keys := testkeys.Static{ActiveKid: "k1", Keys: map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")}}
	sessions := &sessionStore{Sessions: inmem.NewSessions()}
	flow, err := signin.New(signin.Config{Issuer: devjwt.IssuerAt(base), ClientID: devjwt.Audience, Keys: keys, Sessions: sessions, Now: s.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	services := s.services
	services.SignIn = flow
	logs := &bytes.Buffer{}
	fn, err := functionOf(apigw.New(slog.New(slog.NewJSONHandler(logs, nil)), apigw.Options{PublicBaseURL: base}), "approval-page", services)
	if err != nil {
		t.Fatal(err)
	}
	return &signedInPage{fn: fn, flow: flow, base: base, sessions: sessions, logs: logs}
}

// sessionStore is the sign-in's sessions, which fail as DynamoDB unavailable while down.
type sessionStore struct {
	signin.Sessions
	down atomic.Bool
}

// errSessionsDown is the store's failure while down: unavailable, as a throttled table's.
var errSessionsDown = fmt.Errorf("the session store is down: %w", interrupt.ErrUnavailable)

func (s *sessionStore) PutSession(ctx context.Context, tenant, id string, expires time.Time) error {
	if s.down.Load() {
		return errSessionsDown
	}
	return s.Sessions.PutSession(ctx, tenant, id, expires)
}

func (s *sessionStore) Session(ctx context.Context, tenant, id string) (time.Time, bool, error) {
	if s.down.Load() {
		return time.Time{}, false, errSessionsDown
	}
	return s.Sessions.Session(ctx, tenant, id)
}

func (s *sessionStore) DeleteSession(ctx context.Context, tenant, id string) error {
	if s.down.Load() {
		return errSessionsDown
	}
	return s.Sessions.DeleteSession(ctx, tenant, id)
}

// do sends the function what API Gateway would for method and path (its route, a path of the
// signed-in page or the sign-in's), with the browser's cookies and a form.
func (p *signedInPage) do(t testing.TB, method, path string, cookies []string, form string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	req := events.APIGatewayV2HTTPRequest{RawPath: u.Path, RawQueryString: u.RawQuery, Cookies: cookies, Headers: map[string]string{}, PathParameters: map[string]string{}, QueryStringParameters: map[string]string{}}
	for k, v := range u.Query() {
		req.QueryStringParameters[k] = strings.Join(v, ",") // as API Gateway joins a repeated parameter
	}
	switch parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/"); {
	case len(parts) == 3 && parts[0] == "approve":
		req.RouteKey = method + " /approve/{runId}/{interruptId}"
		req.PathParameters["runId"], req.PathParameters["interruptId"] = parts[1], parts[2]
	default:
		req.RouteKey = method + " " + u.Path
	}
	if method == http.MethodPost {
		req.Body, req.Headers["content-type"] = form, "application/x-www-form-urlencoded"
	}
	req.RequestContext.RouteKey, req.RequestContext.HTTP.Method = req.RouteKey, method
	resp, err := p.fn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// pair is the "name=value" a browser sends back for a Set-Cookie value.
func pair(setCookie string) string {
	p, _, _ := strings.Cut(setCookie, ";")
	return p
}

// signIn plays the browser and the person: the page's redirect to the provider, its login form
// posted as user of tenant, and the callback, which answers the session cookie to send back.
func (p *signedInPage) signIn(t testing.TB, page, user, tenant string) (cookie, setCookie string) {
	t.Helper()
	r := p.do(t, "GET", page, nil, "")
	if r.StatusCode != http.StatusSeeOther || len(r.Cookies) != 1 {
		t.Fatalf("the page without a session: %d %v", r.StatusCode, r.Cookies)
	}
	cookie = p.signInAt(t, r, page, user, tenant)
	return cookie, p.setCookie
}

// signInAt follows r, a page's redirect to the provider, as signIn does, back to page: the
// session cookie to send back (and its Set-Cookie value in p.setCookie).
func (p *signedInPage) signInAt(t testing.TB, r events.APIGatewayV2HTTPResponse, page, user, tenant string) string {
	t.Helper()
	auth, err := url.Parse(r.Headers["Location"])
	if err != nil {
		t.Fatal(err)
	}
	params := auth.Query()
	params.Set("user", user)
	params.Set("tenant", tenant)
	auth.RawQuery = ""
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirects.PostForm(auth.String(), params)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(back.String(), p.base+devjwt.CallbackPath) {
		t.Fatalf("the provider answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	r = p.do(t, "GET", devjwt.CallbackPath+"?"+back.RawQuery, []string{pair(r.Cookies[0])}, "")
	if r.StatusCode != http.StatusSeeOther || r.Headers["Location"] != page {
		t.Fatalf("the callback: %d %q", r.StatusCode, r.Headers["Location"])
	}
	for _, c := range r.Cookies {
		if strings.HasPrefix(c, "__Host-ih-session=") {
			p.setCookie = c
			return pair(c)
		}
	}
	t.Fatalf("the callback set no session: %v", r.Cookies)
	return ""
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// formOf is the form key and CSRF token a signed-in page rendered.
func formOf(t *testing.T, r events.APIGatewayV2HTTPResponse) (key, csrf string) {
	t.Helper()
	k, c := formKeyRE.FindStringSubmatch(r.Body), csrfRE.FindStringSubmatch(r.Body)
	if r.StatusCode != http.StatusOK || k == nil || c == nil {
		t.Fatalf("the signed-in page: %d, without a form key or CSRF token\n%s", r.StatusCode, r.Body)
	}
	return k[1], c[1]
}

// TestASignedInFormDecidesItsInterrupt: the same form posted to two interrupts of one run (one
// approver, one caller for both) records a vote on each, where a form key scoped to the run
// alone replayed the first's answer on the second and left it pending.
func TestASignedInFormDecidesItsInterrupt(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p := s.signedInPage(t)
	first := s.mustRequest(t, "r1", "n1", example(t, "approval"))
	second := s.mustRequest(t, "r1", "n2", strings.Replace(example(t, "approval"), `"approve-invoice-2026-118"`, `"approve-invoice-2026-119"`, 1))
	page := func(v host.InterruptView) string { return "/approve/r1/" + v.InterruptID }
	cookie, _ := p.signIn(t, page(first), "alice", "acme")
	key, csrf := formOf(t, p.do(t, "GET", page(first), []string{cookie}, ""))
	form := url.Values{"formKey": {key}, "csrf": {csrf}, "action": {"accept"}}.Encode()
	for _, v := range []host.InterruptView{first, second} {
		r := p.do(t, "POST", page(v), []string{cookie}, form)
		if r.StatusCode != http.StatusSeeOther || r.Headers["Location"] != "./"+v.InterruptID || len(r.Cookies) != 1 {
			t.Fatalf("the form posted to %s: %d %v\n%s", v.NodeID, r.StatusCode, r.Headers, r.Body)
		}
		if back := p.do(t, "GET", page(v), []string{cookie, pair(r.Cookies[0])}, ""); !strings.Contains(back.Body, "Your decision (accept) was recorded") {
			t.Errorf("the page %s sent the browser back to: %d\n%s", v.NodeID, back.StatusCode, back.Body)
		}
	}
	if snap, _ := s.snapshot(t, engine, "r1"); len(snap.Pending) != 0 {
		t.Errorf("pending after the form was posted to both: %+v", snap.Pending)
	}
	if got := strings.Count(strings.Join(s.eventTypes(t, "acme", "r1"), " "), interrupt.EventResolved); got != 2 {
		t.Errorf("%d interrupts resolved, want 2", got)
	}
}

// TestAFormThatIsNotTextRecordsNothing: a field holding bytes that are not UTF-8 is 400 on both
// doors of the page, the page saying the form could not be read, and nothing is recorded (a JSON
// body would be refused alike), where it was stored as replacement characters.
func TestAFormThatIsNotTextRecordsNothing(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p := s.signedInPage(t)
	v := s.mustRequest(t, "r1", "n1", example(t, "approval"))
	tok := s.mintOK(t, "r1", "n1", `{"intent":"resolve","principal":"alice"}`).Token
	cookie, _ := p.signIn(t, "/approve/r1/"+v.InterruptID, "bob", "acme")
	key, csrf := formOf(t, p.do(t, "GET", "/approve/r1/"+v.InterruptID, []string{cookie}, ""))
	for name, post := range map[string]func(form url.Values) (int, string){
		"the token's page": func(form url.Values) (int, string) {
			r := s.page(t, "POST", tok, form)
			return r.Status, string(r.Body)
		},
		"the signed-in page": func(form url.Values) (int, string) {
			form.Set("csrf", csrf)
			r := p.do(t, "POST", "/approve/r1/"+v.InterruptID, []string{cookie}, form.Encode())
			return r.StatusCode, r.Body
		},
	} {
		for _, form := range []url.Values{
			{"formKey": {key}, "action": {"accept"}, "feedback": {"ok \xff\xfe"}},
			{"formKey": {key}, "action": {"reject"}, "feedback\xc3": {"why"}},
		} {
			before := s.items(t)
			if status, body := post(form); status != http.StatusBadRequest || !strings.Contains(body, "The form could not be read") {
				t.Errorf("%s, %v: %d, want 400 saying the form could not be read\n%s", name, form, status, body)
			}
			if after := s.items(t); after != before {
				t.Errorf("%s, %v: recorded %s, then %s", name, form, before, after)
			}
		}
	}
}

// TestSignOut: every signed-in page, one under the wrong tenant too, offers "Not you? Sign
// out", posting the session's CSRF token to POST /signin/signout under the page's own base and
// stage; with it the session cookie is cleared with the attributes it was set with, and without
// it (another site's form, another session's token) nothing is; a request without a session
// clears nothing. The session ends on the server: the old cookie, sent again, opens nothing.
// While the session store fails, the sign-out ends nothing and says so (503), never "signed
// out", and the page lets nobody in nor asks them to sign in again.
func TestSignOut(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p := s.signedInPage(t)
	v := s.mustRequest(t, "r1", "n1", example(t, "approval"))
	page := "/approve/r1/" + v.InterruptID
	cookie, set := p.signIn(t, page, "alice", "acme")
	elsewhere, _ := p.signIn(t, page, "alice", "globex")
	var otherCSRF string
	for name, c := range map[string]string{"its own tenant's": cookie, "another tenant's": elsewhere} {
		r := p.do(t, "GET", page, []string{c}, "")
		m := regexp.MustCompile(`<form method="post" action="([^"]+)" aria-label="Sign out">\s*<input type="hidden" name="csrf" value="([^"]+)">`).FindStringSubmatch(r.Body)
		if m == nil || !strings.Contains(r.Body, "Not you? Sign out") {
			t.Fatalf("the page under %s session (%d) has no sign-out form\n%s", name, r.StatusCode, r.Body)
		}
		for _, base := range []string{"https://abc.execute-api.eu-west-1.amazonaws.com", "https://abc.execute-api.eu-west-1.amazonaws.com/prod"} {
			at, _ := url.Parse(base + page)
			action, err := url.Parse(html.UnescapeString(m[1]))
			if err != nil || at.ResolveReference(action).String() != base+"/signin/signout" {
				t.Errorf("the sign-out form on %s posts to %v (%v), want %s/signin/signout", at, action, err, base)
			}
		}
		if name == "another tenant's" {
			otherCSRF = m[2]
		}
	}
	_, csrf := formOf(t, p.do(t, "GET", page, []string{cookie}, ""))
	p.sessions.down.Store(true)
	for _, method := range []string{"GET", "POST"} {
		if r := p.do(t, method, page, []string{cookie}, url.Values{"csrf": {csrf}}.Encode()); r.StatusCode != http.StatusServiceUnavailable || len(r.Cookies) != 0 {
			t.Errorf("%s the page with the session store down: %d setting %v, want 503", method, r.StatusCode, r.Cookies)
		}
	}
	if r := p.do(t, "GET", "/approve", []string{cookie}, ""); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("the inbox with the session store down: %d, want 503", r.StatusCode)
	}
	if r := p.do(t, "POST", "/signin/signout", []string{cookie}, url.Values{"csrf": {csrf}}.Encode()); r.StatusCode != http.StatusServiceUnavailable ||
		len(r.Cookies) != 0 || strings.Contains(r.Body, "You are signed out") || !strings.Contains(r.Body, "Still signed in") {
		t.Errorf("sign-out with the session store down: %d setting %v\n%s", r.StatusCode, r.Cookies, r.Body)
	}
	p.sessions.down.Store(false)
	for _, c := range []struct {
		name    string
		cookies []string
		form    url.Values
		status  int
	}{
		{"without the token", []string{cookie}, url.Values{}, http.StatusForbidden},
		{"with another session's token", []string{cookie}, url.Values{"csrf": {otherCSRF}}, http.StatusForbidden},
		{"without a session", nil, url.Values{"csrf": {csrf}}, http.StatusOK},
	} {
		r := p.do(t, "POST", "/signin/signout", c.cookies, c.form.Encode())
		if r.StatusCode != c.status || len(r.Cookies) != 0 {
			t.Errorf("sign-out %s: %d setting %v, want %d setting nothing", c.name, r.StatusCode, r.Cookies, c.status)
		}
	}
	r := p.do(t, "POST", "/signin/signout", []string{cookie}, url.Values{"csrf": {csrf}}.Encode())
	if r.StatusCode != http.StatusOK || len(r.Cookies) != 1 || !strings.Contains(r.Body, "You are signed out") {
		t.Fatalf("sign-out: %d setting %v\n%s", r.StatusCode, r.Cookies, r.Body)
	}
	attributes := func(setCookie string) []string {
		_, attrs, _ := strings.Cut(setCookie, ";")
		var out []string
		for _, a := range strings.Split(attrs, ";") {
			if a = strings.TrimSpace(a); !strings.HasPrefix(a, "Max-Age=") {
				out = append(out, a)
			}
		}
		return slices.Sorted(slices.Values(out))
	}
	cleared := r.Cookies[0]
	if pair(cleared) != "__Host-ih-session=" || !strings.Contains(cleared, "Max-Age=0") || !slices.Equal(attributes(cleared), attributes(set)) {
		t.Errorf("the session cleared with %q, set with %q", cleared, set)
	}
	if r := p.do(t, "GET", page, nil, ""); r.StatusCode != http.StatusSeeOther {
		t.Errorf("the page after the sign-out: %d, want a new sign-in", r.StatusCode)
	}
	// A copy of the cookie kept from before the sign-out: the session is over on the server.
	before := s.items(t)
	for _, c := range []struct{ method, path, form string }{
		{"GET", page, ""}, {"GET", "/approve", ""},
		{"POST", page, url.Values{"csrf": {csrf}, "action": {"accept"}}.Encode()},
	} {
		if r := p.do(t, c.method, c.path, []string{cookie}, c.form); r.StatusCode != http.StatusSeeOther || !strings.Contains(r.Headers["Location"], "/authorize?") {
			t.Errorf("%s %s with the signed-out cookie: %d %q, want a new sign-in", c.method, c.path, r.StatusCode, r.Headers["Location"])
		}
	}
	if r := p.do(t, "POST", "/signin/signout", []string{cookie}, url.Values{"csrf": {csrf}}.Encode()); r.StatusCode != http.StatusOK || len(r.Cookies) != 0 {
		t.Errorf("a second sign-out with the signed-out cookie: %d setting %v, want 200 setting nothing", r.StatusCode, r.Cookies)
	}
	if after := s.items(t); after != before {
		t.Errorf("the signed-out cookie recorded %s, then %s", before, after)
	}
	if r := p.do(t, "GET", page, []string{elsewhere}, ""); r.StatusCode == http.StatusSeeOther || !strings.Contains(r.Body, "Not you? Sign out") {
		t.Errorf("alice's other session (of globex), not signed out: %d\n%s", r.StatusCode, r.Body)
	}
}

// TestSignInComesBackToTheRequestsDomain: with no PublicBaseURL (the template gives the page
// none, so that it need not name the API it is a route of), the sign-in's callback is under the
// domain and stage the request came in on, https as API Gateway serves it; a request context
// naming no domain signs no one in.
func TestSignInComesBackToTheRequestsDomain(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = devjwt.NewProvider(issuerKey(), base, s.clock.Now)
	srv.Start()
	t.Cleanup(srv.Close)
	keys := testkeys.Static{ActiveKid: "k1", Keys: map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")}}
	flow, err := signin.New(signin.Config{Issuer: devjwt.IssuerAt(base), ClientID: devjwt.Audience, Keys: keys, Sessions: inmem.NewSessions(), Now: s.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	services := s.services
	services.SignIn = flow
	fn, err := functionOf(apigw.New(slog.New(slog.DiscardHandler), apigw.Options{}), "approval-page", services)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		domain, stage, callback string
	}{
		{"abc123.execute-api.eu-west-1.amazonaws.com", "$default", "https://abc123.execute-api.eu-west-1.amazonaws.com/signin/callback"},
		{"abc123.execute-api.eu-west-1.amazonaws.com", "prod", "https://abc123.execute-api.eu-west-1.amazonaws.com/prod/signin/callback"},
		{"approvals.example.com", "", "https://approvals.example.com/signin/callback"},
		{"", "$default", ""},
	} {
		req := events.APIGatewayV2HTTPRequest{
			RouteKey: "GET /approve/{runId}/{interruptId}", RawPath: "/approve/r1/int_1", Headers: map[string]string{},
			PathParameters: map[string]string{"runId": "r1", "interruptId": "int_1"},
		}
		req.RequestContext.RouteKey, req.RequestContext.HTTP.Method = req.RouteKey, http.MethodGet
		req.RequestContext.DomainName, req.RequestContext.Stage = c.domain, c.stage
		resp, _ := fn(context.Background(), req)
		if c.callback == "" {
			if resp.StatusCode < 500 || resp.Headers["Location"] != "" {
				t.Errorf("no domain: %d %v", resp.StatusCode, resp.Headers)
			}
			continue
		}
		to, err := url.Parse(resp.Headers["Location"])
		if resp.StatusCode != http.StatusSeeOther || err != nil || to.Query().Get("redirect_uri") != c.callback {
			t.Errorf("%s %s: %d to %s, want the callback %s", c.domain, c.stage, resp.StatusCode, resp.Headers["Location"], c.callback)
		}
	}
}

// TestAClosedPageSaysWhatHappened: after bob rejects with a comment, alice's page says it was
// rejected, by bob, when, and what he wrote, and offers nothing to decide.
func TestAClosedPageSaysWhatHappened(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "approve", hostile)
	alice := s.mintOK(t, "r1", "approve", `{"intent":"resolve","principal":"alice"}`).Token
	bob := s.mintOK(t, "r1", "approve", `{"intent":"resolve","principal":"bob"}`).Token
	form := url.Values{"formKey": {"k-bob"}, "action": {"reject"}, "feedback": {"The amount is <wrong>."}}
	if r := s.decide(t, bob, form); r.Status != 200 {
		t.Fatalf("bob rejects: %d %s", r.Status, r.Body)
	}
	r := s.page(t, "GET", alice, nil)
	body := string(r.Body)
	if r.Status != 409 || len(buttons(doc(t, r))) != 0 {
		t.Fatalf("alice's page: %d %s", r.Status, body)
	}
	if strings.Contains(body, "Approval requested") {
		t.Errorf("alice's page heads a decided approval as requested")
	}
	for _, want := range []string{"Approval decided", "already decided: rejected by bob", "Rejected by bob", "Comment", "The amount is &lt;wrong&gt;.", "Decided"} {
		if !strings.Contains(body, want) {
			t.Errorf("alice's page does not say %q: %s", want, body)
		}
	}
}

// TestTheDataReadsAsFields: an artifact's data is laid out for people: its plain members as
// labelled fields (numbers with their thousands grouped), a nested object as a section, a list of records as a table with a column per
// member; the JSON itself only behind a disclosure; every value escaped.
func TestTheDataReadsAsFields(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "approve", `{"kind":"approval","key":"k","data":{"artifactId":"inv-7","artifactType":"invoice","title":"Pay","actions":["accept"],"artifactData":{"amount":1200.5,"currency":"EUR","supplier":{"name":"ACME <b>","vatNumber":"FR1"},"lines":[{"sku":"A-1","qty":2},{"sku":"A-2","qty":1,"note":"rush"}]}}}`)
	tok := s.mintOK(t, "r1", "approve", `{"intent":"inspect"}`).Token
	r := s.page(t, "GET", tok, nil)
	body := string(r.Body)
	doc(t, r)
	for _, want := range []string{
		"<h2>Details</h2>", "<dt>Amount</dt><dd>1,200.5</dd>", "<dt>Currency</dt><dd>EUR</dd>",
		"<h2>Supplier</h2>", "<dt>Name</dt><dd>ACME &lt;b&gt;</dd>", "<dt>Vat number</dt><dd>FR1</dd>",
		"<h2>Lines</h2>", `<th scope="col">Sku</th><th scope="col">Qty</th><th scope="col">Note</th>`,
		"<tr><td>A-1</td><td>2</td><td></td></tr>", "<tr><td>A-2</td><td>1</td><td>rush</td></tr>",
		`<details class="raw"><summary>The data as JSON</summary>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(body, "<h2>Data</h2>") {
		t.Error("the data is still a JSON block")
	}
}

// TestAnAskIsShownToEveryApprover: alice's question is recorded without deciding; her page, sent
// back to after the POST, says so and offers the decision still; bob's page shows who asked,
// when and what, escaped; the engine reads it in interrupt.asked.
func TestAnAskIsShownToEveryApprover(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "approve", hostile)
	alice := s.mintOK(t, "r1", "approve", `{"intent":"resolve","principal":"alice"}`).Token
	bob := s.mintOK(t, "r1", "approve", `{"intent":"resolve","principal":"bob"}`).Token
	r := s.decide(t, alice, url.Values{"formKey": {"k-ask"}, "action": {"ask"}, "feedback": {"Is this the <May> invoice?"}})
	if r.Status != 200 || !strings.Contains(string(r.Body), "Your question was recorded") || len(buttons(doc(t, r))) == 0 {
		t.Fatalf("alice's page after her question: %d %s", r.Status, r.Body)
	}
	for who, tok := range map[string]string{"alice": alice, "bob": bob} {
		body := string(s.page(t, "GET", tok, nil).Body)
		for _, want := range []string{"<h2>Questions asked</h2>", `<p class="who">alice, `, `<p class="question">Is this the &lt;May&gt; invoice?</p>`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s's page lacks %s", who, want)
			}
		}
	}
	if got := strings.Join(s.eventTypes(t, "acme", "r1"), " "); got != "interrupt.requested approval.requested interrupt.asked" {
		t.Errorf("events %s", got)
	}
}

// TestAskingForChangesNamesAPart: "Ask for changes" asks what should change, and offers the
// data's sections and its items (records with an id) to point at, only where the data has
// them; the scope follows from what was picked.
func TestAskingForChangesNamesAPart(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "parts", `{"kind":"approval","key":"k1","data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay","actions":["refine"],"artifactData":{"amount":1200,"supplier":{"name":"ACME"},"lines":[{"sku":"A-1","description":"Box"},{"sku":"A-2","description":"Tape"}]}}}`)
	s.mustRequest(t, "r1", "flat", `{"kind":"approval","key":"k2","data":{"artifactId":"inv-2","artifactType":"invoice","title":"Pay","actions":["refine","edit-accept"],"artifactData":{"amount":1200,"currency":"EUR","urgent":true}}}`)
	parts := s.mintOK(t, "r1", "parts", `{"intent":"resolve","principal":"alice"}`).Token
	flat := s.mintOK(t, "r1", "flat", `{"intent":"resolve","principal":"alice"}`).Token
	body := string(s.page(t, "GET", parts, nil).Body)
	for _, want := range []string{`<option value="/supplier">Supplier</option>`, `<option value="/lines">Lines</option>`, `value="A-2"> Lines: A-2 (Tape)`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	body = string(s.page(t, "GET", flat, nil).Body)
	if strings.Contains(body, `id="refine-section"`) || strings.Contains(body, `name="itemIds"`) || !strings.Contains(body, `name="edit.urgent" value="true" required checked`) || !strings.Contains(body, `type="number" step="any" required id="edit-0" name="edit.amount" value="1200"`) {
		t.Errorf("flat data: parts offered, or its fields not editable: %s", body)
	}
	if r := s.page(t, "POST", parts, url.Values{"formKey": {"k0"}, "action": {"refine"}, "itemIds": {"A-2"}}); r.Status != 400 || !strings.Contains(string(r.Body), "What should change: say what should change") || !strings.Contains(string(r.Body), `value="A-2" checked`) {
		t.Errorf("no text: %d %s", r.Status, r.Body)
	}
	if r := s.decide(t, parts, url.Values{"formKey": {"k1"}, "action": {"refine"}, "itemIds": {"A-2"}, "sectionPath": {""}, "refineText": {"Tape is on another order"}}); r.Status != 200 {
		t.Fatalf("refine: %d %s", r.Status, r.Body)
	}
	commits := s.commits(t, "acme", "r1")
	if got := string(commits[len(commits)-1].Events[1].Payload); !strings.Contains(got, `"refineFeedback":{"itemIds":["A-2"],"scope":"items","text":"Tape is on another order"}`) {
		t.Errorf("resolved with %s", got)
	}
}

// TestTheRequestSaysWhoAsksAndWhereTheArtifactIs: a request's display (a host member) names the
// requester for people and links the artifact, on the page; a URL that is not https, or a name
// that is not one, is refused at its pointer and nothing is written.
func TestTheRequestSaysWhoAsksAndWhereTheArtifactIs(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	payload := example(t, "approval")
	before := s.items(t)
	for _, display := range []string{`{"artifactUrl":"javascript:alert(1)"}`, `{"artifactUrl":"http://erp.example.com/i/118"}`, `{"requesterName":" "}`, `{"requesterName":"AP","colour":"red"}`} {
		c := requestCall(engine, "r1", "approve", payload)
		c.body = `{"nodeId":"approve","payload":` + payload + `,"display":` + display + `}`
		if r := invoke(t, s.fn("request-interrupt"), c); r.Status != 400 {
			t.Errorf("display %s: %d %s", display, r.Status, r.Body)
		}
	}
	if after := s.items(t); after != before {
		t.Fatalf("refused displays wrote: %s, then %s", before, after)
	}
	c := requestCall(engine, "r1", "approve", payload)
	c.body = `{"nodeId":"approve","payload":` + payload + `,"display":{"requesterName":"Accounts <payable>","artifactUrl":"https://erp.example.com/invoices/118?a=1&b=2"}}`
	if r := invoke(t, s.fn("request-interrupt"), c); r.Status != 201 {
		t.Fatalf("request: %d %s", r.Status, r.Body)
	}
	tok := s.mintOK(t, "r1", "approve", `{"intent":"inspect"}`).Token
	r := s.page(t, "GET", tok, nil)
	doc(t, r)
	for _, want := range []string{"Accounts &lt;payable&gt; (engine), ", `<a href="https://erp.example.com/invoices/118?a=1&amp;b=2" rel="noopener noreferrer">Open the invoice</a>`} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestTheInboxPage: GET /approve signs the approver in, then lists what waits for them (alice:
// her own approval and her group's, not bob's), each linking its page; another tenant's alice
// sees nothing, in plain words; a cursor that is none is refused.
func TestTheInboxPage(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p := s.signedInPage(t)
	approval := func(field string) string {
		return `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"Pay <inv-1>","actions":["accept"],` + field + `}}`
	}
	mine := s.mustRequest(t, "r1", "approve", approval(`"approversList":["alice","bob"]`))
	s.mustRequest(t, "r2", "approve", approval(`"approverGroupRefs":["finance"]`))
	s.mustRequest(t, "r3", "approve", approval(`"approversList":["bob"]`))
	s.reindex(t, engine, "r1", "r2", "r3")
	cookie, _ := p.signIn(t, "/approve", "alice", "acme")
	r := p.do(t, "GET", "/approve", []string{cookie}, "")
	doc(t, response{Status: r.StatusCode, Headers: r.Headers, Body: []byte(r.Body)})
	for _, want := range []string{"What waits for you", `<a href="approve/r1/` + mine.InterruptID + `">Pay &lt;inv-1&gt;</a>`, `href="approve/r2/`, "Approval · Decide by ", "0 of 1 approvals", "You are signed in as alice"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("alice's inbox lacks %s", want)
		}
	}
	if strings.Contains(r.Body, "approve/r3/") || r.StatusCode != 200 {
		t.Errorf("alice's inbox: %d, lists bob's r3:\n%s", r.StatusCode, r.Body)
	}
	other, _ := p.signIn(t, "/approve", "alice", "other")
	if r := p.do(t, "GET", "/approve", []string{other}, ""); r.StatusCode != 200 || !strings.Contains(r.Body, "Nothing waits for you") || strings.Contains(r.Body, "approve/r") {
		t.Errorf("another tenant's alice: %d %s", r.StatusCode, r.Body)
	}
	if r := p.do(t, "GET", "/approve?after=%21%21", []string{cookie}, ""); r.StatusCode != 400 {
		t.Errorf("a cursor that is none: %d %s", r.StatusCode, r.Body)
	}
}

// TestASignInWithoutItsStateIsTheBrowsers: a callback without the sign-in's state cookie (a
// bookmarked or replayed callback) answers 400 and is logged as the client's error, not as an
// internal one of the host's.
func TestASignInWithoutItsStateIsTheBrowsers(t *testing.T) {
	t.Parallel()
	p := newStack(t).signedInPage(t)
	resp := p.do(t, "GET", "/signin/callback?code=c&state=s", nil, "")
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("%d, want 400", resp.StatusCode)
	}
	if strings.Contains(p.logs.String(), `"level":"ERROR"`) || !strings.Contains(p.logs.String(), `"code":"validation_error"`) {
		t.Errorf("logged %s", p.logs.String())
	}
}

// TestAMailsChoiceIsConfirmedOnThePage: a mail's Approve or Reject opens the page with that
// decision chosen: one button confirms it, the GET records nothing, and a choice the approval
// does not offer (or no choice) shows every decision; the choice survives a sign-in.
func TestAMailsChoiceIsConfirmedOnThePage(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	v := s.mustRequest(t, "r1", "approve", hostile)
	tok := s.mintOK(t, "r1", "approve", `{"intent":"resolve","principal":"alice"}`).Token
	before := s.items(t)
	get := func(choice string) response {
		t.Helper()
		return invoke(t, s.fn("approval-page"), call{route: "GET /approve/{token}", params: map[string]string{"token": tok}, query: map[string]string{"choice": choice}, rawPath: "/approve/" + tok})
	}
	for choice, want := range map[string]string{"accept": "accept", "reject": "reject", "ask": "accept,reject", "": "accept,reject"} {
		r := get(choice)
		n := doc(t, r)
		var quick []string
		for _, b := range buttons(n) {
			if b == "accept" || b == "reject" {
				quick = append(quick, b)
			}
		}
		if r.Status != 200 || strings.Join(quick, ",") != want {
			t.Errorf("?choice=%s: %d, buttons %v, want %s", choice, r.Status, buttons(n), want)
		}
		if confirm := strings.Contains(string(r.Body), "Nothing is recorded until you confirm"); confirm != (want != "accept,reject") {
			t.Errorf("?choice=%s: says to confirm %v", choice, confirm)
		}
	}
	if after := s.items(t); after != before {
		t.Fatalf("a chosen page wrote: %s, then %s", before, after)
	}

	p := s.signedInPage(t)
	page := "/approve/r1/" + v.InterruptID + "?choice=reject"
	cookie, _ := p.signIn(t, page, "bob", "acme")
	r := p.do(t, "GET", page, []string{cookie}, "")
	if r.StatusCode != 200 || !strings.Contains(r.Body, "Confirm: reject") || strings.Contains(r.Body, "Confirm: accept") {
		t.Errorf("after the sign-in: %d %s", r.StatusCode, r.Body)
	}
}
