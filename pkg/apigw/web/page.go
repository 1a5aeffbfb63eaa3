package web

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/approvalpage"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/signin"
)

// pageHeaders are the approval page's on every answer: its Content-Security-Policy, no framing
// (clickjacking), no Referer (the token is in the URL), no caching (the page holds the token
// and changes with the run).
var pageHeaders = map[string]string{
	"Content-Type":            "text/html; charset=utf-8",
	"Content-Security-Policy": approvalpage.CSP,
	"X-Frame-Options":         "DENY",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-store",
	"X-Content-Type-Options":  "nosniff",
}

// pageCrash is the page a panic while serving one answers.
func pageCrash() events.APIGatewayV2HTTPResponse {
	return pageResponse(approvalpage.Problem(http.StatusInternalServerError, "Something went wrong", "The host could not show this page. Try the link again later."), false)
}

// The approval page is open to the network (API Gateway runs no authorizer on its routes):
//
//   - GET, HEAD and POST /approve/{token}: a link holding a signed token, which authenticates;
//   - GET, HEAD and POST /approve/{runId}/{interruptId}: a link holding no credential; the page
//     signs the approver in with the deployment's identity provider (Options.SignIn) and decides
//     as the signed-in principal, with the groups and roles of its ID token;
//   - GET /signin/callback: where the identity provider sends the approver back;
//   - POST /signin/signout: a signed-in page's sign-out.
//
// GET and HEAD render the interrupt and never write, so a mail scanner fetching a link changes
// nothing; POST (a form) decides, a hidden one-time form key making a double submit one
// decision, and on a signed-in page a CSRF token bound to the session.

// pageByToken serves /approve/{token}.
func (a *controller) pageByToken(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	v, recorded, err := a.page(ctx, c)
	if recorded != "" {
		return seeThePage(c, c.Req.PathParameters["token"], recorded), nil
	}
	return withRecordedCleared(c, pageResponse(v, isHead(c))), err
}

// pageSignedIn serves /approve/{runId}/{interruptId}.
func (a *controller) pageSignedIn(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	return a.signedInPage(ctx, c, isHead(c))
}

func isHead(c *call) bool { return c.Req.RequestContext.HTTP.Method == http.MethodHead }

// page is the token page's view, or the action a POST recorded. A POST verifies the token,
// then casts in one host call that reads the run once (host.CastByToken), the page's own
// checks (the kind, a link that names no one, the form) judged on the interrupt as read.
func (a *controller) page(ctx context.Context, c *call) (approvalpage.View, string, error) {
	raw := c.Req.PathParameters["token"]
	if c.Req.RequestContext.HTTP.Method != http.MethodPost {
		o, grant, err := a.tokens.Open(ctx, raw)
		c.RunID, c.NodeID = grant.Caller.RunID, grant.Caller.NodeID
		if !o.Found() {
			return problemPage(err), "", err
		}
		v, err := shown(c, o, err)
		return v, "", err
	}
	grant, err := a.tokens.Verify(ctx, raw)
	c.RunID, c.NodeID = grant.Caller.RunID, grant.Caller.NodeID
	if err != nil {
		return problemPage(err), "", err
	}
	form, formErr := readForm(c.Req)
	var idem *host.Idempotency
	if key := form.Get("formKey"); formErr == nil && key != "" {
		idem = &host.Idempotency{Key: formIdempotencyKey(grant.Caller.RunID, grant.Caller.InterruptID, key), Fingerprint: formFingerprint(c.Req, form)}
	}
	cast, err := a.host.CastByToken(ctx, grant, host.Ballot{Idem: idem,
		Value: func(o host.Opened) (json.RawMessage, error) {
			switch {
			case undecidable(o) != nil:
				return nil, &pageRefusal{approvalpage.ReadOnly(o, http.StatusBadRequest, nil), undecidable(o)}
			case approvalpage.Anonymous(o):
				err := interrupt.Errorf(interrupt.CodeNotEligible, "a link without principal cannot vote on an approval with named approvers")
				return nil, &pageRefusal{approvalpage.ReadOnly(o, http.StatusForbidden, approvalpage.AnonymousNotice), err}
			case formErr != nil:
				return nil, &pageRefusal{problemPage(formErr), formErr}
			}
			return a.formValue(o, form)
		}})
	o := cast.Interrupt
	var r *pageRefusal
	switch {
	case errors.As(err, &r):
		return r.view, "", r.err
	case !o.Found():
		return problemPage(err), "", err
	case !o.CanResolve:
		return approvalpage.ReadOnly(o, http.StatusForbidden, &approvalpage.Notice{Kind: "error", Text: "This link lets you read the request, not decide it."}), "", err
	}
	return answered(o, form, err)
}

