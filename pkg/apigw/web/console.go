package web

import (
	"context"
	"encoding/base64"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/console"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/signin"
)

// The console is open to the network as the approval page is (no authorizer on its routes): it
// signs the operator in with the page's OpenID Connect flow and session cookie, and opens to a
// session whose roles hold Options.OperatorRole; its tenant is the session's. GET renders and
// never writes; each POST (a form) carries the session's CSRF value, ends a run or resends a
// delivery through the host's operations as the operator, then redirects to the run's page
// (Post/Redirect/Get). No script: every page reads and acts without it.

// consoleHeaders are the approval page's headers with the console's Content-Security-Policy.
var consoleHeaders = func() map[string]string {
	h := maps.Clone(pageHeaders)
	h["Content-Security-Policy"] = console.CSP
	return h
}()

// consoleResponse answers v as HTML (only its headers for HEAD).
func consoleResponse(v console.View, head bool) events.APIGatewayV2HTTPResponse {
	body, err := console.Render(v)
	if err != nil {
		body, v.Status = []byte("The console could not be shown."), http.StatusInternalServerError
	}
	resp := events.APIGatewayV2HTTPResponse{StatusCode: v.Status, Headers: maps.Clone(consoleHeaders)}
	if !head {
		resp.Body = string(body)
	}
	return resp
}

// consoleCrash is the page a panic while serving the console answers.
func consoleCrash() events.APIGatewayV2HTTPResponse {
	return consoleResponse(console.Problem(http.StatusInternalServerError, "Something went wrong", "The console could not show this page. Try again later."), false)
}

// The console's paths relative to its pages: the sign-out form of /console, of /console/runs
// and of /console/runs/{runId}.
const (
	signOutFromConsole = "signin/signout"
	signOutFromRuns    = "../signin/signout"
	signOutFromRun     = "../../signin/signout"
)

// operator is the console's caller: the session, if its principal holds the operator role, and
// its CSRF value. An answer is set when the caller is not one: the sign-in for a request without
// a live session (a form posted with one signed out is 401 and changes nothing), a 403 page
// naming only who is signed in for one without the role, and the console unavailable, letting
// no one in, when the session store fails.
func (a *API) operator(ctx context.Context, c *call, signOut string) (signin.Session, string, *events.APIGatewayV2HTTPResponse, error) {
	head := isHead(c)
	if a.signIn == nil {
		err := interrupt.Errorf(interrupt.CodeNotFound, "this host signs no one in")
		resp := consoleResponse(console.Problem(http.StatusNotFound, "No console", "This host signs no one in, so it has no console."), head)
		return signin.Session{}, "", &resp, err
	}
	unavailable := func(err error) (signin.Session, string, *events.APIGatewayV2HTTPResponse, error) {
		resp := consoleResponse(console.Problem(apigw.StatusFor(err), "The console is unavailable", "Nothing was changed. Try again in a moment."), head)
		return signin.Session{}, "", &resp, err
	}
	s, err := a.signIn.SessionFrom(ctx, c.Req.Cookies)
	switch {
	case errors.Is(err, signin.ErrNoSession) && c.Req.RequestContext.HTTP.Method == http.MethodPost:
		err := interrupt.Errorf(interrupt.CodeUnauthorized, "a console form posted without a session")
		resp := consoleResponse(console.Problem(http.StatusUnauthorized, "Signed out", "Your sign-in has ended, so nothing was changed. Open the console again to sign in."), false)
		return signin.Session{}, "", &resp, err
	case errors.Is(err, signin.ErrNoSession):
		resp, err := a.beginConsoleSignIn(ctx, c, head)
		return signin.Session{}, "", &resp, err
	case err != nil:
		return unavailable(err)
	}
	csrf, err := a.signIn.CSRF(ctx, s)
	if err != nil {
		return unavailable(err)
	}
	if !slices.Contains(s.Roles, a.opts.OperatorRole) {
		err := interrupt.Errorf(interrupt.CodeForbidden, "the session's principal does not hold the operator role")
		resp := consoleResponse(console.Refused(s.Subject, &console.SignOut{Action: signOut, CSRF: csrf}), head)
		return signin.Session{}, "", &resp, err
	}
	return s, csrf, nil, nil
}

// consoleQuery are the query parameters a console page is asked with (a search, a filter, a
// page), which its sign-in keeps.
var consoleQuery = []string{"run", "kind", "after", "q", "status", "since", "until"}

