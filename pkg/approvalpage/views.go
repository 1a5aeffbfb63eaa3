package approvalpage

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/webkit"
	"github.com/interrupthost/interrupthost/pkg/words"
)

// footer reminds whoever holds the page what the link is.
const footer = "This page was opened from a personal link: do not forward it. Opening it changes nothing; only a button on it does."

// SignedIn is v as a signed-in approver sees it: its header says who is signed in to which
// tenant ("Signed in as alice · acme"), its forms carry the session's CSRF token, the footer
// says who decides, and a sign-out form posting to signOut lets someone signed in as another
// person (or under another tenant) end the session rather than wait for it to expire. A request
// not found (NotFound) may be another tenant's, which the page then says.
func SignedIn(v View, principal, tenant, csrf, signOut string) View {
	v.SignedInAs = "Signed in as " + principal + " · " + tenant
	if v.notFound {
		v.Notice = &Notice{Kind: "error", Text: "The request this link names does not exist (any more), or it belongs to another tenant than " + tenant + ", the one you are signed in to. If it is another tenant's, sign out and sign in to that one."}
	}
	if v.Form != nil {
		v.Form.CSRF = csrf
	}
	v.Footer = "You are signed in as " + principal + ": a decision here is recorded as yours. Opening this page changes nothing; only a button on it does."
	if v.Form == nil {
		v.Footer = "You are signed in as " + principal + ". This page decides nothing; opening it changes nothing."
	}
	v.SignOut = &SignOut{Action: signOut, CSRF: csrf}
	return v
}

// SignedOut is the page after a sign-out.
func SignedOut() View {
	return View{
		Status: http.StatusOK, Title: "Signed out", Kicker: "Approval page", Heading: "You are signed out",
		Notice: &Notice{Kind: "ok", Text: "This browser no longer holds your sign-in to the approval page. Open the link you were sent to sign in again; if your organisation's sign-in page still remembers the wrong account, sign out there too."},
	}
}

// when spells a time for people, in UTC (the page cannot know the reader's zone without script).
func when(t time.Time) string { return t.UTC().Format("Mon 2 Jan 2006, 15:04 UTC") }

// Decidable reports whether the page offers a decision on an interrupt of kind k.
func Decidable(k interrupt.Kind) bool {
	return k == interrupt.KindApproval || k == interrupt.KindClarification
}

// content is what a page reads of the InterruptPayload's data, parsed once per page.
type content struct {
	// members are the data's members, for the facts.
	members                                      map[string]json.RawMessage
	Title, ArtifactType, ArtifactID, Description string
	ArtifactData                                 json.RawMessage
	// questions are a clarification's questions' texts, by id, and order their ids as asked.
	questions map[string]string
	order     []string
}

func contentOf(o host.Opened) content {
	var p struct {
		Data json.RawMessage `json:"data"`
	}
	var c content
	var d struct {
		Title        string          `json:"title"`
		ArtifactType string          `json:"artifactType"`
		ArtifactID   string          `json:"artifactId"`
		Description  string          `json:"description"`
		ArtifactData json.RawMessage `json:"artifactData"`
		Questions    []struct {
			ID       string `json:"id"`
			Question string `json:"question"`
		} `json:"questions"`
	}
	// The host validated the payload when it was requested; a member of another type reads as
	// absent.
	_ = json.Unmarshal(o.Raw, &p)
	_ = json.Unmarshal(p.Data, &c.members)
	_ = json.Unmarshal(p.Data, &d)
	c.Title, c.ArtifactType, c.ArtifactID, c.Description, c.ArtifactData = d.Title, d.ArtifactType, d.ArtifactID, d.Description, d.ArtifactData
	c.questions = make(map[string]string, len(d.Questions))
	for _, q := range d.Questions {
		c.questions[q.ID] = q.Question
		c.order = append(c.order, q.ID)
	}
	return c
}

// firstQuestion is the text of a clarification's first question, "" for none.
func (c content) firstQuestion() string {
	if len(c.order) == 0 {
		return ""
	}
	return c.questions[c.order[0]]
}

// question is the text of question id, or its id.
func (c content) question(id string) string { return cmp.Or(c.questions[id], id) }