// shown is the page a GET or HEAD of o shows, err being why o cannot be decided now, if it
// cannot: its form, or o read-only with what became of it. A browser sent back after its own
// decision (Post/Redirect/Get) is told what was recorded, as o's state shows it.
func shown(c *call, o host.Opened, err error) (approvalpage.View, error) {
	if action := recordedAction(c.Req); action != "" {
		if n := approvalpage.Recorded(o, action); n != nil {
			if err != nil {
				return approvalpage.ReadOnly(o, http.StatusOK, n), nil
			}
			v := approvalpage.Decide(o, formKey(), nil, nil)
			v.Notice = n
			return v, nil
		}
	}
	if err != nil {
		return approvalpage.ReadOnly(o, apigw.StatusFor(err), closedNotice(o, err)), err
	}
	v := approvalpage.Decide(o, formKey(), nil, nil)
	v.Choose(choice(c))
	return v, nil
}

// choice is the decision a mail's Approve or Reject button chose (?choice=accept or reject), for
// the page to ask to confirm; "" for none or any other.
func choice(c *call) string {
	switch ch := c.Req.QueryStringParameters["choice"]; interrupt.Action(ch) {
	case interrupt.ActionAccept, interrupt.ActionReject:
		return ch
	}
	return ""
}

// After a decision is recorded, the page answers 303 See Other to itself (Post/Redirect/Get): a
// refresh then reads the page again and records nothing, and the back button resends no form.
// What was recorded rides the redirect in recordedCookie, read and cleared by the next GET of a
// page; the page then says what was recorded from the state it reads (approvalpage.Recorded),
// never from the cookie alone, so a cookie that does not match the state says nothing. It names
// no Path: the browser scopes it to the page's directory as the browser sees it (a custom
// domain's API mapping or a stage can put more before it than the request's rawPath holds), so
// another page of the directory may read it within its minute, and says only what its own log
// bears out.
const recordedCookie = "__Secure-ih-recorded"

// recordedActions are the values recordedCookie may hold: an approval's actions, and a
// clarification's answers.
var recordedActions = map[string]bool{
	string(interrupt.ActionAccept): true, string(interrupt.ActionReject): true, string(interrupt.ActionRefine): true,
	string(interrupt.ActionEditAccept): true, string(interrupt.ActionAsk): true, approvalpage.Answered: true,
}