// beginConsoleSignIn starts the sign-in of a console page's GET without a session, coming back to
// the page as it was asked: its path and its search, filter and page (consoleQuery),
// re-encoded, so that a link to a run's search survives the sign-in. A query too long to travel
// in the sign-in's state comes back to the path alone.
func (a *API) beginConsoleSignIn(ctx context.Context, c *call, head bool) (events.APIGatewayV2HTTPResponse, error) {
	base, err := a.gw.BaseURL(c.Req)
	if err != nil {
		return pageResponse(problemPage(err), head), err
	}
	next, q := c.Req.RawPath, url.Values{}
	for _, k := range consoleQuery {
		if v, ok := c.Req.QueryStringParameters[k]; ok {
			q.Set(k, v)
		}
	}
	if len(q) > 0 && len(next)+1+len(q.Encode()) <= maxConsoleNext {
		next += "?" + q.Encode()
	}
	to, cookie, err := a.signIn.Begin(ctx, base, next)
	if err != nil {
		return pageResponse(signInProblem(err), head), err
	}
	return redirect(to, cookie), nil
}

// maxConsoleNext bounds the page a console sign-in comes back to, within the sign-in's own
// bound on it (2048).
const maxConsoleNext = 1024

// consoleHome serves GET and HEAD /console: what waits in the operator's tenant, a page of the
// pending list at a time (?after=), or one run's (?run=), of a kind (?kind=).
func (a *API) consoleHome(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	s, csrf, refused, err := a.operator(ctx, c, signOutFromConsole)
	if refused != nil {
		return *refused, err
	}
	p := principalOf(s)
	head := isHead(c)
	v := console.View{Status: http.StatusOK, Title: "What waits", Operator: p.Subject, Tenant: p.Tenant, SignOut: &console.SignOut{Action: signOutFromConsole, CSRF: csrf}}
	q := c.Req.QueryStringParameters
	run, kind := strings.TrimSpace(q["run"]), q["kind"]
	var after string
	if cursor, ok := q["after"]; ok {
		b, derr := base64.RawURLEncoding.DecodeString(cursor)
		if derr != nil || len(b) == 0 || len(b) > apigw.MaxCursor {
			err = interrupt.Invalid("after is not the next of an earlier page")
		}
		after = string(b)
	}
	if (run != "" && !runlog.ValidID(run)) || !console.ValidKind(kind) {
		err = interrupt.Invalid("the search is not acceptable", interrupt.FieldError{Path: "run", Message: "must be a run id"})
	}
	if err != nil {
		v.Status, v.Notice = http.StatusBadRequest, &console.Notice{Kind: "error", Text: "That search is not one the console can run: a run id is letters, digits and . _ : - (up to 128), and the kind one of the list's."}
		v.Home = console.HomeOf(console.HomeParams{Now: a.host.Now()})
		return consoleResponse(v, head), err
	}
	var page host.PendingPage
	if run != "" {
		page, err = a.host.PendingInRun(ctx, p, run)
	} else {
		page, err = a.host.PendingInterrupts(ctx, p, after, host.DefaultPendingLimit)
	}
	if err != nil {
		return consoleResponse(console.Problem(apigw.StatusFor(err), "What waits cannot be shown right now", "Nothing was changed. Try again in a moment."), head), err
	}
	first, next := "", ""
	filter := ""
	if kind != "" {
		filter = "&kind=" + url.QueryEscape(kind)
	}
	if after != "" {
		first = "console" + strings.Replace(filter, "&", "?", 1)
	}
	if page.Next != "" && run == "" {
		next = "console?after=" + base64.RawURLEncoding.EncodeToString([]byte(page.Next)) + filter
	}
	var refs []string
	for _, i := range page.Interrupts {
		refs = append(refs, i.WaitingOn...)
	}
	v.Home = console.HomeOf(console.HomeParams{Pending: page.Interrupts, SearchedRun: run, Kind: kind, FirstPage: first, NextPage: next,
		Names: a.names(ctx, p, refs), Now: a.host.Now()})
	return consoleResponse(v, head), nil
}