// heading is the page's title line for o, as it stands: a request while it is pending, what
// became of it once it is not.
func heading(o host.Opened, c content) (kicker, title string) {
	title = c.Title
	if o.Display != nil && o.Display.Title != "" {
		title = o.Display.Title // a question's, which its payload cannot hold
	}
	state := map[interrupt.Status]string{interrupt.StatusResolved: "decided", interrupt.StatusExpired: "expired", interrupt.StatusCancelled: "cancelled"}[o.Status]
	switch o.Payload.Kind {
	case interrupt.KindApproval:
		kicker = "Approval " + cmp.Or(state, "requested")
	case interrupt.KindClarification:
		if o.Status == interrupt.StatusResolved {
			state = "answered"
		}
		kicker = "Questions " + cmp.Or(state, "for you")
		if o.Status == interrupt.StatusPending {
			title = cmp.Or(title, "A run needs your answers")
		}
		title = cmp.Or(title, c.firstQuestion())
	default:
		kicker = string(o.Payload.Kind) + " interrupt"
		if state != "" {
			kicker += ", " + state
		}
	}
	return kicker, cmp.Or(title, "Interrupt at "+o.NodeID)
}

// asker is who asked for o, as the page says it. The name the request gave
// (display.requesterName) comes first, and alone unless the requesting principal reads as a
// person's (words.Personal), which is then shown beside it: "Accounts payable (alice)". Without a
// name, a person's principal is shown as it is, any other principal as "an automated caller",
// and a request of no principal as "the run <id>". A principal reads as a person's when it is
// an email address or letters alone (alice, olga): an engine's principal is its OAuth app
// client's id (interrupt-host-local-engine, Cognito's 26 letters and digits) or an opaque
// subject (a UUID), which names nobody a reader knows.
func asker(o host.Opened) string {
	name := ""
	if o.Display != nil {
		name = strings.TrimSpace(o.Display.RequesterName)
	}
	switch {
	case name != "" && words.Personal(o.RequestedBy):
		return name + " (" + o.RequestedBy + ")"
	case name != "":
		return name
	case o.RequestedBy == "":
		return "the run " + o.RunID
	case words.Personal(o.RequestedBy):
		return o.RequestedBy
	}
	return "an automated caller"
}

// shown are the data members the page shows in places of their own, not among the facts.
var shown = map[string]bool{"title": true, "artifactType": true, "artifactId": true, "description": true, "actions": true, "questions": true, "requiredApprovals": true}

// facts lists what a reader needs to decide: the artifact, where in which run, the deadline, who
// decides and where the count stands, then the rest of the data by label.
func facts(o host.Opened, c content) (fs []Fact, blocks []Block) {
	if !o.RequestedAt.IsZero() {
		// Who asks, and when: the first thing a person wants to know of a request.
		fs = append(fs, Fact{Label: "Asked by", Value: asker(o) + ", " + when(o.RequestedAt)})
	}
	if t := strings.TrimSpace(c.ArtifactType + " " + c.ArtifactID); t != "" {
		fs = append(fs, Fact{Label: "Artifact", Value: t})
	}
	if o.ToolCall != nil && o.ToolCall.Policy != nil {
		// Who decides was the tenant's rule, not the agent's choice: a reader should know.
		fs = append(fs, Fact{Label: "Asked under", Value: o.ToolCall.Policy.Said() + ", the tenant's rule for who decides calls of " + o.ToolCall.Name})
	}

	if !o.Deadline.IsZero() {
		fs = append(fs, Fact{Label: "Decide by", Value: when(o.Deadline)})
	}
	decides := o.CanResolve && o.Refused == nil && o.Status == interrupt.StatusPending
	switch {
	case o.Principal != "" && decides && o.For != nil:
		fs = append(fs, Fact{Label: "Deciding as", Value: o.Principal + ", " + forWhom(o.For)})
	case o.Principal != "" && decides:
		fs = append(fs, Fact{Label: "Deciding as", Value: o.Principal})
	case o.Principal != "":
		fs = append(fs, Fact{Label: "Opened as", Value: o.Principal}) // read-only: nothing here is decided as them
	case decides:
		fs = append(fs, Fact{Label: "Deciding as", Value: "whoever holds this link (you will be asked your name)"})
	}
	if o.Payload.Kind == interrupt.KindApproval {
		t := o.Tally
		fs = append(fs, Fact{Label: "Approvals so far", Value: fmt.Sprintf("%d of %d needed", t.Approvals, t.Required)})
		if t.Rejections > 0 {
			fs = append(fs, Fact{Label: "Rejections so far", Value: fmt.Sprint(t.Rejections)})
		}
		if o.Voted != nil {
			fs = append(fs, Fact{Label: "Your vote", Value: string(o.Voted.Action)})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.members)) {
		if shown[k] || k == "artifactData" {
			continue
		}
		v := c.members[k]
		var s string
		var list []string
		switch {
		case json.Unmarshal(v, &s) == nil:
			fs = append(fs, Fact{Label: webkit.Label(k), Value: s})
		case json.Unmarshal(v, &list) == nil:
			fs = append(fs, Fact{Label: webkit.Label(k), Value: strings.Join(list, ", ")})
		case len(v) > 0 && v[0] != '{' && v[0] != '[':
			fs = append(fs, Fact{Label: webkit.Label(k), Value: string(v)})
		default:
			blocks = append(blocks, Block{webkit.Label(k), webkit.Pretty(v)})
		}
	}
	return fs, blocks
}

