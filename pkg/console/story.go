package console

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webkit"
	"github.com/interrupthost/interrupthost/pkg/words"
)

// Names is the name the tenant's contacts give a ref ("Alice Martin"), "" where none does (nil:
// none does). A ref is "principal:alice", "group:finance", "role:manager" or "anyone", as the
// pending list's waitingOn has them. The console says the ref in its own words (say), with
// the name and the ref's own isolated.
type Names func(ref string) string

// say is ref as the console says it: by its contact's name and its own ("Alice Martin (alice)"),
// or without a contact as Plain does; each value isolated (words.Isolated).
func (n Names) say(ref string) string {
	if _, name, ok := Ref(ref); ok && n != nil {
		if contact := n(ref); contact != "" {
			return words.Isolated(contact) + " (" + words.Isolated(name) + ")"
		}
	}
	return Plain(ref)
}

// when spells a time for an operator, in UTC.
func when(t time.Time) string { return t.UTC().Format("Mon 2 Jan 2006, 15:04:05 UTC") }

// kindWords says an interrupt's kind as a person reads it.
func kindWords(k interrupt.Kind) string {
	switch k {
	case interrupt.KindApproval:
		return "approval"
	case interrupt.KindClarification:
		return "question"
	case interrupt.KindExternalEvent:
		return "external event"
	case interrupt.KindLowConfidence:
		return "low-confidence decision"
	}
	return string(k)
}

// statusWords says a run's status as a person reads it: "waits for an approval", "completed";
// one the console does not know as itself.
func statusWords(s interrupt.RunStatus) string {
	switch s {
	case interrupt.RunRunning:
		return "running"
	case interrupt.RunWaitingApproval:
		return "waits for an approval"
	case interrupt.RunWaitingInput:
		return "waits for an answer"
	case interrupt.RunWaitingExternal:
		return "waits for an external event or answer"
	case interrupt.RunCancelled:
		return "cancelled"
	case interrupt.RunCompleted:
		return "completed"
	}
	return string(s)
}

// The kinds the list filters by.
var kinds = []interrupt.Kind{interrupt.KindApproval, interrupt.KindClarification, interrupt.KindExternalEvent, interrupt.KindLowConfidence,
	interrupt.KindCustom, interrupt.KindConversationStart, interrupt.KindConversationExchange, interrupt.KindConversationClose}

// ValidKind reports whether k is a kind the list filters by ("" filters nothing).
func ValidKind(k string) bool { return k == "" || slices.Contains(kinds, interrupt.Kind(k)) }

// HomeParams is what the list of what waits is made of: a page of the tenant's pending list,
// the search and filter it was asked with, and the links to the list's other pages.
type HomeParams struct {
	// Pending is a page of the tenant's pending list, in the list's order.
	Pending []host.PendingInterrupt
	// SearchedRun is the run id searched for (?run=), "" for none; Kind the kind the list is
	// filtered to (?kind=), "" for every kind.
	SearchedRun, Kind string
	// FirstPage and NextPage link the list's first and next pages, "" for none.
	FirstPage, NextPage string
	// Names are the names the tenant's contacts give the refs the page waits on.
	Names Names
	// Now is when the list is shown, for how long ago each was asked and its deadline.
	Now time.Time
}