// consoleRuns serves GET and HEAD /console/runs: every run of the operator's tenant, most recent
// activity first (host.Runs), of a status (?status=), active within days (?since=, ?until=, UTC,
// both included), found by a run id prefix or words of its titles (?q=), a page at a time
// (?after=). A search it cannot run is 400 with the form, and reads nothing.
func (a *API) consoleRuns(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	s, csrf, refused, err := a.operator(ctx, c, signOutFromRuns)
	if refused != nil {
		return *refused, err
	}
	p := principalOf(s)
	head := isHead(c)
	v := console.View{Status: http.StatusOK, Title: "Every run", Operator: p.Subject, Tenant: p.Tenant, SignOut: &console.SignOut{Action: signOutFromRuns, CSRF: csrf}}
	q := c.Req.QueryStringParameters
	asked := console.RunsParams{Query: strings.TrimSpace(q["q"]), Status: q["status"], Since: q["since"], Until: q["until"], Now: a.host.Now()}
	search := host.RunSearch{Status: asked.Status, Text: asked.Query}
	var bad []interrupt.FieldError
	if asked.Since != "" {
		t, perr := time.Parse(time.DateOnly, asked.Since)
		if perr != nil {
			bad = append(bad, interrupt.FieldError{Path: "since", Message: "must be a day, 2006-01-02"})
		}
		search.Since = t
	}
	if asked.Until != "" {
		t, perr := time.Parse(time.DateOnly, asked.Until)
		if perr != nil {
			bad = append(bad, interrupt.FieldError{Path: "until", Message: "must be a day, 2006-01-02"})
		}
		search.Until = t.AddDate(0, 0, 1)
	}
	if cursor, ok := q["after"]; ok {
		b, derr := base64.RawURLEncoding.DecodeString(cursor)
		if derr != nil || len(b) == 0 || len(b) > apigw.MaxCursor {
			bad = append(bad, interrupt.FieldError{Path: "after", Message: "must be the next of an earlier page"})
		}
		search.After = string(b)
	}
	if utf8.RuneCountInString(asked.Query) > maxRunsQuery || strings.ContainsFunc(asked.Query, unicode.IsControl) {
		bad = append(bad, interrupt.FieldError{Path: "q", Message: "must be at most 200 characters"})
	}
	var page runlog.RunPage
	var query runlog.RunQuery
	if len(bad) > 0 {
		err = interrupt.Invalid("the search is not acceptable", bad...)
	} else {
		page, query, err = a.host.Runs(ctx, p, search)
	}
	if interrupt.ErrorCode(err) == interrupt.CodeValidation {
		v.Status, v.Notice = http.StatusBadRequest, &console.Notice{Kind: "error", Text: "That search is not one the console can run: " + problemText(err) +
			" A status is one of the list's, days are as the date fields give them (the first not after the last), and the words at most 8."}
		v.Runs = console.RunsOf(asked)
		return consoleResponse(v, head), err
	}
	if err != nil {
		return consoleResponse(console.Problem(apigw.StatusFor(err), "The runs cannot be shown right now", "Nothing was changed. Try again in a moment."), head), err
	}
	params := url.Values{}
	for k, val := range map[string]string{"q": asked.Query, "status": asked.Status, "since": asked.Since, "until": asked.Until} {
		if val != "" {
			params.Set(k, val)
		}
	}
	if search.After != "" {
		asked.FirstPage = "runs"
		if len(params) > 0 {
			asked.FirstPage += "?" + params.Encode()
		}
	}
	if page.Next != "" {
		params.Set("after", base64.RawURLEncoding.EncodeToString([]byte(page.Next)))
		asked.NextPage = "runs?" + params.Encode()
	}
	asked.Page, asked.ByID = page, query.ByID()
	v.Runs = console.RunsOf(asked)
	return consoleResponse(v, head), nil
}

// maxRunsQuery bounds the list of runs' search, in characters.
const maxRunsQuery = 200

// names are the names the tenant's contacts give the refs; none for a ref without a contact
// (or one that cannot be read now), which the console says as itself. One read per distinct ref.
func (a *API) names(ctx context.Context, p interrupt.Principal, refs []string) console.Names {
	known := map[string]string{}
	for _, ref := range refs {
		if _, ok := known[ref]; ok {
			continue
		}
		known[ref] = ""
		kind, name, ok := console.Ref(ref)
		if !ok || a.contacts == nil {
			continue
		}
		if ct, err := a.contacts.Get(ctx, p, kind, name); err == nil {
			known[ref] = ct.Name
		}
	}
	return func(ref string) string { return known[ref] }
}

// consoleRun serves GET and HEAD /console/runs/{runId}: the run's story from ?after= (a seq),
// what it waits on, its deliveries, and the forms that end it.
func (a *API) consoleRun(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	s, csrf, refused, err := a.operator(ctx, c, signOutFromRun)
	if refused != nil {
		return *refused, err
	}
	return a.runPage(ctx, c, principalOf(s), csrf, nil, "")
}