// description is what the people asked need to know: the payload's, else the display's (a
// question's, which its payload cannot hold).
func description(o host.Opened, c content) string {
	if c.Description == "" && o.Display != nil {
		return o.Display.Description
	}
	return c.Description
}

// base is the page of o without a decision or a notice.
func base(o host.Opened, c content) View {
	kicker, title := heading(o, c)
	fs, blocks := facts(o, c)
	v := View{
		Status: http.StatusOK, Title: title, Kicker: kicker, Heading: title, Facts: fs, Description: description(o, c), Blocks: blocks, Footer: footer,
		// The engine's names, for whoever must find the request in its logs: in small print.
		Reference: "Run " + o.RunID + " · step " + o.NodeID,
	}
	if data, ok := c.members["artifactData"]; ok {
		if v.Sections = webkit.Sections(data); v.Sections != nil {
			v.Raw = webkit.Pretty(data)
		} else {
			v.Blocks = append(v.Blocks, Block{webkit.Label("artifactData"), webkit.Pretty(data)})
		}
	}
	for _, a := range o.Asked {
		v.Asked = append(v.Asked, Asked{By: a.Principal, When: when(a.At), Question: a.Question})
	}
	v.Call = callOf(o)
	if o.Display != nil && o.Display.ArtifactURL != "" {
		v.Artifact = &Link{URL: o.Display.ArtifactURL, Text: "Open the " + cmp.Or(c.ArtifactType, "artifact")}
	}
	return v
}

// Anonymous reports whether o's link cannot decide: it names nobody, and only named approvers
// may decide the approval (eligibility is read from the caller, and such a link has none).
func Anonymous(o host.Opened) bool { return o.Principal == "" && o.Deciders.Named() }

// AnonymousNotice says why an anonymous link shows no decision.
var AnonymousNotice = &Notice{Text: "Only the approvers named below may decide, and this link does not say who you are. Use the link sent to you personally."}

// Decide is the page of a pending interrupt the link may decide: its forms with a fresh form
// key, and after a mistake the caller's values with what was wrong.
func Decide(o host.Opened, key string, posted url.Values, problem *Notice) View {
	if !o.CanResolve || !Decidable(o.Payload.Kind) || o.Status != interrupt.StatusPending {
		return ReadOnly(o, http.StatusOK, nil)
	}
	c := contentOf(o)
	v := base(o, c)
	switch {
	case o.Voted != nil && o.Voted.Principal != o.Principal:
		v.Notice = &Notice{Text: fmt.Sprintf("%s voted %s for %s, whose place you would fill. The approval waits for the others.", o.Voted.Principal, o.Voted.Action, o.Voted.Slot())}
		return v
	case o.Voted != nil && o.Voted.OnBehalfOf != "":
		v.Notice = &Notice{Text: fmt.Sprintf("You voted %s for %s. The approval waits for the others.", o.Voted.Action, o.Voted.OnBehalfOf)}
		return v
	case o.Voted != nil:
		v.Notice = &Notice{Text: fmt.Sprintf("You voted %s. The approval waits for the others.", o.Voted.Action)}
		return v
	case o.For != nil:
		v.Notice = &Notice{Text: "You decide " + forWhom(o.For) + ": your vote fills their place."}
	}
	if Anonymous(o) {
		v.Notice = AnonymousNotice
		return v
	}
	f := &Form{Key: key, values: posted}
	if o.Payload.Kind == interrupt.KindApproval {
		f.NeedsName = o.Principal == ""
		af := &ApprovalForm{ArtifactType: "document"}
		for _, a := range o.Payload.Data.Actions {
			switch a {
			case interrupt.ActionAccept:
				af.Accept = true
			case interrupt.ActionReject:
				af.Reject = true
			case interrupt.ActionRefine:
				af.Refine = true
			case interrupt.ActionEditAccept:
				// A call that more than one approver approves is approved as asked
				// (host.checkEditedCall): no edit is offered.
				af.EditAccept = o.ToolCall == nil || o.Tally.Required <= 1
			case interrupt.ActionAsk:
				af.Ask = true
			}
		}
		af.ArtifactType = cmp.Or(c.ArtifactType, af.ArtifactType)
		edits := editable(o, c)
		af.Fields = editFields(edits, posted)
		af.Sections, af.Items = refineParts(c.ArtifactData)
		af.Edited = cmp.Or(posted.Get("editedArtifactData"), webkit.Pretty(edits))
		if len(edits) == 0 && posted.Get("editedArtifactData") == "" {
			af.Edited = "{}"
		}
		af.EditsCall = o.ToolCall != nil
		f.Approval = af
	} else {
		f.Questions = questions(o, c, posted)
	}
	v.Form = f
	if problem != nil {
		v.Status, v.Notice = http.StatusBadRequest, problem
	}
	return v
}