// HomeOf is the list of what waits, from a page of the tenant's pending list (nearest deadline
// first within it, those without one last, then the longest waiting), filtered to p.Kind.
func HomeOf(in HomeParams) *Home {
	kind, now := in.Kind, in.Now
	h := &Home{Run: in.SearchedRun, Kind: kind, First: in.FirstPage, Next: in.NextPage}
	h.Kinds = append(h.Kinds, Choice{Value: "", Label: "Every kind", Selected: kind == ""})
	for _, k := range kinds {
		h.Kinds = append(h.Kinds, Choice{Value: string(k), Label: kindWords(k), Selected: kind == string(k)})
	}
	rows := slices.DeleteFunc(slices.Clone(in.Pending), func(p host.PendingInterrupt) bool { return kind != "" && string(p.Kind) != kind })
	slices.SortStableFunc(rows, func(a, b host.PendingInterrupt) int {
		switch {
		case a.ExpiresAt == "" && b.ExpiresAt != "":
			return 1
		case a.ExpiresAt != "" && b.ExpiresAt == "":
			return -1
		}
		return cmp.Or(strings.Compare(a.ExpiresAt, b.ExpiresAt), strings.Compare(a.RequestedAt, b.RequestedAt))
	})
	var oldest time.Time
	for _, p := range rows {
		r := Row{RunHref: "console/runs/" + url.PathEscape(p.RunID), RunID: p.RunID, Title: cmp.Or(p.Title, "(no title)"), Kind: kindWords(p.Kind)}
		var who []string
		for _, ref := range p.WaitingOn {
			who = append(who, in.Names.say(ref))
		}
		r.WaitsOn = cmp.Or(strings.Join(who, ", "), "a machine's answer")
		if p.Tally != nil {
			r.Tally = tally(*p.Tally)
		}
		if at, err := time.Parse(time.RFC3339, p.RequestedAt); err == nil {
			if oldest.IsZero() || at.Before(oldest) {
				oldest = at
			}
			r.Requested = ago(at, now)
		}
		if p.RequestedBy != "" {
			r.Requested += " by " + author(p.RequestedBy)
		}
		if at, err := time.Parse(time.RFC3339, p.ExpiresAt); err == nil {
			r.Deadline = when(at) + " (" + words.Until(at, now) + ")"
			r.Late = late(at, now)
		}
		h.Rows = append(h.Rows, r)
	}
	switch n := len(h.Rows); {
	case n == 0 && in.SearchedRun != "":
		h.Summary = "Run " + in.SearchedRun + " waits on nothing now (or there is no such run)."
		h.Elsewhere = "console/runs?q=" + url.QueryEscape(in.SearchedRun)
	case n == 0 && in.NextPage == "":
		h.Summary = "Nothing waits."
	case n == 0:
		h.Summary = "Nothing on this page waits; the next page may hold more."
	default:
		h.Summary = fmt.Sprintf("%d waiting on this page; the oldest was requested %s.", n, ago(oldest, now))
		if in.NextPage != "" {
			h.Summary += " More are on the next page."
		}
	}
	return h
}

// late reports whether a deadline is urgent: passed, or within the hour. Only such a deadline
// is shown as urgent; any later one is plain ("in 3 days").
func late(deadline, now time.Time) bool { return deadline.Sub(now) < time.Hour }

// ago says how long before now at was: "3 minutes ago", "2 days ago", "just now".
func ago(at, now time.Time) string {
	w := words.Until(now, at) // how far now is past at, as words says a wait: "in 3 minutes"
	switch w {
	case "now", "passed":
		return "just now"
	}
	return strings.TrimPrefix(w, "in ") + " ago"
}

// tally says an approval's count: "1 of 2 approvals, 1 rejection".
func tally(t interrupt.Tally) string {
	s := fmt.Sprintf("%d of %d approvals", t.Approvals, t.Required)
	switch t.Rejections {
	case 0:
	case 1:
		s += ", 1 rejection"
	default:
		s += fmt.Sprintf(", %d rejections", t.Rejections)
	}
	return s
}

// RunParams is what a run's page is made of: a page of its story, the deliveries of its events,
// the links to the story's other pages, and the session's CSRF value for its forms.
type RunParams struct {
	// Story is a page of the run's story (host.Story).
	Story host.Story
	// Deliveries are each subscription's recent deliveries of the run's events (Deliveries).
	Deliveries []Subscription
	// EarlierPage and LaterPage link the story's pages before and after this one, "" for none.
	EarlierPage, LaterPage string
	// CSRF is the session's CSRF value, which the page's forms carry.
	CSRF string
	// Names are the names the tenant's contacts give the refs the run waits on.
	Names Names
	// Now is when the page is shown, for how long ago each was asked and its deadline.
	Now time.Time
}