// seeThePage is the answer to a POST that recorded action: 303 to the page (self is its last
// path segment, so the redirect stays under the base and stage the page was reached at), with
// recordedCookie set for it.
func seeThePage(c *call, self, action string) events.APIGatewayV2HTTPResponse {
	cookie := http.Cookie{Name: recordedCookie, Value: action, MaxAge: 60, Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	return redirect("./"+self, cookie.String())
}

// recordedAction is the action recordedCookie names on req, if it names one.
func recordedAction(req events.APIGatewayV2HTTPRequest) string {
	for _, raw := range req.Cookies {
		name, value, _ := strings.Cut(raw, "=")
		if strings.TrimSpace(name) == recordedCookie && recordedActions[value] {
			return value
		}
	}
	return ""
}

// withRecordedCleared clears the recordedCookie the request brought, once its page was shown.
func withRecordedCleared(c *call, resp events.APIGatewayV2HTTPResponse) events.APIGatewayV2HTTPResponse {
	if recordedAction(c.Req) != "" && c.Req.RequestContext.HTTP.Method == http.MethodGet {
		cookie := http.Cookie{Name: recordedCookie, MaxAge: -1, Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode}
		resp.Cookies = append(resp.Cookies, cookie.String())
	}
	return resp
}

// undecidable refuses a decision on a kind the page does not decide.
func undecidable(o host.Opened) error {
	if approvalpage.Decidable(o.Payload.Kind) {
		return nil
	}
	return interrupt.Invalid("this interrupt is not decided on the approval page")
}

// pageRefusal is why a page's decision never reached the host's judgement (its form's
// mistakes, a form not from the page), with the page that says so.
type pageRefusal struct {
	view approvalpage.View
	err  error
}

func (r *pageRefusal) Error() string { return r.err.Error() }
func (r *pageRefusal) Unwrap() error { return r.err }

// formValue is the resume value a page's form makes for o, or a pageRefusal with the form
// shown again with its mistakes.
func (a *controller) formValue(o host.Opened, form url.Values) (json.RawMessage, error) {
	value, fields := approvalpage.Decision(o, form, a.host.Now())
	if len(fields) == 0 {
		fields = interrupt.CheckNumbers(value, "/resumeValue") // answers and edits typed as JSON
	}
	if len(fields) > 0 {
		err := interrupt.Invalid("the decision is not acceptable", fields...)
		return nil, &pageRefusal{approvalpage.Decide(o, cmp.Or(form.Get("formKey"), formKey()), form, approvalpage.Mistakes(o, fields, "")), err}
	}
	return value, nil
}

// answered is the page's answer to a decision the host judged, err being its verdict: the
// action recorded (approvalpage.Answered for a clarification's answers), or o, as it now
// stands, with why nothing was.
func answered(o host.Opened, form url.Values, err error) (approvalpage.View, string, error) {
	key := form.Get("formKey")
	var e *interrupt.Error
	switch {
	case err == nil:
	case errors.As(err, &e) && e.Code == interrupt.CodeValidation:
		return approvalpage.Decide(o, cmp.Or(key, formKey()), form, approvalpage.Mistakes(o, e.Fields, e.Message)), "", err
	case errors.As(err, &e) && e.Code == interrupt.CodeIdempotencyReuse:
		return approvalpage.ReadOnly(o, http.StatusUnprocessableEntity, &approvalpage.Notice{Kind: "error", Text: "This form was already sent with another decision; the first one counts. Open the link again to see where the request stands."}), "", err
	default:
		return approvalpage.ReadOnly(o, apigw.StatusFor(err), closedNotice(o, err)), "", err
	}
	if o.Payload.Kind == interrupt.KindApproval {
		return approvalpage.View{}, form.Get("action"), nil
	}
	return approvalpage.View{}, approvalpage.Answered, nil
}

// signedInPage serves /approve/{runId}/{interruptId}: without a session it starts a sign-in that
// comes back here; with one it shows the interrupt of the session's tenant, and decides as the
// session's principal.
func (a *controller) signedInPage(ctx context.Context, c *call, head bool) (events.APIGatewayV2HTTPResponse, error) {
	if a.signIn == nil {
		err := interrupt.Errorf(interrupt.CodeNotFound, "this host signs no one in")
		return pageResponse(problemPage(err), head), err
	}
	runID, interruptID := c.Req.PathParameters["runId"], c.Req.PathParameters["interruptId"]
	if !runlog.ValidID(runID) || !runlog.ValidID(interruptID) {
		err := interrupt.Errorf(interrupt.CodeNotFound, "no such interrupt")
		return pageResponse(problemPage(err), head), err
	}
	c.RunID = runID
	s, err := a.signIn.SessionFrom(ctx, c.Req.Cookies)
	switch {
	case errors.Is(err, signin.ErrNoSession):
		return a.beginSignIn(ctx, c, head)
	case err != nil: // the session store failed: nobody is let in, nor sent to sign in again
		return pageResponse(problemPage(err), head), err
	}
	p := principalOf(s)
	csrf, err := a.signIn.CSRF(ctx, s)
	if err != nil {
		return pageResponse(problemPage(err), head), err
	}
	v, recorded, err := a.signedInView(ctx, c, p, interruptID, func(form url.Values) bool { return a.signIn.CheckCSRF(ctx, s, form.Get("csrf")) })
	if recorded != "" {
		return seeThePage(c, interruptID, recorded), nil
	}
	return withRecordedCleared(c, pageResponse(approvalpage.SignedIn(v, s.Subject, s.Tenant, csrf, signOutFromPage), head)), err
}

// beginSignIn answers a page asked for without a session: the sign-in, which comes back to it.
func (a *controller) beginSignIn(ctx context.Context, c *call, head bool) (events.APIGatewayV2HTTPResponse, error) {
	base, err := a.gw.BaseURL(c.Req)
	if err != nil {
		return pageResponse(problemPage(err), head), err
	}
	next := c.Req.RawPath
	if ch := choice(c); ch != "" {
		next += "?choice=" + ch // the mail's choice survives the sign-in
	}
	to, cookie, err := a.signIn.Begin(ctx, base, next)
	if err != nil {
		return pageResponse(signInProblem(err), head), err
	}
	return redirect(to, cookie), nil
}

// inboxPage serves GET and HEAD /approve: a signed-in approver's inbox, what waits for them
// (host.Host.Inbox), each item linking its page; without a session it starts a sign-in that
// comes back here. A page of the list at a time, the next by its cursor (?after=).
func (a *controller) inboxPage(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	head := isHead(c)
	if a.signIn == nil {
		err := interrupt.Errorf(interrupt.CodeNotFound, "this host signs no one in")
		return pageResponse(problemPage(err), head), err
	}
	s, err := a.signIn.SessionFrom(ctx, c.Req.Cookies)
	switch {
	case errors.Is(err, signin.ErrNoSession):
		return a.beginSignIn(ctx, c, head)
	case err != nil:
		return pageResponse(problemPage(err), head), err
	}
	csrf, err := a.signIn.CSRF(ctx, s)
	if err != nil {
		return pageResponse(problemPage(err), head), err
	}
	var after string
	if v, ok := c.Req.QueryStringParameters["after"]; ok {
		b, err := base64.RawURLEncoding.DecodeString(v)
		if err != nil || len(b) == 0 || len(b) > apigw.MaxCursor {
			err := interrupt.Invalid("after is not the next of an earlier page")
			return pageResponse(approvalpage.Problem(http.StatusBadRequest, "This link is not valid", "Open your inbox again from its first page."), head), err
		}
		after = string(b)
	}
	page, err := a.host.Inbox(ctx, principalOf(s), after, host.DefaultInboxLimit)
	if err != nil {
		v := approvalpage.Problem(apigw.StatusFor(err), "Your inbox cannot be shown right now", "Nothing was changed. Try again in a moment.")
		return pageResponse(approvalpage.SignedIn(v, s.Subject, s.Tenant, csrf, signOutFromInbox), head), err
	}
	next := ""
	if page.Next != "" {
		next = "?after=" + base64.RawURLEncoding.EncodeToString([]byte(page.Next))
	}
	mine, err := a.ownDelegation(ctx, s)
	if err != nil {
		v := approvalpage.Problem(apigw.StatusFor(err), "Your inbox cannot be shown right now", "Nothing was changed. Try again in a moment.")
		return pageResponse(approvalpage.SignedIn(v, s.Subject, s.Tenant, csrf, signOutFromInbox), head), err
	}
	v := approvalpage.Inbox(page, after != "", next, mine, a.host.Now())
	if a.away == nil {
		v.Away = nil
	}
	return pageResponse(approvalpage.SignedIn(v, s.Subject, s.Tenant, csrf, signOutFromInbox), head), nil
}

// approver is the signed-in person as the delegations' book takes them: their session's
// principal, who may keep their own delegation (interrupt.ScopeApprovalsRespond: the page is an
// approver's).
func approver(s signin.Session) interrupt.Principal {
	p := principalOf(s)
	p.Scopes = []string{interrupt.ScopeApprovalsRespond}
	return p
}

// ownDelegation is the signed-in person's delegation, nil when they have none (or the page
// keeps none).
func (a *controller) ownDelegation(ctx context.Context, s signin.Session) (*delegation.Delegation, error) {
	if a.away == nil {
		return nil, nil
	}
	d, err := a.away.Get(ctx, approver(s), s.Subject)
	switch {
	case interrupt.ErrorCode(err) == interrupt.CodeNotFound:
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &d, nil
}

// awayPage serves POST /approve/away, the inbox's "I am away": the signed-in person names who
// decides in their place until the day they are back (the delegation ends as that day begins,
// UTC), or ends theirs ("I am back", action=end), then is sent back to the inbox, which says
// it. Its form carries the session's CSRF token (403 otherwise, nothing set); a delegation the
// rules refuse (to oneself, a day past or more than 90 days on, a delegate away at the time)
// is a 400 page saying why, nothing set.
func (a *controller) awayPage(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	if a.signIn == nil || a.away == nil {
		err := interrupt.Errorf(interrupt.CodeNotFound, "this host signs no one in")
		return pageResponse(problemPage(err), false), err
	}
	// Who first: a request without a session is refused before its body is read.
	s, err := a.signIn.SessionFrom(ctx, c.Req.Cookies)
	switch {
	case errors.Is(err, signin.ErrNoSession):
		err := interrupt.Errorf(interrupt.CodeUnauthorized, "no session: sign in on the inbox first")
		return pageResponse(approvalpage.Problem(http.StatusUnauthorized, "Not signed in", "Open your inbox, sign in, and say you are away from there."), false), err
	case err != nil:
		return pageResponse(problemPage(err), false), err
	}
	form, err := readForm(c.Req)
	if err != nil {
		return pageResponse(problemPage(err), false), err
	}
	csrf, err := a.signIn.CSRF(ctx, s)
	if err != nil {
		return pageResponse(problemPage(err), false), err
	}
	signedIn := func(v approvalpage.View) events.APIGatewayV2HTTPResponse {
		return pageResponse(approvalpage.SignedIn(v, s.Subject, s.Tenant, csrf, "../"+signOutFromInbox), false)
	}
	if !a.signIn.CheckCSRF(ctx, s, form.Get("csrf")) {
		err := interrupt.Errorf(interrupt.CodeForbidden, "the form does not carry this session's CSRF token")
		return signedIn(approvalpage.Problem(http.StatusForbidden, "Nothing was set", "This form was not sent from your inbox. Open your inbox and use its own form.")), err
	}
	if form.Get("action") == "end" {
		_, err = a.away.End(ctx, approver(s), s.Subject)
	} else {
		until, perr := time.Parse(time.DateOnly, form.Get("until"))
		if perr != nil {
			err := interrupt.Invalid("the delegation is not acceptable", interrupt.FieldError{Path: "/until", Message: "is not a day (YYYY-MM-DD)"})
			return signedIn(approvalpage.Problem(http.StatusBadRequest, "Nothing was set", "The day you are back is not a day. Go back and pick one.")), err
		}
		_, err = a.away.Set(ctx, approver(s), s.Subject, delegation.Request{Delegate: strings.TrimSpace(form.Get("delegate")), Until: until, Note: form.Get("note")})
	}
	if err != nil {
		// A failure of the host's own may come after the change was written (its event not
		// recorded): the page does not say nothing was set, it sends the person to look.
		title, detail := "Not confirmed", "It may or may not have been changed: your inbox says which. If it was not, try again in a moment."
		var ie *interrupt.Error
		if errors.As(err, &ie) && apigw.StatusFor(err) < 500 {
			title, detail = "Nothing was set", "Nothing was set: "+ie.Message+"."
			for _, f := range ie.Fields {
				detail += " " + strings.TrimPrefix(f.Path, "/") + " " + f.Message + "."
			}
		}
		return signedIn(approvalpage.Problem(apigw.StatusFor(err), title, detail)), err
	}
	return redirect("../approve"), nil
}

// signOutFromInbox is POST /signin/signout relative to the inbox (/approve).
const signOutFromInbox = "signin/signout"

// signOutFromPage is POST /signin/signout relative to a signed-in page (/approve/{runId}/
// {interruptId}), so its form posts to the base and stage the page was reached at.
const signOutFromPage = "../../signin/signout"

// principalOf is who a session decides as: its principal, tenant, groups and roles, as the API
// reads a bearer token's.
func principalOf(s signin.Session) interrupt.Principal {
	return interrupt.Principal{Subject: s.Subject, Tenant: s.Tenant, Groups: s.Groups, Roles: s.Roles, Via: interrupt.ViaSession}
}

// signOut serves POST /signin/signout, a signed-in page's "Not you? Sign out": an approver
// signed in as someone else, or under another tenant, ends the session now instead of waiting
// an hour for it to expire. The session's record is deleted, so its cookie opens nothing on the
// page or the console from then on, wherever a copy of it is. Its form carries the session's
// CSRF token, as a decision's does: a form posted from elsewhere ends nothing (403). A request
// without a session has nothing to end and clears nothing (a cross-site form brings no cookie,
// and must not clear the one the browser holds). When the session store fails, nothing is
// ended and the page says so (503): the person is not told they are signed out.
func (a *controller) signOut(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	if a.signIn == nil {
		err := interrupt.Errorf(interrupt.CodeNotFound, "this host signs no one in")
		return pageResponse(problemPage(err), false), err
	}
	form, err := readForm(c.Req)
	if err != nil {
		return pageResponse(problemPage(err), false), err
	}
	s, err := a.signIn.SessionFrom(ctx, c.Req.Cookies)
	switch {
	case errors.Is(err, signin.ErrNoSession):
		return pageResponse(approvalpage.SignedOut(), false), nil
	case err != nil:
		return pageResponse(notSignedOut(err), false), err
	}
	if !a.signIn.CheckCSRF(ctx, s, form.Get("csrf")) {
		err := interrupt.Errorf(interrupt.CodeForbidden, "the sign-out form does not carry this session's CSRF token")
		return pageResponse(approvalpage.Problem(http.StatusForbidden, "Still signed in", "This form was not sent from the approval page, so you are still signed in. Use the page's own Sign out button."), false), err
	}
	cleared, err := a.signIn.SignOut(ctx, s)
	if err != nil {
		return pageResponse(notSignedOut(err), false), err
	}
	resp := pageResponse(approvalpage.SignedOut(), false)
	resp.Cookies = []string{cleared}
	return resp, nil
}

// notSignedOut is the page of a sign-out the session store failed: the session was not ended,
// so the person is told they are still signed in, and to try again.
func notSignedOut(err error) approvalpage.View {
	return approvalpage.Problem(apigw.StatusFor(err), "Still signed in", "The host could not end your session right now, so you are still signed in. Try signing out again in a moment.")
}

// signedInView is the page of interruptID for signed-in p: on GET and HEAD the interrupt as
// it stands; on POST the decision its form makes, cast in one host call that reads the run
// once (host.Cast), judged in the page's order: who p is to it, the kind, the form, that the
// form came from this page (fromPage), then the host's rule.
func (a *controller) signedInView(ctx context.Context, c *call, p interrupt.Principal, interruptID string, fromPage func(url.Values) bool) (approvalpage.View, string, error) {
	if c.Req.RequestContext.HTTP.Method != http.MethodPost {
		o, err := a.host.OpenAs(ctx, p, c.RunID, interruptID)
		c.NodeID = o.NodeID
		if !o.Found() {
			return problemPage(err), "", err
		}
		v, err := shown(c, o, cmp.Or(err, o.Refused))
		return v, "", err
	}
	form, formErr := readForm(c.Req)
	var idem *host.Idempotency
	if key := form.Get("formKey"); formErr == nil && key != "" {
		idem = &host.Idempotency{Key: formIdempotencyKey(c.RunID, interruptID, key), Fingerprint: formFingerprint(c.Req, form)}
	}
	cast, err := a.host.Cast(ctx, host.Ballot{Principal: p, RunID: c.RunID, InterruptID: interruptID, Idem: idem,
		Value: func(o host.Opened) (json.RawMessage, error) {
			switch {
			case o.Refused != nil:
				return nil, &pageRefusal{approvalpage.ReadOnly(o, apigw.StatusFor(o.Refused), closedNotice(o, o.Refused)), o.Refused}
			case undecidable(o) != nil:
				return nil, &pageRefusal{approvalpage.ReadOnly(o, http.StatusBadRequest, nil), undecidable(o)}
			case formErr != nil:
				return nil, &pageRefusal{problemPage(formErr), formErr}
			case !fromPage(form):
				err := interrupt.Errorf(interrupt.CodeForbidden, "the form does not carry this session's CSRF token")
				return nil, &pageRefusal{approvalpage.ReadOnly(o, http.StatusForbidden, &approvalpage.Notice{Kind: "error", Text: "This form was not sent from this page; nothing was recorded. Open the link again and decide there."}), err}
			}
			return a.formValue(o, form)
		}})
	o := cast.Interrupt
	c.NodeID = o.NodeID
	var r *pageRefusal
	switch {
	case errors.As(err, &r):
		return r.view, "", r.err
	case !o.Found():
		return problemPage(err), "", err
	}
	return answered(o, form, err)
}

// signInCallback serves GET /signin/callback: the identity provider's answer completes the
// sign-in, the session cookie is set, and the approver goes back to the page it came from.
func (a *controller) signInCallback(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	if a.signIn == nil {
		err := interrupt.Errorf(interrupt.CodeNotFound, "this host signs no one in")
		return pageResponse(problemPage(err), false), err
	}
	query, err := url.ParseQuery(c.Req.RawQueryString)
	if err != nil {
		err := interrupt.Invalid("the callback's query is malformed")
		return pageResponse(problemPage(err), false), err
	}
	_, cookies, next, err := a.signIn.Finish(ctx, c.Req.Cookies, query)
	if err != nil {
		return pageResponse(signInProblem(err), false), signInRefusal(err)
	}
	return redirect(next, cookies...), nil
}

// signInRefusal is a failed sign-in as the access log records it: the browser's or the
// person's doing (no state, a refusal, an account without a tenant) as the client's error that
// its page says; only the identity provider's unavailability stays the host's.
func signInRefusal(err error) error {
	switch {
	case errors.Is(err, signin.ErrState):
		return interrupt.Errorf(interrupt.CodeValidation, "the sign-in's state is missing or expired")
	case errors.Is(err, signin.ErrDenied), errors.Is(err, signin.ErrNoTenant), errors.Is(err, signin.ErrNoPrincipal):
		return interrupt.Errorf(interrupt.CodeForbidden, "the sign-in was refused: %s", err.Error())
	case errors.Is(err, signin.ErrIDToken):
		return interrupt.Errorf(interrupt.CodeUnauthorized, "the identity provider's answer could not be verified")
	}
	return err
}

// redirect sends the browser to location with 303 See Other (a GET whatever the method was),
// setting cookies.
func redirect(location string, cookies ...string) events.APIGatewayV2HTTPResponse {
	headers := maps.Clone(pageHeaders)
	headers["Location"] = location
	delete(headers, "Content-Type")
	return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusSeeOther, Headers: headers, Cookies: cookies}
}

// signInProblem is the page of a sign-in that failed, by pkg/signin's error contract.
func signInProblem(err error) approvalpage.View {
	switch {
	case errors.Is(err, signin.ErrState):
		return approvalpage.Problem(http.StatusBadRequest, "Please sign in again", "This sign-in was not started here, or took too long. Open the link you were sent again.")
	case errors.Is(err, signin.ErrDenied):
		return approvalpage.Problem(http.StatusForbidden, "Sign-in refused", "The identity provider did not sign you in.")
	case errors.Is(err, signin.ErrIDToken):
		return approvalpage.Problem(http.StatusUnauthorized, "Sign-in failed", "The identity provider's answer could not be verified. Open the link you were sent again.")
	case errors.Is(err, signin.ErrNoTenant):
		return approvalpage.Problem(http.StatusForbidden, "No organisation", "Your account does not say which organisation you belong to, so no request can be shown to you.")
	case errors.Is(err, signin.ErrNoPrincipal):
		return approvalpage.Problem(http.StatusForbidden, "No name", "Your account does not carry the name this host knows people by, so no decision can be recorded as yours.")
	case errors.Is(err, signin.ErrUnavailable):
		return approvalpage.Problem(http.StatusServiceUnavailable, "Please try again", "The identity provider cannot be reached right now; nothing was recorded.")
	case errors.Is(err, signin.ErrNext):
		return approvalpage.Problem(http.StatusBadRequest, "This link is not valid", "Check that the whole link was opened.")
	case errors.Is(err, interrupt.ErrUnavailable):
		return approvalpage.Problem(http.StatusServiceUnavailable, "Please try again", "The host cannot check sign-ins right now; nothing was recorded.")
	}
	return approvalpage.Problem(http.StatusInternalServerError, "Something went wrong", "The host could not sign you in. Try the link again later.")
}

// formKey is a fresh one-time form key.
func formKey() string { return strings.ToLower(rand.Text()) }

// closedNotice says, in words, why an interrupt that exists cannot be decided now, or by this
// principal.
func closedNotice(o host.Opened, err error) *approvalpage.Notice {
	n := &approvalpage.Notice{Kind: "error"}
	switch interrupt.ErrorCode(err) {
	case interrupt.CodeAlreadyResolved:
		n.Text = "This request was already decided, or its run ended. Nothing more is needed from you."
		if summary, _ := approvalpage.Outcome(o); summary != "" {
			n.Kind, n.Text = "", "This request was already decided: "+strings.ToLower(summary[:1])+summary[1:]+". Nothing more is needed from you."
		}
	case interrupt.CodeExpired:
		n.Text = "This request passed its deadline; it can no longer be decided."
	case interrupt.CodeAlreadyVoted:
		n.Text = "You have voted on this request already; your first vote counts."
	case interrupt.CodeNotEligible:
		n.Text = "You are not one of the approvers of this request."
	case interrupt.CodeForbidden:
		n.Text = "You cannot decide this request: " + messageOf(err)
	case interrupt.CodeConflict:
		n.Text = "This decision is not possible now: " + messageOf(err)
	case interrupt.CodeUnavailable:
		n.Text = "The host is busy; nothing was recorded. Please try again in a moment."
	case interrupt.CodeOutcomeUnknown:
		n.Text = "The host could not confirm whether your decision was recorded. Open the link again in a moment to see where the request stands."
	default:
		n.Text = "Nothing was recorded: " + messageOf(err)
	}
	return n
}

func messageOf(err error) string {
	var e *interrupt.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "an internal error (the request id identifies it in the host's logs)"
}

// problemPage is the page of a link that shows nothing: not valid, expired, or naming nothing.
func problemPage(err error) approvalpage.View {
	status := apigw.StatusFor(err)
	switch interrupt.ErrorCode(err) {
	case interrupt.CodeTokenInvalid:
		return approvalpage.Problem(status, "This link is not valid", "Check that the whole link was opened; links in some mail clients break across lines.")
	case interrupt.CodeExpired:
		return approvalpage.Problem(status, "This link has expired", "Ask whoever sent it for a new one.")
	case interrupt.CodeNotFound:
		return approvalpage.NotFound(status)
	case interrupt.CodeValidation, interrupt.CodeUnsupportedMedia, interrupt.CodePayloadTooLarge:
		return approvalpage.Problem(status, "The form could not be read", messageOf(err))
	case interrupt.CodeUnavailable:
		return approvalpage.Problem(status, "Please try again", "The host is busy; nothing was recorded.")
	}
	return approvalpage.Problem(status, "Something went wrong", "The host could not show this page. Try the link again later.")
}

// readForm reads a POSTed application/x-www-form-urlencoded body, bounded as every body.
func readForm(req events.APIGatewayV2HTTPRequest) (url.Values, error) {
	mt, _, err := mime.ParseMediaType(req.Headers["content-type"])
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, interrupt.Errorf(interrupt.CodeUnsupportedMedia, "the decision is posted as application/x-www-form-urlencoded")
	}
	body := req.Body
	if req.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			return nil, interrupt.Invalid("the body is not valid base64")
		}
		body = string(b)
	}
	if len(body) > apigw.MaxBody {
		return nil, interrupt.Errorf(interrupt.CodePayloadTooLarge, "the body exceeds %d bytes", apigw.MaxBody)
	}
	form, err := url.ParseQuery(body)
	if err != nil {
		return nil, interrupt.Invalid("the form is malformed")
	}
	// As a JSON body must be: a field that is not text would be recorded as replacement
	// characters, which is not what the person typed.
	for name, values := range form {
		if !utf8.ValidString(name) || slices.ContainsFunc(values, func(v string) bool { return !utf8.ValidString(v) }) {
			return nil, interrupt.Invalid(fmt.Sprintf("the form's field %q is not valid UTF-8 text", name))
		}
	}
	return form, nil
}