// Choose makes v's approval form the confirmation of a decision a mail's Approve or Reject
// button chose (?choice=accept or reject, where the approval offers it): one button that records
// it once clicked, and a way back to every decision. Showing it records nothing: a mail
// scanner that follows the link decides nothing. Any other choice, or a view with no form to
// decide on, is left as it is.
func (v *View) Choose(choice string) {
	if v.Form == nil || v.Form.Approval == nil {
		return
	}
	af := v.Form.Approval
	verb := map[string]string{string(interrupt.ActionAccept): "approve", string(interrupt.ActionReject): "reject"}[choice]
	if verb == "" || (choice == string(interrupt.ActionAccept) && !af.Accept) || (choice == string(interrupt.ActionReject) && !af.Reject) {
		return
	}
	af.Chosen = choice
	if v.Notice == nil {
		v.Notice = &Notice{Text: "You chose to " + verb + " this request. Nothing is recorded until you confirm below."}
	}
}

// Outcome is what became of an interrupt no longer pending, in plain words ("Rejected by bob"),
// and the facts that say it: by whom, when, with what comment, a clarification's answers by
// their questions, and for an approval of several votes, every vote, each once ("alice
// accepted: PO checked"). Empty for a pending interrupt.
func Outcome(o host.Opened) (string, []Fact) {
	var rv struct {
		Action    string                     `json:"action"`
		DecidedBy string                     `json:"decidedBy"`
		DecidedAt string                     `json:"decidedAt"`
		Feedback  string                     `json:"feedback"`
		Answers   map[string]json.RawMessage `json:"answers"`
	}
	var summary string
	var fs []Fact
	switch o.Status {
	case interrupt.StatusResolved:
		_ = json.Unmarshal(o.Outcome, &rv) // a value without these members says less
		summary = "Decided"
		if o.Payload.Kind == interrupt.KindClarification {
			summary = "Answered"
		} else if verb, ok := words.Decided(rv.Action); ok {
			summary = verb
		}
		if by := cmp.Or(o.DecidedBy, rv.DecidedBy); by != "" {
			summary += " by " + by
		}
		fs = append(fs, Fact{Label: "Outcome", Value: summary})
		if o.DecidedBy != "" && rv.DecidedBy != "" && rv.DecidedBy != o.DecidedBy {
			fs = append(fs, Fact{Label: "Named as", Value: rv.DecidedBy})
		}
		if at, err := time.Parse(time.RFC3339, rv.DecidedAt); err == nil {
			fs = append(fs, Fact{Label: cmp.Or(map[bool]string{true: "Answered"}[o.Payload.Kind == interrupt.KindClarification], "Decided"), Value: when(at)})
		}
		if rv.Feedback != "" {
			fs = append(fs, Fact{Label: "Comment", Value: rv.Feedback})
		}
		if o.Payload.Kind == interrupt.KindClarification {
			c := contentOf(o)
			for _, id := range c.order {
				if a, ok := rv.Answers[id]; ok {
					fs = append(fs, Fact{Label: c.question(id), Value: webkit.Cell(a)})
				}
			}
		}
	case interrupt.StatusExpired:
		summary = "Expired without a decision"
		fs = append(fs, Fact{Label: "Outcome", Value: summary})
	case interrupt.StatusCancelled:
		summary = "Cancelled: its run ended"
		fs = append(fs, Fact{Label: "Outcome", Value: summary})
	default:
		return "", nil
	}
	if o.Payload.Kind == interrupt.KindApproval && len(o.Votes) > 1 {
		for _, v := range o.Votes {
			var vv struct {
				Feedback string `json:"feedback"`
			}
			_ = json.Unmarshal(v.ResumeValue, &vv)
			verb, ok := words.Decided(string(v.Action))
			if !ok {
				verb = string(v.Action)
			}
			who := v.Principal
			if v.OnBehalfOf != "" {
				who += ", for " + v.OnBehalfOf
			}
			text := who + " " + strings.ToLower(verb)
			if vv.Feedback != "" {
				text += ": " + vv.Feedback
			}
			fs = append(fs, Fact{Label: "Vote", Value: text})
		}
	}
	return summary, fs
}

