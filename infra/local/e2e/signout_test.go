package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/internal/devjwt"
)

// TestSignOutEndsTheConsoleSession: olga, an operator, signs in to the console through the
// local identity provider and the approval page's callback, signs out on the approval page's
// function, and the cookie she held, sent again, is refused by the console's function (its
// session's record is gone from the table): GET /console starts a new sign-in instead of
// answering the console, and the run's cancel and complete forms, with the CSRF value the page
// gave her, end nothing (401). The run's log is as it was.
func TestSignOutEndsTheConsoleSession(t *testing.T) {
	ctx := context.Background()
	op := operator(t)
	c := newClient(t, op)
	run := newRun("signout")
	if _, err := c.Request(ctx, run, "approve", json.RawMessage(approvalWithApprovers), nil); err != nil {
		t.Fatal(err)
	}
	olga := consoleSignIn(t, "olga", op.Tenant)

	if home := browse(t, "GET", "/console", olga, nil); home.StatusCode != http.StatusOK {
		t.Fatalf("the console while signed in: %d\n%s", home.StatusCode, home.body)
	}
	page := browse(t, "GET", "/console/runs/"+url.PathEscape(run), olga, nil)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page.body)
	if page.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("the run's page while signed in: %d, without a CSRF value\n%s", page.StatusCode, page.body)
	}
	csrf := m[1]
	before, err := c.Events(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}

	out := browse(t, "POST", "/signin/signout", olga, url.Values{"csrf": {csrf}})
	if out.StatusCode != http.StatusOK || !strings.Contains(out.body, "You are signed out") {
		t.Fatalf("sign-out: %d\n%s", out.StatusCode, out.body)
	}

	// The cookie from before the sign-out, as an attacker who copied it would send it.
	for _, path := range []string{"/console", "/console/runs/" + url.PathEscape(run)} {
		r := browse(t, "GET", path, olga, nil)
		if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), devjwt.IssuerAt(gatewayURL())+"/authorize?") {
			t.Errorf("GET %s with the signed-out cookie: %d %q, want a new sign-in", path, r.StatusCode, r.Header.Get("Location"))
		}
	}
	for _, end := range []string{"cancel", "complete"} {
		r := browse(t, "POST", "/console/runs/"+url.PathEscape(run)+"/"+end, olga, url.Values{"csrf": {csrf}, "reason": {"signed out"}})
		if r.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST %s with the signed-out cookie: %d, want 401\n%s", end, r.StatusCode, r.body)
		}
	}
	after, err := c.Events(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Events) != len(before.Events) || after.Next != before.Next {
		t.Errorf("the signed-out cookie wrote: %d events (next %d), then %d (next %d)", len(before.Events), before.Next, len(after.Events), after.Next)
	}
}

// page is an answer of the gateway to a browser: its status, headers and body.
type page struct {
	*http.Response
	body string
}

// browse sends what a browser holding cookie ("name=value", none when empty) sends for method
// and path at the gateway, a form when form is set, without following a redirect.
func browse(t *testing.T, method, path, cookie string, form url.Values) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, gatewayURL()+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{resp, string(b)}
}

// cookieOf is the "name=value" of the cookie called name that r sets, "" for none.
func cookieOf(r page, name string) string {
	for _, c := range r.Cookies() {
		if c.Name == name && c.Value != "" {
			return c.Name + "=" + c.Value
		}
	}
	return ""
}

// consoleSignIn signs user of tenant in from the console's first page, as a browser and the
// person would: the console's redirect to the local identity provider, its login form posted,
// and the approval page's callback, which answers the session cookie ("name=value").
func consoleSignIn(t *testing.T, user, tenant string) string {
	t.Helper()
	first := browse(t, "GET", "/console", "", nil)
	state := cookieOf(first, "__Host-ih-signin")
	auth, err := url.Parse(first.Header.Get("Location"))
	if first.StatusCode != http.StatusSeeOther || state == "" || err != nil || !strings.HasPrefix(auth.String(), devjwt.IssuerAt(gatewayURL())+"/authorize?") {
		t.Fatalf("the console without a session: %d %q", first.StatusCode, first.Header.Get("Location"))
	}
	form := auth.Query()
	form.Set("user", user)
	form.Set("tenant", tenant)
	auth.RawQuery = ""
	login, err := noRedirects.PostForm(auth.String(), form)
	if err != nil {
		t.Fatal(err)
	}
	login.Body.Close()
	back, err := url.Parse(login.Header.Get("Location"))
	if login.StatusCode != http.StatusSeeOther || err != nil || back.Path != "/signin/callback" {
		t.Fatalf("the provider's login: %d %q", login.StatusCode, login.Header.Get("Location"))
	}
	done := browse(t, "GET", back.Path+"?"+back.RawQuery, state, nil)
	session := cookieOf(done, "__Host-ih-session")
	if done.StatusCode != http.StatusSeeOther || done.Header.Get("Location") != "/console" || session == "" {
		t.Fatalf("the callback: %d %q", done.StatusCode, done.Header.Get("Location"))
	}
	return session
}