// formIdempotencyKey is the Idempotency-Key of a form posted with key to decide o: bound to its
// run and interrupt, since the host scopes a key to the run and the caller only, and a
// signed-in approver is one caller for every interrupt of a run (the same form posted to two of
// them is two decisions, not a replay of the first).
func formIdempotencyKey(runID, interruptID, key string) string {
	return "form:" + runID + "/" + interruptID + ":" + key
}

// formFingerprint identifies a posted decision for its form key: the route, the token and the
// fields as posted, sorted (decidedAt is the server's, so the same form twice is the same).
func formFingerprint(req events.APIGatewayV2HTTPRequest, form url.Values) string {
	var b strings.Builder
	b.WriteString(req.RouteKey + "\n" + req.PathParameters["token"])
	for _, k := range slices.Sorted(maps.Keys(form)) {
		for _, v := range form[k] {
			b.WriteString("\n" + k + "=" + v)
		}
	}
	return b.String()
}

// pageResponse renders v; a HEAD answer has the headers and no body.
func pageResponse(v approvalpage.View, head bool) events.APIGatewayV2HTTPResponse {
	body, err := approvalpage.Render(v)
	if err != nil {
		body, v.Status = []byte("<!doctype html><title>Error</title><p>The page could not be rendered."), http.StatusInternalServerError
	}
	resp := events.APIGatewayV2HTTPResponse{StatusCode: v.Status, Headers: maps.Clone(pageHeaders), Body: string(body)}
	if head {
		resp.Body = ""
	}
	return resp
}