// pendingOnly are the facts of a pending request alone (facts).
var pendingOnly = map[string]bool{"Decide by": true, "Approvals so far": true, "Rejections so far": true}

// ReadOnly is the page without a decision: an inspect link, a kind decided elsewhere, or an
// interrupt no longer pending (status then says why, as the token surface would, and the page
// says what became of it).
func ReadOnly(o host.Opened, status int, notice *Notice) View {
	c := contentOf(o)
	v := base(o, c)
	v.Status, v.Notice = status, notice
	if _, fs := Outcome(o); len(fs) > 0 {
		// What only a pending request has (a deadline to meet, a count to reach) gives way to
		// what became of it.
		v.Facts = slices.DeleteFunc(v.Facts, func(f Fact) bool { return pendingOnly[f.Label] })
		v.Facts = append(v.Facts, fs...)
	}
	if v.Notice == nil {
		switch {
		case !o.CanResolve:
			v.Notice = &Notice{Text: "This link lets you read the request, not decide it."}
		case !Decidable(o.Payload.Kind):
			v.Notice = &Notice{Text: "This request is not decided on this page."}
		}
	}
	if o.Payload.Kind == interrupt.KindClarification {
		for _, q := range o.Payload.Data.Questions {
			v.Facts = append(v.Facts, Fact{Label: "Question", Value: c.question(q.ID)})
		}
	}
	return v
}

// Answered is what a clarification's form records, beside an approval's actions (Recorded).
const Answered = "answers"

// Recorded says what the decision a browser just posted on o recorded (action: an approval's
// action, or Answered), as o's state shows it: the vote counted as the page's principal, the
// outcome it decided, the question asked, the answers given. It is nil when the state shows
// no such thing, so a page never claims a decision its log does not hold.
func Recorded(o host.Opened, action string) *Notice {
	var rv struct {
		Action    string `json:"action"`
		DecidedBy string `json:"decidedBy"`
	}
	_ = json.Unmarshal(o.Outcome, &rv) // a value without these members decides nothing here
	decidedIt := o.Status == interrupt.StatusResolved && rv.Action == action && (o.Principal == "" || o.DecidedBy == o.Principal)
	voted := o.Voted != nil && string(o.Voted.Action) == action
	var text string
	switch {
	case o.Payload.Kind == interrupt.KindClarification:
		if action == Answered && o.Status == interrupt.StatusResolved {
			text = "Your answers were recorded. The run goes on."
		}
	case o.Payload.Kind != interrupt.KindApproval:
	case action == string(interrupt.ActionAsk):
		if o.Status == interrupt.StatusPending && slices.ContainsFunc(o.Asked, func(q interrupt.Ask) bool { return o.Principal == "" || q.Principal == o.Principal }) {
			text = "Your question was recorded and is shown to every approver. The approval stays open."
		}
	case decidedIt:
		text = fmt.Sprintf("Your decision (%s) was recorded, and it decided the approval.", action)
	case voted && o.Status == interrupt.StatusPending:
		text = fmt.Sprintf("Your vote (%s) was recorded. The approval waits for the others.", action)
	case voted:
		text = fmt.Sprintf("Your vote (%s) was recorded.", action)
	}
	if text == "" {
		return nil
	}
	return &Notice{Kind: "ok", Text: text}
}

