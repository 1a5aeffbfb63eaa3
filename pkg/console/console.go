// Package console is the operators' console: what waits in a tenant and on whom, a run's story as
// a person reads it, and the two things an operator does there (end a run, resend a delivery),
// as server-rendered pages without script (docs/design.md, "The operator's console"). It looks
// and prints values as the approval page does, from the kit they share (package webkit), and
// imports nothing of the page. It renders; pkg/apigw/web reads the host and serves the routes.
package console

import (
	"bytes"
	_ "embed"
	"html/template"
	"net/http"
	"sync"

	"github.com/interrupthost/interrupthost/pkg/webkit"
	"github.com/interrupthost/interrupthost/pkg/words"
)

//go:embed assets/console.css
var own string

//go:embed assets/console.html
var layout string

// css is the console's stylesheet: the host's, which the approval page has too (package webkit),
// and the console's own rules after it.
var css = webkit.Style() + own

// CSP is the console's Content-Security-Policy: as the approval page's, for its own stylesheet.
var CSP = webkit.CSPFor(css)

// page is the layout, parsed at the first render (a template keeps every exported method of the
// program linked; only the function that renders pays for it at init).
func page() *template.Template {
	parsed.once.Do(func() { parsed.t = template.Must(template.New("").Parse(layout)) })
	return parsed.t
}

var parsed struct {
	once sync.Once
	t    *template.Template
}

// View is one page of the console.
type View struct {
	// Status is the HTTP status the page is answered with.
	Status int
	Title  string
	// Operator and Tenant say who is signed in, under which tenant; none on a refusal that
	// must show nothing of the tenant.
	Operator, Tenant string
	Notice           *Notice
	Home             *Home
	Runs             *Runs
	Run              *Run
	// Problem is the text of a page that shows only what went wrong.
	Problem string
	// SignOut is the sign-out form (its action relative to the page, and the session's CSRF).
	SignOut *SignOut
}

// SignOut is the form that ends the session.
type SignOut struct{ Action, CSRF string }

// Notice is a message above the page: what was done, or what was wrong.
type Notice struct {
	// Kind is "ok", "error" or "" (information).
	Kind, Text string
}

// Home is the console's first page: what waits in the tenant, a page at a time.
type Home struct {
	// Summary says how many wait on this page and the oldest.
	Summary string
	Rows    []Row
	// Run and Kind are the search and the filter as asked; Kinds the filter's choices.
	Run, Kind string
	Kinds     []Choice
	// First and Next link the list's first and next pages; "" for none.
	First, Next string
	// Elsewhere links the list of every run for a searched run that waits on nothing.
	Elsewhere string
}

// Choice is one option of a select.
type Choice struct {
	Value, Label string
	Selected     bool
}

// Row is one interrupt a run waits on.
type Row struct {
	RunHref, RunID, Title, Kind, WaitsOn, Tally, Requested, Deadline string
	// Late marks a deadline passed or within the hour.
	Late bool
}

// Run is a run's page.
type Run struct {
	// Status is the run's status in words ("waits for an approval").
	ID, Status string
	// Waiting are the interrupts the run waits on now.
	Waiting []Waiting
	// Story is a page of the run's commits in words, oldest first; Earlier and Later link the
	// pages around it.
	Story          []Line
	Earlier, Later string
	// Deliveries are each subscription's recent deliveries of the run's events.
	Deliveries []Subscription
	// CSRF is the session's, for the forms; Ended says the run takes no more (no end form).
	CSRF  string
	Ended bool
	// Reason is a refused end form's reason, shown again.
	Reason string
	// Base goes before the page's relative links: "" at the run's path, "../" on a refused
	// form's page, answered at the form's path below it.
	Base string
}

// Waiting is one interrupt a run waits on, as its page shows it.
type Waiting struct {
	Title, Kind, Step, Tally, WaitsOn, Requested, Deadline, PageHref string
	Votes                                                            []string
	// Late marks a deadline passed or within the hour, as the list marks one.
	Late bool
}

// Line is one event of a run's story: when, who, what, in words; a quote (a comment, a reason,
// a question) as it was written; payload data as fields and tables, and its JSON on demand.
type Line struct {
	When, Who, Text, Quote string
	Sections               []webkit.Section
	JSON                   string
	// Anchor is the line's element id, "seq-index".
	Anchor string
}

// Subscription is one subscription's recent deliveries of a run's events.
type Subscription struct {
	ID, Target, Format string
	Attempts           []Attempt
}

// Attempt is one delivery attempt.
type Attempt struct {
	EventID, EventType, Status, When, Detail string
	Attempts                                 int
	Failed, Resent                           bool
}

// Render writes v as HTML.
func Render(v View) ([]byte, error) {
	var b bytes.Buffer
	err := page().ExecuteTemplate(&b, "page", struct {
		View
		CSS template.CSS
	}{v, template.CSS(css)})
	return b.Bytes(), err
}

// Refused is the page of someone signed in who is not an operator: it names them (isolated,
// words.Isolated), so that one signed in as the wrong person can sign out, and nothing of the
// tenant.
func Refused(principal string, signOut *SignOut) View {
	return View{
		Status: http.StatusForbidden, Title: "Not an operator", SignOut: signOut,
		Problem: "You are signed in as " + words.Isolated(principal) + ", who does not hold this host's operator role. " +
			"The console shows a tenant's runs to its operators only. If you are one, sign out and sign in with that account.",
	}
}

// Problem is a page that says only what went wrong, with status.
func Problem(status int, title, text string) View {
	return View{Status: status, Title: title, Problem: text}
}
