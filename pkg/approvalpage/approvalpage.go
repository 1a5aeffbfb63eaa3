// Package approvalpage renders the page an approver opens from a mail or chat link (GET
// /approve/{token}) and reads the decision it posts back: html/template escapes every payload
// string, the page runs no script at all and loads nothing but itself, and its forms work in
// any browser (docs/approvers.md, "The approval page"). The HTTP mapping is package web's (pkg/apigw/web); this package
// knows views, forms and resume values.
package approvalpage

import (
	"bytes"
	_ "embed"
	"html/template"
	"net/url"
	"slices"
	"sync"

	"github.com/interrupthost/interrupthost/pkg/webkit"
)

// css is the page's stylesheet: the host's (package webkit), which the console builds on.
var css = webkit.Style()

//go:embed assets/page.html
var layout string

// page is the layout, parsed at the first render rather than at init (a sync.OnceValue variable
// is built at init too): a template package keeps every exported method of the program linked
// (it calls methods by name), so only the function that renders the page should pay for it.
func page() *template.Template {
	parsed.once.Do(func() { parsed.t = template.Must(template.New("").Parse(layout)) })
	return parsed.t
}

var parsed struct {
	once sync.Once
	t    *template.Template
}

// CSP is the page's Content-Security-Policy: nothing may load or run but its own style element
// (by hash), and its forms post only back to the host. No script-src: the page has no script.
var CSP = webkit.CSPFor(css)

// View is one page.
type View struct {
	// Status is the HTTP status the page is answered with.
	Status  int
	Title   string
	Kicker  string
	Heading string
	Notice  *Notice
	Facts   []Fact
	// Call is the exact call an approval allows, in words, before anything else of it.
	Call *Call
	// Description is the approval's own text, shown as written.
	Description string
	// Blocks are JSON values shown formatted (a custom payload, data of no simpler shape).
	Blocks []Block
	// Sections are the artifact's data as a person reads it: its fields by label, a list of
	// records as a table, each nested object a section of its own. Raw is the same data as
	// JSON, behind a disclosure, for whoever needs it exact.
	Sections []Section
	Raw      string
	// Asked are the approvers' questions so far, for every approver to read.
	Asked []Asked
	// Artifact links to where the artifact can be read in full, when the request gave it.
	Artifact *Link
	// Inbox is a signed-in approver's list of what waits for them (GET /approve).
	Inbox  *InboxList
	Form   *Form
	Footer string
	// Reference names the request as the engine does (its run and step), in small print.
	Reference string
	// SignOut is a signed-in page's sign-out form, and SignedInAs its header's who and which
	// tenant ("Signed in as alice · acme").
	SignOut    *SignOut
	SignedInAs string
	// notFound marks NotFound's page, which SignedIn says more of.
	notFound bool
}

// SignOut is the form that ends a signed-in page's session: it posts to Action with the
// session's CSRF token, so no other site can sign the person out.
type SignOut struct{ Action, CSRF string }

// Notice is a message above the page's content: an outcome, or what was wrong.
type Notice struct {
	// Kind is "ok", "error" or "" (information).
	Kind  string
	Text  string
	Items []string
}

// InboxList is a page of an approver's inbox: its items, and the links to the first and the
// next page when there are more.
type InboxList struct {
	Items       []InboxEntry
	First, Next string
}

// InboxEntry is one interrupt in an inbox, as a line a person scans: what, by when, how far,
// and a link to its page.
type InboxEntry struct {
	Href, Kind, Title, Asked, Due, Tally string
	Voted                                bool
}

// Link is a link out of the page: an https URL the request gave (interrupt.Display).
type Link struct{ URL, Text string }

// Asked is one approver's question: who, when, what.
type Asked struct{ By, When, Question string }

// Call is the call an approval allows, as a person reads it: Sentence says who will call what
// ("The agent will call issue_refund with order 4471, amount 1,240.00 EUR"); Arguments are the
// arguments, one per row; Approved, once decided with edits, says the call as approved. Both
// sentences are HTML that words.Sentence wrote: escaped, each value the call holds in <bdi>.
type Call struct {
	Sentence  template.HTML
	Arguments []Fact
	Approved  template.HTML
}

// Fact is one labelled value of the interrupt: the host's kit's (webkit.Fact), so that the page
// and the console list values alike.
type Fact = webkit.Fact

// Block is a labelled JSON value.
type Block struct{ Label, Text string }

// Section is one part of an artifact's data, as webkit.Sections lays it out for the page and
// the console alike.
type Section = webkit.Section

// Table is a list of records, as webkit.Sections lays it out for the page and the console alike.
type Table = webkit.Table

// Form is the decision the page offers, if any.
type Form struct {
	// Key is the one-time form key: a double submit is one decision (the Idempotency-Key).
	Key string
	// CSRF is a signed-in page's form token, bound to the session: a form posted from another
	// site without it decides nothing.
	CSRF string
	// NeedsName asks who decides: the link's token names no principal.
	NeedsName bool
	Approval  *ApprovalForm
	Questions []Question
	// values are what the caller posted, shown again when the page answers a mistake.
	values url.Values
}

// ApprovalForm is an approval's actions, each one offered only if the approval allows it.
type ApprovalForm struct {
	Accept, Reject, Refine, EditAccept, Ask bool
	ArtifactType                            string
	// Fields are flat data's members, edited one by one; for data of any other shape, Edited
	// prefills edit-accept's JSON with it. The data edited are an approval's call's arguments
	// when it allows a call (EditsCall), else its artifact's data.
	Fields    []EditField
	Edited    string
	EditsCall bool
	// Sections and Items are the parts of the data a request for changes may name; none when
	// the data has no parts.
	Sections, Items []RefinePart
	// Chosen is the decision a mail's Approve or Reject chose ("accept", "reject"): the form then
	// offers it alone, to confirm (View.Choose).
	Chosen string
}

// Question is one clarification question as a form field.
type Question struct {
	ID, Label, Hint string
	// Input is "text", "number", "yesno" (a boolean), "select" (an enum) or "json", from the
	// question's schema: a choice is offered as choices.
	Input   string
	Options []string
	Value   string
}

// Value is what the caller posted in field name, to show again.
func (f *Form) Value(name string) string { return f.values.Get(name) }

// Posted reports whether the caller posted value in field name (a checked box), to check again.
func (f *Form) Posted(name, value string) bool { return slices.Contains(f.values[name], value) }

// Named is the name field of one of the page's forms, whose ids must differ.
func (f *Form) Named(id string) struct {
	ID, Name  string
	NeedsName bool
} {
	return struct {
		ID, Name  string
		NeedsName bool
	}{ID: id, Name: f.values.Get("decidedBy"), NeedsName: f.NeedsName}
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