// NotFound is the page of a link whose request does not exist: never was, or no longer is. A
// signed-in page (SignedIn) says too that it may be another tenant's.
func NotFound(status int) View {
	v := Problem(status, "Nothing to decide here", "The request this link names does not exist (any more).")
	v.notFound = true
	return v
}

// Problem is a page that says what went wrong and nothing else: the link is not valid, or
// names nothing.
func Problem(status int, title, detail string) View {
	return View{Status: status, Title: title, Kicker: "Approval link", Heading: title, Notice: &Notice{Kind: "error", Text: detail}, Footer: footer}
}

// Inbox is the page of an approver's inbox: page's items, nearest deadline first, each linking
// its page (relative to /approve, where the inbox is served); later says it is not the first
// page, next is the query of the one after ("" on the last).
func Inbox(page host.InboxPage, later bool, next string, now time.Time) View {
	v := View{Status: http.StatusOK, Title: "Your inbox", Kicker: "Approval inbox", Heading: "What waits for you", Footer: "Opening this page changes nothing."}
	list := &InboxList{Next: next}
	if later {
		list.First = "approve"
	}
	for _, it := range page.Items {
		e := InboxEntry{
			Href: "approve/" + url.PathEscape(it.RunID) + "/" + url.PathEscape(it.InterruptID),
			Kind: kindWords[it.Kind], Title: cmp.Or(it.Title, "A request at step "+it.NodeID), Voted: it.Voted,
		}
		if e.Kind == "" {
			e.Kind = string(it.Kind)
		}
		if at, err := time.Parse(time.RFC3339, it.RequestedAt); err == nil {
			e.Asked = "Asked " + when(at)
		}
		if at, err := time.Parse(time.RFC3339, it.ExpiresAt); err == nil {
			e.Due = "Decide by " + when(at)
			if at.Sub(now) < 48*time.Hour {
				e.Due += " (" + words.Until(at, now) + ")"
			}
		}
		if it.Tally != nil {
			e.Tally = fmt.Sprintf("%d of %d approvals", it.Tally.Approvals, it.Tally.Required)
		}
		list.Items = append(list.Items, e)
	}
	v.Inbox = list
	if len(list.Items) == 0 {
		v.Notice = &Notice{Kind: "ok", Text: "Nothing waits for you. New requests you may decide appear here, and in your mail when your team sends it."}
		if later {
			v.Notice.Text = "Nothing more waits for you."
		}
	}
	return v
}

// kindWords name the kinds of interrupt an inbox lists as people say them.
var kindWords = map[interrupt.Kind]string{
	interrupt.KindApproval: "Approval", interrupt.KindClarification: "Questions",
	interrupt.KindLowConfidence: "Agent decision to check", interrupt.KindConversationExchange: "Conversation",
}

// editable is what "Edit, then accept" edits: the arguments of the call an approval allows (the
// edited data are the call as approved), else the artifact's data.
func editable(o host.Opened, c content) json.RawMessage {
	if o.ToolCall != nil {
		return o.ToolCall.Arguments
	}
	return c.ArtifactData
}

// callOf is the call o allows, as the page shows it; nil for an interrupt that allows none.
func callOf(o host.Opened) *Call {
	tc := o.ToolCall
	if tc == nil {
		return nil
	}
	who := ""
	if o.Display != nil {
		who = o.Display.RequesterName
	}
	call := &Call{Sentence: words.WillCall(who, tc.Name, tc.Arguments).HTML()}
	members, order := webkit.Members(tc.Arguments)
	for _, k := range order {
		call.Arguments = append(call.Arguments, Fact{Label: k, Value: webkit.Cell(members[k])})
	}
	if o.Status == interrupt.StatusResolved {
		if approved := tc.Approved(o.Outcome); approved != nil {
			if asked, _ := interrupt.ArgumentsDigest(tc.Arguments); asked != approved.ArgumentsDigest {
				call.Approved = append(words.Sentence{words.Said("Approved with edits: ")}, words.Call(approved.Name, approved.Arguments)...).HTML()
			}
		}
	}
	return call
}

// forWhom says whose place a delegate decides in: "for alice (away until 14 December)", or
// for a place an escalation handed on, "for alice (the escalation handed you their place)".
func forWhom(d *interrupt.Delegated) string {
	switch {
	case d.Escalated:
		return "for " + d.Delegator + " (the escalation handed you their place)"
	case d.Until.IsZero():
		return "for " + d.Delegator
	}
	return "for " + d.Delegator + " (away until " + d.Until.UTC().Format("2 January") + ")"
}
