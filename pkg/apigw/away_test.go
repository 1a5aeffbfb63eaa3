package apigw_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/delegation"
)

// TestTheInboxSaysIAmAway: a signed-in approver's inbox offers "I am away"; posted with the
// session's token it sets their delegation (their own, recorded as set by them) and the inbox
// then says who decides in their place and offers "I am back", which ends it; without the
// token, or without a session, nothing is set; a delegation the rules refuse is a 400 page
// saying why.
func TestTheInboxSaysIAmAway(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	p := s.signedInPage(t)
	cookie, _ := p.signIn(t, "/approve", "alice", "acme")
	awayForm := regexp.MustCompile(`<form method="post" action="approve/away">\s*<input type="hidden" name="csrf" value="([^"]+)">`)
	inbox := func() (string, string) {
		t.Helper()
		r := p.do(t, "GET", "/approve", []string{cookie}, "")
		m := awayForm.FindStringSubmatch(r.Body)
		if r.StatusCode != http.StatusOK || m == nil {
			t.Fatalf("the inbox (%d) has no away form:\n%s", r.StatusCode, r.Body)
		}
		return r.Body, m[1]
	}
	admin := caller{"ops", "acme", []string{"contacts:manage"}}
	stored := func() (delegation.Delegation, int) {
		r := s.delegations(t, admin, "GET /delegations/{principal}", "alice", "")
		var d delegation.Delegation
		_ = json.Unmarshal(r.Body, &d)
		return d, r.Status
	}
	body, csrf := inbox()
	if !strings.Contains(body, ">I am away</button>") {
		t.Fatalf("the inbox does not offer I am away:\n%s", body)
	}
	back := s.clock.Now().Add(72 * time.Hour).UTC().Format(time.DateOnly)
	set := url.Values{"csrf": {csrf}, "delegate": {"bob"}, "until": {back}, "note": {"On leave"}}
	for _, c := range []struct {
		name    string
		cookies []string
		form    url.Values
		status  int
	}{
		{"without the token", []string{cookie}, url.Values{"delegate": {"bob"}, "until": {back}}, http.StatusForbidden},
		{"without a session", nil, set, http.StatusUnauthorized},
		{"to herself", []string{cookie}, url.Values{"csrf": {csrf}, "delegate": {"alice"}, "until": {back}}, http.StatusBadRequest},
		{"back on a day past", []string{cookie}, url.Values{"csrf": {csrf}, "delegate": {"bob"}, "until": {"2020-01-01"}}, http.StatusBadRequest},
		{"back on no day", []string{cookie}, url.Values{"csrf": {csrf}, "delegate": {"bob"}, "until": {"soon"}}, http.StatusBadRequest},
	} {
		r := p.do(t, "POST", "/approve/away", c.cookies, c.form.Encode())
		if r.StatusCode != c.status || !strings.Contains(r.Body, "Nothing was set") && c.status != http.StatusUnauthorized {
			t.Errorf("%s: %d, want %d saying nothing was set\n%s", c.name, r.StatusCode, c.status, r.Body)
		}
		if _, status := stored(); status != http.StatusNotFound {
			t.Errorf("%s: a delegation was kept (%d)", c.name, status)
		}
	}
	r := p.do(t, "POST", "/approve/away", []string{cookie}, set.Encode())
	if r.StatusCode != http.StatusSeeOther || r.Headers["Location"] != "../approve" {
		t.Fatalf("I am away: %d %q\n%s", r.StatusCode, r.Headers["Location"], r.Body)
	}
	if d, _ := stored(); d.Delegate != "bob" || d.SetBy != "alice" || d.Note != "On leave" || d.Until.Format(time.DateOnly) != back {
		t.Errorf("the delegation set: %+v", d)
	}
	body, csrf = inbox()
	if !strings.Contains(body, ": bob decides in your place.") || !strings.Contains(body, ">I am back</button>") {
		t.Errorf("the inbox of someone away:\n%s", body)
	}
	r = p.do(t, "POST", "/approve/away", []string{cookie}, url.Values{"csrf": {csrf}, "action": {"end"}}.Encode())
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("I am back: %d\n%s", r.StatusCode, r.Body)
	}
	if d, _ := stored(); d.EndedBy != "alice" || d.EndedAt.IsZero() {
		t.Errorf("the delegation after I am back: %+v", d)
	}
	if body, _ = inbox(); !strings.Contains(body, ">I am away</button>") {
		t.Errorf("the inbox after I am back:\n%s", body)
	}
}