// runPage is the run's page, with a notice and a refused end form's reason, if any. It is
// answered at the run's path, and at a form's below it (a refused form's page), whose relative
// links go one level further up.
func (a *API) runPage(ctx context.Context, c *call, p interrupt.Principal, csrf string, notice *console.Notice, reason string) (events.APIGatewayV2HTTPResponse, error) {
	head := isHead(c)
	up := ""
	if c.Req.RequestContext.HTTP.Method == http.MethodPost {
		up = "../"
	}
	signOut := &console.SignOut{Action: up + signOutFromRun, CSRF: csrf}
	if err := c.ReadRun(); err != nil {
		return consoleResponse(console.View{Status: http.StatusNotFound, Title: "No such run", Operator: p.Subject, Tenant: p.Tenant, SignOut: signOut,
			Problem: "The console has no run of that id in tenant " + p.Tenant + "."}, head), err
	}
	var after int64
	if s, ok := c.Req.QueryStringParameters["after"]; ok {
		n, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil || n < 0 {
			err := interrupt.Invalid("after is not a seq")
			return consoleResponse(console.View{Status: http.StatusBadRequest, Title: "Run " + c.RunID, Operator: p.Subject, Tenant: p.Tenant, SignOut: signOut,
				Problem: "That page of the run's story does not exist. Open the run from the console's list."}, head), err
		}
		after = n
	}
	story, err := a.host.Story(ctx, p, c.RunID, after, host.MaxStoryChapters)
	if err != nil {
		status, text := apigw.StatusFor(err), "The run cannot be shown right now. Nothing was changed; try again in a moment."
		if interrupt.ErrorCode(err) == interrupt.CodeNotFound {
			text = "The console has no run " + c.RunID + " in tenant " + p.Tenant + "."
		}
		return consoleResponse(console.View{Status: status, Title: "Run " + c.RunID, Operator: p.Subject, Tenant: p.Tenant, SignOut: signOut, Problem: text}, head), err
	}
	deliveries, err := a.runDeliveries(ctx, p, c.RunID)
	if err != nil {
		return consoleResponse(console.View{Status: apigw.StatusFor(err), Title: "Run " + c.RunID, Operator: p.Subject, Tenant: p.Tenant, SignOut: signOut,
			Problem: "The run's deliveries cannot be read right now. Nothing was changed; try again in a moment."}, head), err
	}
	earlier, later := "", ""
	if after > 0 {
		earlier = "./" + url.PathEscape(c.RunID)
	}
	if story.More {
		later = "./" + url.PathEscape(c.RunID) + "?after=" + strconv.FormatInt(story.Next, 10)
	}
	var refs []string
	for _, w := range story.Waiting {
		for _, r := range w.Undecided {
			refs = append(refs, r.Kind+":"+r.Ref)
		}
	}
	if earlier != "" {
		earlier = up + earlier
	}
	if later != "" {
		later = up + later
	}
	run := console.RunOf(console.RunParams{Story: story, Deliveries: deliveries, EarlierPage: earlier, LaterPage: later, CSRF: csrf,
		Names: a.names(ctx, p, refs), Now: a.host.Now()})
	run.Reason, run.Base = reason, up
	v := console.View{Status: http.StatusOK, Title: "Run " + c.RunID, Operator: p.Subject, Tenant: p.Tenant, Run: run, Notice: notice, SignOut: signOut}
	return consoleResponse(v, head), nil
}