// RunOf is a run's page from its story, the subscriptions' deliveries of its events, and the
// session's CSRF value for its forms.
func RunOf(in RunParams) *Run {
	s, now := in.Story, in.Now
	r := &Run{ID: s.RunID, Status: statusWords(s.Status), Deliveries: in.Deliveries, CSRF: in.CSRF, Earlier: in.EarlierPage, Later: in.LaterPage,
		Ended: s.Status == interrupt.RunCancelled || s.Status == interrupt.RunCompleted}
	for _, w := range s.Waiting {
		v := Waiting{Kind: kindWords(w.Kind), Step: w.NodeID, Title: cmp.Or(w.Title, runlog.Title(w.Raw), "Interrupt at "+w.NodeID),
			PageHref: "../../approve/" + url.PathEscape(s.RunID) + "/" + url.PathEscape(w.InterruptID)}
		if w.Tally != nil {
			v.Tally = tally(*w.Tally)
		}
		var who []string
		for _, ref := range w.Undecided {
			who = append(who, in.Names.say(ref.Kind+":"+ref.Ref))
		}
		v.WaitsOn = cmp.Or(strings.Join(who, ", "), "a machine's answer")
		v.Requested = ago(w.RequestedAt, now)
		if w.RequestedBy != "" {
			v.Requested += " by " + author(w.RequestedBy)
		}
		if !w.Deadline.IsZero() {
			v.Deadline = when(w.Deadline) + " (" + words.Until(w.Deadline, now) + ")"
			v.Late = late(w.Deadline, now)
		}
		for _, vote := range w.Votes {
			line := voter(vote) + " voted " + string(vote.Action)
			if f := feedbackOf(vote.ResumeValue); f != "" {
				line += ": “" + words.Isolated(f) + "”"
			}
			v.Votes = append(v.Votes, line)
		}
		r.Waiting = append(r.Waiting, v)
	}
	for _, ch := range s.Chapters {
		r.Story = append(r.Story, lines(ch)...)
	}
	return r
}

// Deliveries are a subscription's attempts of the run's events, newest first, as its page lists
// them; none when it delivered none of them.
func Deliveries(s outbound.Subscription, attempts []outbound.Attempt, runID string) Subscription {
	out := Subscription{ID: s.ID, Target: target(s), Format: s.Format}
	for _, a := range attempts {
		if a.RunID != runID {
			continue
		}
		v := Attempt{EventID: a.EventID, EventType: a.EventType, Status: a.Status, When: when(a.At), Attempts: a.Attempts, Resent: a.Resent,
			Failed: a.Status != outbound.StatusDelivered}
		// What went wrong: a receiver's status that is not a success (a 2xx is none) and the last
		// error of an attempt that failed; a delivered one's names unreached or refused.
		var detail []string
		if a.StatusCode != 0 && (a.StatusCode < 200 || a.StatusCode > 299) {
			detail = append(detail, "HTTP "+strconv.Itoa(a.StatusCode))
		}
		if a.LastError != "" && v.Failed {
			detail = append(detail, a.LastError)
		}
		detail = append(detail, a.Unreached...)
		detail = append(detail, a.Refused...)
		v.Detail = strings.Join(detail, "; ")
		out.Attempts = append(out.Attempts, v)
	}
	return out
}

// target says where a subscription delivers, by its format: an email subscription mails the
// people asked; any other names its receiver by its URL's scheme and host only (a Slack
// incoming webhook's URL is its credential; a URL's user, path and query are not shown), and
// as "a receiver" when its URL has no scheme or no host to name it by.
func target(s outbound.Subscription) string {
	if s.Format == outbound.FormatEmail {
		return "mail to the people asked"
	}
	if u, err := url.Parse(s.URL); err == nil && u.Scheme != "" && u.Host != "" {
		return u.Scheme + "://" + u.Host
	}
	return "a receiver"
}

// feedbackOf is a resume value's comment (an approval's feedback).
func feedbackOf(value json.RawMessage) string {
	var v struct {
		Feedback string `json:"feedback"`
	}
	_ = json.Unmarshal(value, &v)
	return v.Feedback
}

// author says who made a commit or asked for an interrupt: a principal (isolated,
// words.Isolated), a signed link's holder (a token's "token:<jti>"), or the host.
func author(by string) string {
	switch {
	case by == "":
		return "the host"
	case strings.HasPrefix(by, "token:"):
		return "a signed link's holder"
	}
	return words.Isolated(by)
}

// aliases are the legacy event types that repeat interrupt.requested and interrupt.resolved:
// the story tells each once.
var aliases = []string{"approval.requested", "approval.resolved", "clarification.requested", "clarification.resolved"}

// lines are a commit's events in words.
func lines(ch host.Chapter) []Line {
	var out []Line
	who := author(ch.By)
	// Each sentence below is the console's words with the values a run holds inserted: each
	// such value (a title, a principal, an agent's or a tool's name) isolated, words.Isolated.
	// Ids (a step's) are runlog.ValidID, of no directional control; a quote stands alone in
	// its own block (a blockquote), as a title does in its heading.
	for _, e := range ch.Events {
		if slices.Contains(aliases, e.Type) {
			continue
		}
		l := Line{When: when(ch.At), Who: who, Anchor: fmt.Sprintf("seq-%d-%d", e.Seq, e.Index), JSON: webkit.Pretty(e.Payload)}
		switch e.Type {
		case interrupt.EventRequested:
			var p struct {
				Kind      interrupt.Kind  `json:"kind"`
				TimeoutMs int64           `json:"timeoutMs"`
				Data      json.RawMessage `json:"data"`
			}
			_ = json.Unmarshal(e.Payload, &p)
			l.Text = fmt.Sprintf("asked for %s %s at step %s", article(kindWords(p.Kind)), kindWords(p.Kind), e.NodeID)
			switch p.Kind {
			case interrupt.KindClarification:
				l.Text = "asked a question at step " + e.NodeID
			case interrupt.KindExternalEvent:
				l.Text = "began waiting for an external event at step " + e.NodeID
			}
			if t := cmp.Or(ch.Titles[e.InterruptID], runlog.Title(e.Payload)); t != "" {
				l.Text += ": “" + words.Isolated(t) + "”"
			}
			if call := ch.Calls[e.InterruptID]; call != nil && call.Policy != nil {
				l.Text += ", under " + call.Policy.Said() + " (the tenant's rule for who decides calls of " + words.Isolated(call.Name) + ")"
			}
			if p.TimeoutMs > 0 {
				l.Text += ", to be decided by " + when(ch.At.Add(time.Duration(p.TimeoutMs)*time.Millisecond))
			}
			var data struct {
				ArtifactData json.RawMessage `json:"artifactData"`
			}
			_ = json.Unmarshal(p.Data, &data)
			if len(data.ArtifactData) == 0 {
				data.ArtifactData = p.Data
			}
			l.Sections = webkit.Sections(data.ArtifactData)
		case interrupt.EventVoted:
			var v interrupt.Vote
			_ = json.Unmarshal(e.Payload, &v)
			l.Who = voter(v)
			l.Text = fmt.Sprintf("voted %s (%s)", v.Action, tally(v.Tally))
			l.Quote = feedbackOf(v.ResumeValue)
			if v.Standing != nil {
				l.Text, l.Quote = "approved the call at once, no person asked: it matched the policy's standing approval", v.Standing.Description
			}
		case interrupt.EventAsked:
			var a interrupt.Asked
			_ = json.Unmarshal(e.Payload, &a)
			l.Who, l.Text, l.Quote = words.Isolated(a.Principal), "asked a question", feedbackOf(a.ResumeValue)
		case interrupt.EventResolved:
			var r interrupt.Resolved
			_ = json.Unmarshal(e.Payload, &r)
			var v struct {
				Action string `json:"action"`
			}
			_ = json.Unmarshal(r.ResumeValue, &v)
			l.Text = "resolved the " + kindWords(r.Kind) + " at step " + e.NodeID
			if d, ok := words.Decided(v.Action); ok {
				l.Text = "decided the approval at step " + e.NodeID + ": " + strings.ToLower(d[:1]) + d[1:]
			} else if r.Kind == interrupt.KindClarification {
				l.Text = "answered the question at step " + e.NodeID
			}
			l.Quote = feedbackOf(r.ResumeValue)
		case interrupt.EventExpired:
			var x interrupt.Expired
			_ = json.Unmarshal(e.Payload, &x)
			l.Text = "recorded that step " + e.NodeID + " expired: its deadline " + x.Deadline + " passed without a decision"
		case interrupt.EventReminded:
			var r interrupt.Reminded
			_ = json.Unmarshal(e.Payload, &r)
			l.Text = fmt.Sprintf("sent reminder %d for step %s to %s", r.Reminder, e.NodeID, refs(r.Recipients))
		case interrupt.EventEscalated:
			var x interrupt.Escalated
			_ = json.Unmarshal(e.Payload, &x)
			l.Text = fmt.Sprintf("escalated step %s to %s", e.NodeID, refs(x.To))
			for _, h := range x.Handed {
				l.Text += fmt.Sprintf("; %s decides for %s", words.Isolated(h.To), words.Isolated(h.Principal))
			}
		case interrupt.EventRunCancelled, interrupt.EventRunCompleted:
			var x interrupt.Ended
			_ = json.Unmarshal(e.Payload, &x)
			l.Who = author(cmp.Or(x.By, ch.By))
			l.Text = map[string]string{interrupt.EventRunCancelled: "cancelled the run", interrupt.EventRunCompleted: "completed the run"}[e.Type]
			l.Quote = x.Reason
		case interrupt.EventAgentDecided:
			var d interrupt.AgentDecided
			_ = json.Unmarshal(e.Payload, &d)
			l.Text = fmt.Sprintf("recorded agent %s's decision, %.2f confident against a threshold of %.2f", words.Isolated(d.AgentID), d.Confidence, d.Threshold)
		case interrupt.EventNodeSuspended:
			var n interrupt.Suspended
			_ = json.Unmarshal(e.Payload, &n)
			l.Text = "suspended step " + n.NodeID + " (" + n.Reason + ")"
		case interrupt.EventRunConfigured:
			var c interrupt.Configured
			_ = json.Unmarshal(e.Payload, &c)
			l.Text = fmt.Sprintf("set the run's escalation threshold to %.2f", c.EscalationThreshold)
		case interrupt.EventReceiptRedeemed:
			var r interrupt.Redeemed
			_ = json.Unmarshal(e.Payload, &r)
			l.Who, l.Text = author(cmp.Or(r.By, ch.By)), "redeemed the receipt of the approved call "+words.Isolated(r.Name)+" at step "+e.NodeID
		default:
			l.Text = "recorded " + e.Type
		}
		out = append(out, l)
	}
	return out
}