// runDeliveries are each of the tenant's subscriptions' recent attempts of the run's events.
func (a *API) runDeliveries(ctx context.Context, p interrupt.Principal, runID string) ([]console.Subscription, error) {
	subs, err := a.subs.List(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []console.Subscription
	for _, s := range subs {
		attempts, err := a.subs.Store.Attempts(ctx, p.Tenant, s.ID, outbound.MaxDeliveriesListed)
		if err != nil {
			return nil, err
		}
		out = append(out, console.Deliveries(s, attempts, runID))
	}
	return out, nil
}

// maxReason bounds an end form's reason, as the end-run route bounds one.
const maxReason = 1000

// consoleEnd serves POST /console/runs/{runId}/cancel and .../complete: the run ended as the
// operator, with the form's reason, then back to its page (303). A form without the session's
// CSRF value, or without a reason, ends nothing.
func (a *API) consoleEnd(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	s, csrf, refused, err := a.operator(ctx, c, "../../../signin/signout")
	if refused != nil {
		return *refused, err
	}
	p := principalOf(s)
	end := interrupt.RunCancelled
	if strings.HasSuffix(c.Req.RouteKey, "/complete") {
		end = interrupt.RunCompleted
	}
	form, err := a.consoleForm(ctx, c, s)
	if err != nil {
		return a.formRefused(ctx, c, p, csrf, err, "")
	}
	reason := strings.TrimSpace(form.Get("reason"))
	if reason == "" || utf8.RuneCountInString(reason) > maxReason || strings.ContainsFunc(reason, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' }) {
		err := interrupt.Invalid("the reason is not acceptable", interrupt.FieldError{Path: "reason", Message: "must be 1 to 1000 characters"})
		return a.formRefused(ctx, c, p, csrf, err, reason)
	}
	if err := c.ReadRun(); err != nil {
		return a.formRefused(ctx, c, p, csrf, err, reason)
	}
	if _, err := a.host.EndRun(ctx, p, c.RunID, end, reason); err != nil {
		return a.formRefused(ctx, c, p, csrf, err, reason)
	}
	return redirect("../" + url.PathEscape(c.RunID)), nil
}

// consoleResend serves POST /console/runs/{runId}/resend: one event sent to a subscription's
// receiver again, now, as POST /subscriptions/{id}/deliveries does, then back to the run's page.
func (a *API) consoleResend(ctx context.Context, c *call) (events.APIGatewayV2HTTPResponse, error) {
	session, csrf, refused, err := a.operator(ctx, c, "../../../signin/signout")
	if refused != nil {
		return *refused, err
	}
	p := principalOf(session)
	form, err := a.consoleForm(ctx, c, session)
	if err == nil {
		err = c.ReadRun()
	}
	if err != nil {
		return a.formRefused(ctx, c, p, csrf, err, "")
	}
	id, eventID := form.Get("subscription"), form.Get("eventId")
	if run, _, _, ok := outbound.ParseEventID(eventID); !runlog.ValidID(id) || !ok || run != c.RunID {
		return a.formRefused(ctx, c, p, csrf, interrupt.Invalid("the resend names no delivery of this run"), "")
	}
	s, err := a.subs.Get(ctx, p, id)
	if err != nil {
		return a.formRefused(ctx, c, p, csrf, err, "")
	}
	base, err := a.gw.BaseURL(c.Req)
	if err != nil {
		return a.formRefused(ctx, c, p, csrf, err, "")
	}
	if _, err := a.resend.Resend(ctx, s, eventID, base); err != nil {
		return a.formRefused(ctx, c, p, csrf, err, "")
	}
	return redirect("../" + url.PathEscape(c.RunID) + "#deliveries"), nil
}

// errNotFromConsole refuses a form without the session's CSRF value: posted from elsewhere.
var errNotFromConsole = interrupt.Errorf(interrupt.CodeForbidden, "the form does not carry this session's CSRF token")

// consoleForm reads a console form and checks its CSRF value against s's, the session operator
// found (and read its record of) for this request.
func (a *API) consoleForm(ctx context.Context, c *call, s signin.Session) (url.Values, error) {
	form, err := readForm(c.Req)
	if err != nil {
		return nil, err
	}
	if !a.signIn.CheckCSRF(ctx, s, form.Get("csrf")) {
		return nil, errNotFromConsole
	}
	return form, nil
}

// formRefused is the run's page after a form that changed nothing, saying why.
func (a *API) formRefused(ctx context.Context, c *call, p interrupt.Principal, csrf string, err error, reason string) (events.APIGatewayV2HTTPResponse, error) {
	text := "Nothing was changed: " + problemText(err)
	if errors.Is(err, errNotFromConsole) {
		text = "Nothing was changed: this form was not sent from the console. Use the console's own buttons."
	}
	resp, rerr := a.runPage(ctx, c, p, csrf, &console.Notice{Kind: "error", Text: text}, reason)
	if rerr != nil {
		return resp, rerr // the run's page itself could not be shown: its own status
	}
	resp.StatusCode = apigw.StatusFor(err)
	return resp, err
}

// problemText is err as the console tells it: the message of a refusal, or that the host could
// not do it now.
func problemText(err error) string {
	var e *interrupt.Error
	if errors.As(err, &e) {
		return e.Message + "."
	}
	return "the host could not do it now; try again in a moment."
}