// refs says refs as a list: "principal bob, group finance", each ref's name isolated.
func refs(rs []interrupt.Ref) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Kind+" "+words.Isolated(r.Ref))
	}
	return cmp.Or(strings.Join(out, ", "), "no one")
}

// article is the indefinite article before word.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// Plain says a ref without a contact: a principal by its name ("alice"), a group or role with
// its kind ("group finance"), anyone as "anyone"; the name isolated (words.Isolated), and what
// is no ref isolated whole.
func Plain(ref string) string {
	kind, name, ok := Ref(ref)
	switch {
	case ref == interrupt.Anyone:
		return ref
	case !ok || !slices.Contains(interrupt.DefaultRefKinds, kind):
		return words.Isolated(ref)
	case kind == interrupt.RefPrincipal:
		return words.Isolated(name)
	}
	return kind + " " + words.Isolated(name)
}

// Ref is a waitingOn ref as its kind and name ("group:finance"), for looking its contact up.
func Ref(s string) (kind, name string, ok bool) {
	kind, name, ok = strings.Cut(s, ":")
	return kind, name, ok && name != ""
}

// voter is who cast v, as the story names them: "bob, for alice" where a delegate cast it in
// their delegator's place.
func voter(v interrupt.Vote) string {
	if v.OnBehalfOf != "" {
		return words.Isolated(v.Principal) + ", for " + words.Isolated(v.OnBehalfOf)
	}
	return words.Isolated(v.Principal)
}
